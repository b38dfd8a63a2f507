"""The skill loop: rollouts, diagnosis, vetting and the library's next version
(``skills/`` is the artefact it writes; this package runs extraction and eval to write it).
"""
