"""A vault read from disk: its notes parsed, every link resolved, its index sections and files.

The scan reads only regular files inside the vault folder. It never follows a symbolic
link (one that points outside is reported by name and left unread; one inside would read
a note twice), skips dot-folders (``.obsidian``, ``.git``, ``.trash``) as Obsidian does,
opens every note with ``O_NOFOLLOW``, and does not open non-Markdown files at all: they
are source nodes by name and size. A note larger than :data:`MAX_NOTE_BYTES` is kept as an
article but its text is not scanned.
"""
from __future__ import annotations

import builtins
import json
import os
import posixpath
import re
import stat
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kgkit.errors import InputError
from kgkit.wiki.markdown import Heading, Problem, RawLink, parse_note
from kgkit.wiki.resolve import Resolver

MAX_NOTE_BYTES = 2 * 1024 * 1024  # a note this large is a data dump, not an article
RAW_FOLDER = "raw"  # the LLM-wiki pattern's folder of source documents
MOC_TAGS = frozenset({"moc", "map-of-content", "mapofcontent", "index", "hub"})
# a note named as a map of content: "MOC - Gardening", "Gardening MOC", "Map of Content"
MOC_NAME = re.compile(r"(?:^|[\W_])MOC(?:$|[\W_])|map[ _-]of[ _-]contents?", re.I)
CATEGORY_PROPERTIES = ("categories", "category")  # frontmatter properties whose links group notes


@dataclass
class Link:
    """One link occurrence, resolved."""

    source: str  # note id
    file: str  # the note's path in the vault
    line: int
    column: int
    raw: str
    target_text: str
    heading: str | None
    block: str | None
    label: str | None
    kind: str  # embed | heading | alias | link
    syntax: str  # wikilink | markdown
    location: str  # body | frontmatter
    property: str | None
    status: str  # resolved | broken | attachment | missing_file | self | ambiguous
    target: str | None
    attachment: str | None
    resolved_by: str | None
    candidates: list[str]
    heading_found: bool | None = None

    @builtins.property  # the field ``property`` above shadows the builtin in this class body
    def written(self) -> str:
        """The link as the note writes it, for messages and evidence."""
        if self.syntax == "wikilink":
            return f"{'!' if self.kind == 'embed' else ''}[[{self.raw}]]"
        return f"{'!' if self.kind == 'embed' else ''}[{self.label or ''}]({self.raw})"


@dataclass
class Note:
    id: str  # path without .md
    path: str
    title: str
    title_source: str  # frontmatter | h1 | stem
    aliases: list[str]
    tags: list[str]
    frontmatter: dict[str, Any] | None
    headings: list[Heading]
    words: int
    bytes: int
    scanned: bool = True  # False: over the size limit, text not read
    template: bool = False  # in the templates folder Obsidian's settings name


@dataclass
class Category:
    """The notes one heading of an index note (or map of content) lists, in order; or
    (kind ``property``) the notes whose category property links one category."""

    index: str | None  # the index note; for a property category, the category's note when it exists
    section: str  # the heading; for a property category, the category as the links name it
    level: int  # the heading's level; 0 for a property category
    parent_sections: list[str]
    line: int  # the heading's line (property: the first member's property line)
    articles: list[str]
    unresolved: list[str]
    kind: str = "index_section"  # index_section | property
    evidence: dict[str, tuple[str, int]] = field(default_factory=dict)  # article -> (file, line) listing it


@dataclass
class SourceFile:
    path: str
    name: str
    bytes: int | None  # None: linked but not in the vault
    linked_from: list[str] = field(default_factory=list)


@dataclass
class Vault:
    root: Path
    notes: list[Note]
    links: list[Link]
    categories: list[Category]
    sources: list[SourceFile]
    index_notes: list[str]
    problems: list[Problem]
    collisions: list[tuple[str, list[str]]]  # (file name, notes sharing it)
    _by_id: dict[str, Note] = field(default_factory=dict, repr=False)

    def note(self, note_id: str) -> Note:
        if len(self._by_id) != len(self.notes):
            self._by_id = {n.id: n for n in self.notes}
        return self._by_id[note_id]


def is_vault(folder: Path) -> bool:
    """A folder kgkit reads as a vault without being told: it has ``index.md`` or ``.obsidian/``."""
    return folder.is_dir() and ((folder / "index.md").is_file() or (folder / ".obsidian").is_dir())


def _nfc(path: str) -> str:
    return unicodedata.normalize("NFC", path)


