"""The declarative schema layer: domains, views and DIY templates as validated YAML.

Read in order of dependence: ``yaml_source`` (safe YAML with line/column marks) ->
``json_schemas`` (the published JSON Schemas, kept in ``kgkit/schemas/`` because users'
``$schema`` lines name that path) -> ``search_path`` (where a name's file is) ->
``validation`` (schema and cross-checks, ``extends``) -> ``files`` (validated YAML ->
``model`` objects) -> ``catalog`` (find + validate + build). ``check`` validates any kgkit
file, its kind found from the file (``kgkit validate``); ``starter`` writes the commented
starter files of ``kgkit domain new``.
"""
