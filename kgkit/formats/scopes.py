"""How far an entity type's identity reaches: across the corpus, within one document, or
not at all (a value).

* ``corpus``: a real-world entity (a company, a person, a state); the corpus graph merges
  its nodes across documents by the resolution cascade. The default for named types.
* ``document``: one node per document, never merged with another document's: a defined
  term ("the Company" names a different party in every contract) and the document itself
  (a domain's ``document_type``).
* ``value``: a literal with a normalised value (a date, a duration, an amount, a
  percentage): it describes the item it hangs on, so it is never a bridge between
  documents, and exports write it as a property of its edge unless asked for nodes.

The run folder records each node's scope (``nodes.json``), so the store needs no domain.
"""
from __future__ import annotations

from typing import Iterable

from kgkit.formats.model import Domain, EntityType
from kgkit.text.type_kinds import LITERAL_KINDS, generic_type_map

SCOPES = ("corpus", "document", "value")


def entity_scopes(domain: Domain | None, types: Iterable[EntityType] = ()) -> dict[str, str]:
    """Entity type name -> its scope: as declared, else ``document`` for the domain's
    ``document_type`` and its defined-term type, ``value`` for its literal types, else
    ``corpus``."""
    declared = tuple(domain.entity_types if domain is not None else ()) + tuple(types)
    kinds = generic_type_map(declared)
    by_kind = {name: kind for kind, name in kinds.items()}
    out: dict[str, str] = {}
    for t in declared:
        if t.scope:
            out[t.name] = t.scope
        elif domain is not None and t.name == domain.document_type:
            out[t.name] = "document"
        elif by_kind.get(t.name) in LITERAL_KINDS:
            out[t.name] = "value"
        elif by_kind.get(t.name) == "defined_term":
            out[t.name] = "document"
        else:
            out[t.name] = "corpus"
    return out
