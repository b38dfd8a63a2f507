"""Domains, views and DIY templates as validated objects: ``validation`` (schema and
cross-checks, ``extends``) -> ``build`` (validated YAML -> model objects) -> ``load``
(find + validate + build); ``starter`` writes ``kgkit domain new``'s commented files.
"""
