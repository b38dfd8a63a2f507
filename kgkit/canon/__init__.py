"""The merge of a document's entities: canonical names, aliases, fuzzy merge with blocking.
"""
