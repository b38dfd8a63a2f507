"""kgkit's file formats: the model objects a domain, view or template becomes (``model``),
safe YAML with line/column marks (``yaml_source``), the published JSON Schemas (kept in
``kgkit/schemas/`` because users' ``$schema`` lines name that path; ``json_schemas``) and
where a name's file is (``search_path``).
"""
