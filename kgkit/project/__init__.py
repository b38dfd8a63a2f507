"""A kgkit project's files taken together: ``check`` validates any of them (domain, view,
template, config, gold) behind ``kgkit validate``, so it sits above every kind's loader.
"""
