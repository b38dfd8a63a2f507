"""The skill library of a domain: readable, diffable YAML under ``skill_library/<domain>/``.

Layout::

    skill_library/<domain>/library.yaml        # domain, version, changelog (one entry per learn run that changed it)
    skill_library/<domain>/skills/<id>.yaml    # one skill per file (format: docs/skills.md)

One file per skill keeps ``git diff`` readable and makes ``kgkit skills remove`` a file
deletion. Everything is written in a fixed key order with sorted lists, and dates come
from ``SOURCE_DATE_EPOCH`` when set (the reproducible-builds convention) or today, and
are only stamped on skills that actually change — so relearning on the same gold with
the same seed rewrites nothing.
"""
from __future__ import annotations

import copy
import datetime as _dt
import hashlib
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from kgkit.errors import Issue, NotFoundError, ValidationError

KINDS = ("relation", "entity")
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml when present: libraries grow to hundreds of files
LABELS = ("stable", "unstable", "miss")
SKILL_KEYS = ("id", "version", "kind", "target", "pattern", "instruction", "example", "provenance", "support",
              "created", "updated")
# dev relation F1 gained when the gate last accepted a change to the skill; and, per phrase or regex,
# the gain the change that brought it in was accepted with (a skill several cues joined: each its own)
OPTIONAL_KEYS = ("dev_gain", "cue_gains")


def today() -> str:
    """The date stamped on changed skills: SOURCE_DATE_EPOCH if set, else today (UTC)."""
    epoch = os.environ.get("SOURCE_DATE_EPOCH")
    moment = _dt.datetime.fromtimestamp(int(epoch), _dt.timezone.utc) if epoch else _dt.datetime.now(_dt.timezone.utc)
    return moment.date().isoformat()


def pattern_tokens(pattern: dict[str, Any]) -> frozenset[str]:
    """The tokens the controller compares: lower-cased words of the phrases, and each regex whole."""
    tokens = {w for p in pattern.get("phrases", ()) for w in re.findall(r"\w+", p.lower())}
    tokens.update("re:" + r for r in pattern.get("regex", ()))
    return frozenset(tokens)


def skill_id(kind: str, target: str, pattern: dict[str, Any]) -> str:
    """Stable id: hash of kind, target and the sorted pattern tokens at creation."""
    material = "\x1f".join([kind, target, *sorted(pattern_tokens(pattern))])
    return "sk_" + hashlib.sha256(material.encode("utf-8")).hexdigest()[:12]


def normalise_pattern(pattern: dict[str, Any]) -> dict[str, list[str]]:
    """Lower-cased, de-duplicated, sorted phrases and regexes: one spelling for one pattern."""
    phrases = sorted({" ".join(p.lower().split()) for p in pattern.get("phrases", ()) if p.strip()})
    return {"phrases": phrases, "regex": sorted(set(pattern.get("regex", ())))}


def support_of(provenance: list[dict[str, Any]]) -> dict[str, int]:
    """Support counts from provenance, so re-recording the same evidence never inflates them."""
    return {label: sum(1 for p in provenance if p.get("label") == label) for label in LABELS}


def provenance_key(p: dict[str, Any]) -> tuple:
    return (p.get("doc", ""), tuple(p.get("edge", ())), p.get("label", ""))


def merge_provenance(a: list[dict[str, Any]], b: list[dict[str, Any]]) -> list[dict[str, Any]]:
    seen = {provenance_key(p): p for p in a}
    for p in b:
        seen.setdefault(provenance_key(p), p)
    return [seen[k] for k in sorted(seen)]


def make_skill(kind: str, target: str, pattern: dict[str, Any], instruction: str, example: str,
               provenance: list[dict[str, Any]], date: str) -> dict[str, Any]:
    pattern = normalise_pattern(pattern)
    prov = merge_provenance([], provenance)
    return {"id": skill_id(kind, target, pattern), "version": 1, "kind": kind, "target": target, "pattern": pattern,
            "instruction": instruction, "example": example, "provenance": prov, "support": support_of(prov),
            "created": date, "updated": date}