def scan_files(root: Path) -> tuple[list[tuple[str, int]], list[tuple[str, int]], list[Problem]]:
    """(notes, other files, problems): paths relative to the vault with their sizes."""
    notes, files, problems = [], [], []
    real_root = os.path.realpath(root)
    for top, dirs, names in os.walk(root, followlinks=False):
        rel_top = os.path.relpath(top, root)
        rel_top = "" if rel_top == "." else rel_top.replace(os.sep, "/")
        for name in sorted(dirs):
            full = os.path.join(top, name)
            if os.path.islink(full):
                problems.append(_link_problem(posixpath.join(rel_top, name), full, real_root))
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and not os.path.islink(os.path.join(top, d)))
        for name in sorted(names):
            full = os.path.join(top, name)
            rel = posixpath.join(rel_top, name)  # as on disk: the resolver compares NFC forms
            st = os.lstat(full)
            if stat.S_ISLNK(st.st_mode):
                problems.append(_link_problem(rel, full, real_root))
                continue
            if not stat.S_ISREG(st.st_mode) or name.startswith("."):
                continue
            if name.lower().endswith(".md") and not rel.startswith(RAW_FOLDER + "/"):
                notes.append((rel, st.st_size))
            else:
                files.append((rel, st.st_size))
    return notes, files, problems


