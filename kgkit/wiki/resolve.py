"""Where a link points, decided the way Obsidian decides it -- and never guessed.

Obsidian matches case-insensitively: a path relative to the linking note (``./``, ``../``
and Markdown destinations), then the note's own folder, then a path from the vault root,
then the one note whose path ends in the target ("shortest unique path"). A name several
notes share, none of them in the linking note's folder nor at the root, is *ambiguous*:
the link is reported with every candidate, and no edge is made. A target with a file
extension other than ``.md`` names an attachment (a source file), not a note.
"""
from __future__ import annotations

import posixpath
import unicodedata
from dataclasses import dataclass, field

#: Extensions that make a link target a file rather than a note, even when the file is absent.
FILE_EXTENSIONS = frozenset(
    "png jpg jpeg gif svg webp bmp ico tif tiff avif heic pdf mp3 wav ogg m4a flac webm mp4 mov mkv avi "
    "ogv txt css js ts json csv tsv xml yaml yml toml html htm zip gz tar canvas base excalidraw "
    "doc docx xls xlsx ppt pptx epub odt ods odp rtf ipynb py sh".split())


@dataclass
class Resolution:
    status: str  # resolved | broken | attachment | missing_file | self | ambiguous
    target: str | None = None  # note id, for resolved and self
    attachment: str | None = None  # vault path of the file, for attachment and missing_file
    # relative | relative-clamped | relative-fallback-name | same-folder | vault-path | name
    resolved_by: str | None = None
    candidates: list[str] = field(default_factory=list)  # every note matching by name, when several do


def _is_file_target(path: str) -> bool:
    ext = posixpath.splitext(path)[1].lower().lstrip(".")
    return bool(ext) and ext != "md" and ext in FILE_EXTENSIONS


class Resolver:
    """Resolves link targets among the vault's notes (ids: paths without ``.md``) and files."""

    def __init__(self, notes: list[str], files: list[str]):
        self._notes = {_key(n): n for n in notes}
        self._files = {_key(f): f for f in files}
        self._by_name: dict[str, list[str]] = {}
        for note in notes:
            self._by_name.setdefault(_key(posixpath.basename(note)), []).append(note)
        self._files_by_name: dict[str, list[str]] = {}
        for f in files:
            self._files_by_name.setdefault(_key(posixpath.basename(f)), []).append(f)

    def resolve(self, source: str, target_text: str, syntax: str) -> Resolution:
        """Resolve one link of note ``source`` (its id)."""
        text = unicodedata.normalize("NFC", target_text.strip())
        if not text:
            return Resolution("self", target=source, resolved_by="self")
        folder = posixpath.dirname(source)
        if text.endswith("/"):
            return Resolution("broken")  # a folder, not a note
        is_file = _is_file_target(text) or (_key(text) in self._files)
        table, by_name = (self._files, self._files_by_name) if is_file else (self._notes, self._by_name)
        key = text[:-3] if not is_file and text.lower().endswith(".md") else text

        def found(path: str, how: str, candidates: list[str] | None = None) -> Resolution | None:
            hit = table.get(_key(posixpath.normpath(path))) if path else None
            if hit is None:
                return None
            if is_file:
                return Resolution("attachment", attachment=hit, resolved_by=how, candidates=candidates or [])
            return Resolution("resolved", target=hit, resolved_by=how, candidates=candidates or [])

        name_matches = self._suffix_matches(key, by_name)
        candidates = sorted(name_matches) if len(name_matches) > 1 else []
        if key.startswith(("./", "../")):
            joined, clamped = _join(folder, key)
            hit = found(joined, "relative-clamped" if clamped else "relative", candidates)
            if hit:
                return hit
            tail = posixpath.basename(joined)
            tails = by_name.get(_key(tail), []) if tail else []
            if len(tails) == 1:
                return found(tails[0], "relative-fallback-name") or Resolution("broken")
            return self._missing(text, is_file, joined)
        if key.startswith("/"):
            return found(key.lstrip("/"), "vault-path", candidates) or self._missing(text, is_file, key.lstrip("/"))
        if folder:
            hit = found(posixpath.join(folder, key), "same-folder", candidates)
            if hit:
                return hit
        hit = found(key, "vault-path", candidates)
        if hit:
            return hit
        if len(name_matches) == 1:
            return found(name_matches[0], "name") or Resolution("broken")
        if len(name_matches) > 1:
            return Resolution("ambiguous", resolved_by="name-ambiguous", candidates=candidates)
        return self._missing(text, is_file, key)  # a name only: where the file should be is not said

    @staticmethod
    def _missing(text: str, is_file: bool, path: str) -> Resolution:
        return Resolution("missing_file", attachment=path) if is_file else Resolution("broken")

    @staticmethod
    def _suffix_matches(key: str, by_name: dict[str, list[str]]) -> list[str]:
        """Notes (or files) whose path ends in ``key`` at a folder boundary."""
        k = _key(key).lstrip("./")
        if not k:
            return []
        base = posixpath.basename(k)
        return [p for p in by_name.get(base, []) if _key(p) == k or _key(p).endswith("/" + k)]


def _key(path: str) -> str:
    """How Obsidian compares names: case-insensitively, and one Unicode form for accents."""
    return unicodedata.normalize("NFC", path).lower()


def _join(folder: str, relative: str) -> tuple[str, bool]:
    """``folder/relative`` normalised; climbing above the root stops there (clamped=True)."""
    parts: list[str] = folder.split("/") if folder else []
    clamped = False
    for part in relative.split("/"):
        if part in ("", "."):
            continue
        if part == "..":
            if parts:
                parts.pop()
            else:
                clamped = True
        else:
            parts.append(part)
    return "/".join(parts), clamped