@dataclass
class Library:
    """A domain's skills in memory; ``load``/``save`` map it to the folder layout above."""

    domain: str
    skills: dict[str, dict[str, Any]] = field(default_factory=dict)  # id -> skill
    version: int = 0
    changelog: list[dict[str, Any]] = field(default_factory=list)
    # candidates the acceptance gate turned down, as {"skill", "doc", "edge"}: a relearn on the
    # same gold does not try them again, which is what makes learning reach a fixed point
    rejected: list[dict[str, Any]] = field(default_factory=list)
    # literal names (not skills): {"id", "name", "type", "provenance", "dev_gain"}, capped per domain
    gazetteer: list[dict[str, Any]] = field(default_factory=list)

    def copy(self) -> "Library":
        return copy.deepcopy(self)

    def sorted_skills(self) -> list[dict[str, Any]]:
        return [self.skills[k] for k in sorted(self.skills)]

    def get(self, ref: str) -> dict[str, Any]:
        """A skill by id or unique id prefix; NotFoundError lists the ids otherwise."""
        if ref in self.skills:
            return self.skills[ref]
        hits = [k for k in self.skills if k.startswith(ref)]
        if len(hits) == 1:
            return self.skills[hits[0]]
        listing = ", ".join(sorted(self.skills)) or "none"
        raise NotFoundError(f"no skill {ref!r} in the {self.domain} library" + (" (ambiguous prefix)" if hits else "")
                            + f"; skills: {listing}")

    def learned_edges(self) -> set[tuple[str, tuple[str, ...]]]:
        """(doc, edge) pairs the library already holds a decision on: in a skill's provenance or rejected."""
        seen = {(p["doc"], tuple(p["edge"])) for s in [*self.skills.values(), *self.gazetteer] for p in s["provenance"]}
        return seen | {(r["doc"], tuple(r["edge"])) for r in self.rejected}


def user_library_root() -> Path:
    """The user's library: ``$KGKIT_DATA_DIR/skill_library``, else the platform's user data directory's."""
    env = os.environ.get("KGKIT_DATA_DIR")
    if env:
        return Path(env).expanduser() / "skill_library"
    import platformdirs

    return Path(platformdirs.user_data_dir("kgkit")) / "skill_library"


def library_roots(library_dir: str | Path | None = None) -> list[Path]:
    """Where libraries are read, first match wins: ``library_dir`` alone when given; else
    ``./skill_library`` when present, then the user's library (:func:`user_library_root`),
    so a domain's learned skills apply from any folder."""
    if library_dir is not None:
        return [Path(library_dir)]
    project = Path.cwd() / "skill_library"
    return ([project] if project.is_dir() else []) + [user_library_root()]


def library_root(library_dir: str | Path | None = None) -> Path:
    """The first root of :func:`library_roots` (where a new library would be looked for first)."""
    return library_roots(library_dir)[0]


def writable_root(library_dir: str | Path | None = None) -> Path:
    """Where ``kgkit skills learn`` writes: ``library_dir``; else ``./skill_library`` when
    present; else the user's library."""
    return library_root(library_dir)


def domain_dir(domain: str, library_dir: str | Path | None = None) -> Path:
    """``<root>/<domain>`` of the first root that holds the domain (else of the first root)."""
    roots = library_roots(library_dir)
    return next((r / domain for r in roots if (r / domain).is_dir()), roots[0] / domain)


def known_domains(library_dir: str | Path | None = None) -> list[str]:
    """Domains with a library under any root."""
    return sorted({p.name for r in library_roots(library_dir) if r.is_dir() for p in r.iterdir()
                   if (p / "library.yaml").is_file() or (p / "skills").is_dir()})


def require_domain(domain: str, library_dir: str | Path | None = None) -> None:
    """NotFoundError unless ``domain`` is a declared domain (search path) or has a library.

    So ``kgkit skills list acme`` with a typo says so, instead of listing an empty library.
    """
    from kgkit.formats.search_path import available

    known = set(available("domains")) | set(known_domains(library_dir))
    if domain not in known:
        import difflib

        close = difflib.get_close_matches(domain, sorted(known), n=3)
        raise NotFoundError(f"unknown domain {domain!r}" + (f"; did you mean {', '.join(close)}?" if close else ""),
                            hint="domains: " + (", ".join(sorted(known)) or "none")
                            + "; libraries are read from: " + ", ".join(map(str, library_roots(library_dir))))