def templates_folder(root: Path) -> tuple[str | None, list[Problem]]:
    """The templates folder ``.obsidian/templates.json`` names (its notes are templates,
    not articles of the vault's knowledge), or None."""
    settings = ".obsidian/templates.json"
    try:
        fd = os.open(root / settings, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return None, []  # no such settings (or a link: not followed)
    with open(fd, "rb") as fh:
        raw = fh.read(65536)
    try:
        folder = json.loads(raw.decode("utf-8")).get("folder")
    except (ValueError, AttributeError):
        return None, [Problem(settings, None, "is not a JSON object; no templates folder read from it")]
    if not isinstance(folder, str) or not folder.strip("/ "):
        return None, []
    return _nfc(folder.strip("/ ")), []


def _link_problem(rel: str, full: str, real_root: str) -> Problem:
    target = os.path.realpath(full)
    if os.path.commonpath([target, real_root]) != real_root:
        return Problem(rel, None, "is a symbolic link to outside the vault; not read")
    return Problem(rel, None, "is a symbolic link; kgkit reads no links, so it is left out")


def note_bytes(root: Path, rel: str) -> bytes:
    """A note's bytes, opened folder by folder from the vault root with ``O_NOFOLLOW``: a
    folder swapped for a link since the scan stops the read instead of leaving the vault."""
    flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC
    parts = rel.split("/")
    fd = os.open(root, flags | os.O_DIRECTORY)
    try:
        for part in parts[:-1]:
            inner = os.open(part, flags | os.O_DIRECTORY, dir_fd=fd)
            os.close(fd)
            fd = inner
        note = os.open(parts[-1], flags, dir_fd=fd)
    finally:
        os.close(fd)
    with open(note, "rb") as fh:
        return fh.read()


def read_note(root: Path, rel: str) -> str:
    """A note's text (UTF-8, newlines as ``\\n``, no byte-order mark), read as :func:`note_bytes` reads."""
    text = note_bytes(root, rel).decode("utf-8", errors="replace").replace("\r\n", "\n").replace("\r", "\n")
    return text[1:] if text.startswith("\ufeff") else text  # a byte-order mark is not part of the note


def read_vault(root: str | Path, *, category_properties: tuple[str, ...] = CATEGORY_PROPERTIES) -> Vault:
    """Read the vault at ``root``: zero model calls, the same answer every time.

    ``category_properties``: the frontmatter properties whose links group notes into
    categories (a vault that files notes under ``topics`` or ``up`` names it here).

    Raises InputError when ``root`` is not a readable folder holding at least one note.
    """
    root = Path(root)
    if not root.is_dir():
        raise InputError(f"{root}: not a folder; give the vault's folder (the one holding its .md notes)")
    if root.is_symlink():
        raise InputError(f"{root}: is a symbolic link; give the vault's folder itself")
    note_files, other_files, problems = scan_files(root)
    if not note_files:
        raise InputError(f"{root}: no Markdown notes (.md) in this folder; is it the vault?")
    ids = [rel[:-3] for rel, _ in note_files]
    templates, problem = templates_folder(root)
    problems.extend(problem)
    resolver = Resolver(ids, [f for f, _ in other_files])
    notes, links = [], []
    for (rel, size), note_id in zip(note_files, ids):
        note, note_links, note_problems = _read_one(root, rel, size, note_id, resolver)
        note.template = bool(templates) and _nfc(rel).lower().startswith((templates or "").lower() + "/")
        notes.append(note)
        links.extend(note_links)
        problems.extend(note_problems)
    by_id = {n.id: n for n in notes}
    for link in links:
        _check_heading(link, by_id)
    problems.extend(_link_problems(links, _aliases(notes)))
    collisions = _collisions(ids)
    for name, same in collisions:
        problems.append(Problem(by_id[same[0]].path, None, f"shares its file name {name!r} with "
                                f"{', '.join(by_id[s].path for s in same[1:])}; a link by that name alone resolves "
                                "only from the same folder or the vault root, else it is ambiguous"))
    by_source: dict[str, list[Link]] = {}
    for link in links:
        by_source.setdefault(link.source, []).append(link)
    index_notes = [n.id for n in notes if _is_index(n, by_source.get(n.id, []))]
    categories = [c for i in index_notes for c in _categories(by_id[i], by_source.get(i, []))]
    problems.extend(_index_problems(categories, by_id))
    categories += _property_categories(links, {p.lower() for p in category_properties})
    sources = _sources(links, other_files)
    return Vault(root, notes, links, categories, sources, index_notes, problems, collisions)


def _read_one(root: Path, rel: str, size: int, note_id: str, resolver: Resolver):
    stem = posixpath.basename(note_id)
    if size > MAX_NOTE_BYTES:
        problem = Problem(rel, None, f"is {size / 1e6:.1f} MB, over the {MAX_NOTE_BYTES // (1024 * 1024)} MiB a note "
                                     "may have; kept as an article (title from its file name), its text not read")
        return Note(note_id, rel, stem, "stem", [], [], None, [], 0, size, scanned=False), [], [problem]
    try:
        text = read_note(root, rel)
    except OSError as exc:
        problem = Problem(rel, None, f"cannot be read ({exc.strerror or exc}); left out")
        return Note(note_id, rel, stem, "stem", [], [], None, [], 0, size, scanned=False), [], [problem]
    parsed = parse_note(text, rel)
    note = Note(note_id, rel, parsed.title or stem, parsed.title_source or "stem", parsed.aliases, parsed.tags,
                parsed.frontmatter, parsed.headings, parsed.words, size)
    links = [_resolved(note_id, rel, raw, resolver) for raw in parsed.links]
    return note, links, parsed.problems


def _resolved(note_id: str, rel: str, raw: RawLink, resolver: Resolver) -> Link:
    r = resolver.resolve(note_id, raw.target_text, raw.syntax)
    status = r.status
    return Link(note_id, rel, raw.line, raw.column, raw.raw, raw.target_text, raw.heading, raw.block, raw.label,
                raw.kind, raw.syntax, raw.location, raw.property, status, r.target, r.attachment, r.resolved_by,
                r.candidates)


FOLD = re.compile(r"[#|^\[\]:*`_~\s]+")


def _fold(text: str) -> str:
    return FOLD.sub("", text.lower())


def _check_heading(link: Link, by_id: dict[str, Note]) -> None:
    if link.target is None or (link.heading is None and link.block is None) or not by_id[link.target].scanned:
        return
    target = by_id[link.target]
    if link.heading is not None:
        wanted = _fold(link.heading.split("#")[-1])
        link.heading_found = any(_fold(h.text) == wanted for h in target.headings)
    # blocks (^id) are not indexed: heading_found stays None for them


def _aliases(notes: list[Note]) -> dict[str, str]:
    """Alias (lower case) -> the note that declares it; an alias two notes share is left out."""
    seen: dict[str, list[str]] = {}
    for note in notes:
        for alias in note.aliases:
            seen.setdefault(alias.lower(), []).append(note.id)
    return {alias: ids[0] for alias, ids in seen.items() if len(ids) == 1}


def _link_problems(links: list[Link], aliases: dict[str, str]) -> list[Problem]:
    problems = []
    for link in links:
        where = f"{link.written}"
        if link.status == "broken":
            owner = aliases.get(link.target_text.lower())
            hint = (f"; {owner} has {link.target_text!r} as an alias, which Obsidian does not resolve: write "
                    f"[[{owner}|{link.target_text}]]") if owner else ""
            problems.append(Problem(link.file, link.line, f"{where} names no note in the vault (broken link){hint}"))
        elif link.status == "ambiguous":
            problems.append(Problem(link.file, link.line, f"{where} matches {len(link.candidates)} notes "
                                    f"({', '.join(link.candidates)}); ambiguous, no edge made -- write the path"))
        elif link.status == "missing_file":
            problems.append(Problem(link.file, link.line, f"{where} names a file that is not in the vault"))
        elif link.status == "resolved" and link.target == link.source:
            problems.append(Problem(link.file, link.line, f"{where} links the note to itself; no edge made"))
        elif link.heading_found is False:
            problems.append(Problem(link.file, link.line, f"{where}: {link.target} has no heading "
                                    f"{link.heading!r}; the link goes to the note"))
    return problems


def _collisions(ids: list[str]) -> list[tuple[str, list[str]]]:
    by_name: dict[str, list[str]] = {}
    for i in ids:
        by_name.setdefault(posixpath.basename(i).lower(), []).append(i)
    return [(name, same) for name, same in sorted(by_name.items()) if len(same) > 1]


def _is_index(note: Note, links: list[Link]) -> bool:
    """``index.md``, a note tagged or named as a map of content ("MOC - Gardening"), or a
    folder note (``x/x.md``) shaped
    like one: links to notes under at least two sections, four links or more (``links``:
    the note's own)."""
    stem = posixpath.basename(note.id)
    if stem.lower() == "index" or {t.lower() for t in note.tags} & MOC_TAGS or MOC_NAME.search(stem):
        return True
    folder = posixpath.basename(posixpath.dirname(note.id))
    if not folder or folder.lower() != stem.lower():
        return False
    own = [link for link in links if link.location == "body" and link.kind != "embed"]
    sections = {_section_of(note, link.line) for link in own if link.status == "resolved"}
    sections.discard(None)
    return len(sections) >= 2 and len(own) >= 4


def _section_of(note: Note, line: int) -> int | None:
    above = [h for h in note.headings if h.line < line]
    return above[-1].line if above and above[-1].level >= 2 else None


def _categories(note: Note, links: list[Link]) -> list[Category]:
    """Each heading (level 2 or deeper) of an index note with the notes linked below it
    (``links``: the note's own)."""
    out: dict[int, Category] = {}
    for link in links:
        if link.location != "body" or link.kind == "embed":
            continue
        above = [h for h in note.headings if h.line < link.line]
        if not above or above[-1].level < 2:
            continue
        heading = above[-1]
        if link.status not in ("resolved", "broken"):
            continue
        cat = out.get(heading.line)
        if cat is None:
            parents: list[str] = []
            level = heading.level
            for h in reversed(above[:-1]):
                if h.level < level:
                    parents.insert(0, h.text)
                    level = h.level
            cat = out[heading.line] = Category(note.id, heading.text, heading.level, parents, heading.line, [], [])
        if link.status == "resolved" and link.target is not None and link.target not in cat.articles:
            cat.articles.append(link.target)
            cat.evidence[link.target] = (link.file, link.line)
        elif link.status == "broken" and link.target_text not in cat.unresolved:
            cat.unresolved.append(link.target_text)
    return [out[k] for k in sorted(out)]


def _property_categories(links: list[Link], properties: set[str]) -> list[Category]:
    """Notes grouped by the links of their ``categories`` (or ``category``) property: one
    category per linked name, its members in vault order."""
    out: dict[str, Category] = {}
    for link in links:
        if link.location != "frontmatter" or (link.property or "").lower() not in properties:
            continue
        if link.status not in ("resolved", "broken"):
            continue
        key = link.target or link.target_text.lower()
        cat = out.get(key)
        if cat is None:
            name = posixpath.basename(link.target) if link.target else link.target_text
            cat = out[key] = Category(link.target, name, 0, [], link.line, [], [], kind="property")
        if link.source not in cat.articles:
            cat.articles.append(link.source)
            cat.evidence[link.source] = (link.file, link.line)
    return list(out.values())


def _index_problems(categories: list[Category], by_id: dict[str, Note]) -> list[Problem]:
    return [Problem(by_id[c.index].path, c.line, f"section {c.section!r} lists {name!r}, which is not a note "
                    "of the vault") for c in categories if c.index is not None for name in c.unresolved]


def _sources(links: list[Link], files: list[tuple[str, int]]) -> list[SourceFile]:
    """Files under ``raw/`` and every file a note links to, by name and size (never opened)."""
    sizes = dict(files)
    out: dict[str, SourceFile] = {}
    for path, size in files:
        if path.startswith(RAW_FOLDER + "/"):
            out[path] = SourceFile(path, posixpath.basename(path), size)
    for link in links:
        if link.status in ("attachment", "missing_file") and link.attachment:
            src = out.setdefault(link.attachment, SourceFile(link.attachment, posixpath.basename(link.attachment),
                                                             sizes.get(link.attachment)))
            if link.source not in src.linked_from:
                src.linked_from.append(link.source)
    return sorted(out.values(), key=lambda s: s.path)
