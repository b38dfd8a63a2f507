"""What stands between user input and the machine: regexes with a time budget, user-named
files that must be regular, keys never echoed, writes that are all or nothing.
"""
