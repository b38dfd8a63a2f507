"""The test suite's support modules: the stub provider, fixtures and their data, the shared-data
finder and its guard. Tests import them as ``support.<module>`` (``tests/`` is on the path).
"""
