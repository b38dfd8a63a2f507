"""The text rules every layer shares: name keys, type kinds, literals and time values,
sentences, phrase search, evidence quotes, the fuzzy-name index. No I/O, no config.
"""