def load_library(domain: str, library_dir: str | Path | None = None) -> Library:
    """Read ``<library_dir>/<domain>/``; an absent folder is an empty library (version 0)."""
    folder = domain_dir(domain, library_dir)
    lib = Library(domain)
    meta_path = folder / "library.yaml"
    if meta_path.is_file():
        meta = _read(meta_path)
        lib.version = int(meta.get("version", 0))
        lib.changelog = list(meta.get("changelog") or [])
        lib.rejected = list(meta.get("rejected") or [])
        lib.gazetteer = list(meta.get("gazetteer") or [])
    issues: list[Issue] = []
    for path in sorted((folder / "skills").glob("*.yaml")) if (folder / "skills").is_dir() else []:
        skill = _read(path)
        missing = [k for k in SKILL_KEYS if k not in skill]
        if missing:
            issues.append(Issue(str(path), None, None, (), f"skill is missing {', '.join(missing)}"))
            continue
        if skill["kind"] not in KINDS:
            issues.append(Issue(str(path), None, None, ("kind",), f"kind must be one of {', '.join(KINDS)}"))
            continue
        skill["pattern"] = normalise_pattern(skill["pattern"] or {})
        skill["created"], skill["updated"] = str(skill["created"]), str(skill["updated"])
        lib.skills[skill["id"]] = skill
    if issues:
        raise ValidationError(issues)
    return lib


def _read(path: Path) -> dict[str, Any]:
    try:
        data = yaml.load(path.read_text(encoding="utf-8"), Loader=_LOADER)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        raise ValidationError([Issue(str(path), mark.line + 1 if mark else None, mark.column + 1 if mark else None,
                                     (), f"not valid YAML: {getattr(exc, 'problem', exc)}")]) from exc
    if not isinstance(data, dict):
        raise ValidationError([Issue(str(path), None, None, (), "expected a mapping at the top level")])
    return data


def dump_skill(skill: dict[str, Any]) -> str:
    ordered = {k: skill[k] for k in (*SKILL_KEYS, *OPTIONAL_KEYS) if k in skill}
    return yaml.safe_dump(ordered, sort_keys=False, allow_unicode=True, width=100)


def save_library(lib: Library, library_dir: str | Path | None = None) -> Path:
    """Write the library: one file per skill, stale skill files removed, library.yaml last.

    Without ``library_dir``: where the domain's library was found, else :func:`writable_root`.
    """
    folder = writable_root(library_dir) / lib.domain if library_dir is not None else domain_dir(lib.domain)
    skills_dir = folder / "skills"
    skills_dir.mkdir(parents=True, exist_ok=True)
    for stale in skills_dir.glob("*.yaml"):
        if stale.stem not in lib.skills:
            stale.unlink()
    for sid, skill in lib.skills.items():
        _write_if_changed(skills_dir / f"{sid}.yaml", dump_skill(skill))
    meta = {"domain": lib.domain, "version": lib.version, "changelog": lib.changelog, "rejected": lib.rejected,
            "gazetteer": lib.gazetteer}
    _write_if_changed(folder / "library.yaml", yaml.safe_dump(meta, sort_keys=False, allow_unicode=True, width=100))
    return folder


def _write_if_changed(path: Path, text: str) -> None:
    """Atomic write, skipped when the content is already there (no mtime churn in the repo)."""
    from kgkit.guards.atomic import atomic_write

    if not (path.is_file() and path.read_text(encoding="utf-8") == text):
        atomic_write(path, text)


def diff_libraries(old: Library, new: Library) -> list[str]:
    """Human-readable differences between two libraries: added, removed and changed skills."""
    import difflib

    lines: list[str] = []
    for sid in sorted(set(old.skills) | set(new.skills)):
        a, b = old.skills.get(sid), new.skills.get(sid)
        if a == b:
            continue
        if a is None:
            assert b is not None  # a != b
            lines.append(f"+ {sid} {b['kind']} {b['target']}: {', '.join(b['pattern']['phrases'] + b['pattern']['regex'])}")
        elif b is None:
            lines.append(f"- {sid} {a['kind']} {a['target']}")
        else:
            assert a is not None
            lines.append(f"~ {sid} v{a['version']} -> v{b['version']}")
            lines.extend("    " + d for d in difflib.unified_diff(
                dump_skill(a).splitlines(), dump_skill(b).splitlines(), lineterm="", n=0) if not d.startswith(("---", "+++", "@@")))
    return lines
