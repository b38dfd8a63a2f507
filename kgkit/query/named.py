"""Named queries: an analyst's questions declared in a domain's YAML, so they are files,
not code. Each has a pattern (kgkit/formats/query_pattern.py) whose ``$name`` placeholders are
typed parameters; ``kgkit domain validate`` checks them like the rest of the file
(kgkit/catalog/queries.py), and running one checks the values given.

    queries:
      - name: governed_by
        description: Contracts governed by the law of a jurisdiction.
        pattern: 'Agreement -GOVERNING_LAW-> Jurisdiction{name: $jurisdiction}'
        params: [{name: jurisdiction, type: string}]
        returns: documents
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterator

from kgkit.text import timex
from kgkit.errors import InputError, NotFoundError, did_you_mean

RETURNS = ("documents", "nodes", "rows")


@dataclass(frozen=True)
class NamedQuery:
    name: str
    pattern: str
    params: tuple[tuple[str, str], ...] = ()  # (name, type)
    description: str = ""
    returns: str = "rows"
    select: int = 0

    def bind(self, given: dict[str, Any]) -> dict[str, str]:
        """The parameter values, checked against their declared types."""
        declared = dict(self.params)
        for name in given:
            if name not in declared:
                hint = did_you_mean(name, declared) or f"parameters: {', '.join(declared) or 'none'}"
                raise InputError(f"query {self.name!r} has no parameter {name!r}", hint=hint)
        out = {}
        for name, kind in self.params:
            if name not in given:
                raise InputError(f"query {self.name!r} needs parameter {name!r} ({kind})",
                                 hint=f"pass --param {name}=VALUE")
            out[name] = _typed(self.name, name, kind, given[name])
        return out


def _typed(query: str, name: str, kind: str, value: Any) -> str:
    text = str(value).strip()
    if kind == "number":
        try:
            float(text)
        except ValueError:
            raise InputError(f"query {query!r}: parameter {name!r} must be a number, not {text!r}") from None
    elif kind == "year":
        if not (text.isdigit() and len(text) == 4):
            raise InputError(f"query {query!r}: parameter {name!r} must be a year (e.g. 2019), not {text!r}")
    elif kind == "date" and timex.parse_or_none(text) is None:
        raise InputError(f"query {query!r}: parameter {name!r} must be an ISO date (e.g. 2019-06-30), not {text!r}")
    return text


def from_data(data: dict[str, Any]) -> NamedQuery:
    return NamedQuery(name=data["name"], pattern=data["pattern"],
                      params=tuple((p["name"], p.get("type", "string")) for p in data.get("params") or ()),
                      description=data.get("description", ""), returns=data.get("returns", "rows"),
                      select=int(data.get("select", 0)))


def domain_queries(domain_ref: str) -> dict[str, NamedQuery]:
    """The named queries a domain (name or path) declares, validated with the domain."""
    from kgkit.formats.search_path import find
    from kgkit.catalog.validation import resolve_domain

    resolved = resolve_domain(find("domains", domain_ref))
    return {q["name"]: from_data(q) for q in resolved.merged.get("queries") or []}


def lookup(queries: dict[str, NamedQuery], name: str, domain: str) -> NamedQuery:
    if name not in queries:
        hint = did_you_mean(name, queries) or f"named queries: {', '.join(sorted(queries)) or 'none'}"
        raise NotFoundError(f"no named query {name!r} in domain {domain!r}", hint=hint)
    return queries[name]
