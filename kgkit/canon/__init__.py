"""The merge of a document's entity mentions into its node set: ``merge`` (the stages, in
order), ``names`` (what the text says a name also is), ``fuzzy`` (blocking and clusters
within a type), ``records`` (mention, node, merge record) and ``result`` (resolving a name
against the nodes).
"""
