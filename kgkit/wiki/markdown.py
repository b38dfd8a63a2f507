"""One note's Markdown read the way Obsidian reads it: frontmatter, headings, tags, links.

Nothing here resolves a link or touches the file system: :func:`parse_note` takes the
text and gives what the note says, each part with its 1-based line in the file. Code
(fenced, indented, inline), HTML comments and ``%%`` comments are masked first -- blanked
character for character, so lines and columns stay where they were -- because a link or
a tag written inside them is an example, not a link.
"""
from __future__ import annotations

import re
import urllib.parse
from dataclasses import dataclass, field
from typing import Any

import yaml

FENCE = re.compile(r"^(?:[ \t]*>)*[ \t]*(`{3,}|~{3,})")  # indented too: fences sit in list items
LIST_ITEM = re.compile(r"^[ \t]*(?:>[ \t]*)*(?:[-*+]|\d{1,9}[.)])(?:[ \t]|$)")
INLINE_CODE = re.compile(r"(`+)(?!`)(.+?)(?<!`)\1(?!`)")
COMMENTS = re.compile(r"<!--.*?(?:-->|\Z)|%%.*?(?:%%|\Z)", re.S)
HEADING = re.compile(r"^((?:[ \t]*>)*)[ \t]{0,3}(#{1,6})[ \t]+(.*?)[ \t]*(?:[ \t]#+[ \t]*)?$")
WIKILINK = re.compile(r"(!?)\[\[([^\[\]\n]+?)\]\]")
MD_LINK = re.compile(r"(!?)\[((?:[^\[\]\n]|\[[^\[\]\n]*\])*)\]\(\s*(<[^<>\n]*>|[^\s()]*(?:\([^\s()]*\)[^\s()]*)*)"
                     r"(?:\s+(?:\"[^\"\n]*\"|'[^'\n]*'|\([^()\n]*\)))?\s*\)")
TAG = re.compile(r"(?:(?<=^)|(?<=[\s>]))#([\w\-/]+)", re.M)
SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.\-]*:")
PLACEHOLDER = re.compile(r"(?<![\"'\w]){{[^{}\n]*}}(?:[^\n#]*)")


@dataclass
class Heading:
    level: int
    text: str
    line: int
    quoted: bool = False  # inside a blockquote or callout


@dataclass
class RawLink:
    """A link as written, before resolution."""

    line: int
    raw: str  # between the brackets, or the Markdown destination as written
    target_text: str  # the part naming the note or file (URL-decoded for Markdown links)
    heading: str | None
    block: str | None
    label: str | None
    kind: str  # embed | heading | alias | link
    syntax: str  # wikilink | markdown
    location: str = "body"  # body | frontmatter
    property: str | None = None  # the frontmatter key, for location frontmatter
    column: int = 1  # 1-based, where the link starts


@dataclass
class Problem:
    """A warning about the input, located at a file and line."""

    file: str
    line: int | None
    message: str

    def format(self) -> str:
        return f"{self.file}:{self.line}: {self.message}" if self.line else f"{self.file}: {self.message}"


@dataclass
class ParsedNote:
    frontmatter: dict[str, Any] | None
    frontmatter_parse: str | None  # yaml | yaml-with-placeholders-quoted | invalid | None (no frontmatter)
    title: str | None  # from frontmatter, else the first level-1 heading; None: use the file name
    title_source: str | None
    aliases: list[str]
    tags: list[str]
    headings: list[Heading]
    links: list[RawLink]
    words: int
    body_start: int  # 1-based line where the body begins
    problems: list[Problem] = field(default_factory=list)


def split_frontmatter(text: str) -> tuple[list[str], int]:
    """(the frontmatter's lines, the line after it, 1-based); ([], 1) without frontmatter."""
    lines = text.split("\n")
    if not lines or lines[0].rstrip() != "---":
        return [], 1
    for i in range(1, len(lines)):
        if lines[i].rstrip() in ("---", "..."):
            return lines[1:i], i + 2
    return [], 1  # never closed: Obsidian shows it as text


def parse_frontmatter(lines: list[str], file: str) -> tuple[dict[str, Any] | None, str | None, list[Problem]]:
    """Properties as YAML; bare template placeholders (``{{date}}``) quoted on a second try."""
    if not lines:
        return None, None, []
    text = "\n".join(lines)
    try:
        data = yaml.safe_load(text)
        how = "yaml"
    except yaml.YAMLError as first:
        try:
            data = yaml.safe_load(PLACEHOLDER.sub(lambda m: _quote(m.group(0)), text))
            how = "yaml-with-placeholders-quoted"
        except yaml.YAMLError:
            mark = getattr(first, "problem_mark", None)
            line = 2 + mark.line if mark is not None else 1
            problem = getattr(first, "problem", None) or "unreadable"
            return None, "invalid", [Problem(file, line, f"frontmatter is not YAML ({problem}); its properties "
                                                          "(title, aliases, tags) are not read")]
    if data is None:
        return {}, how, []
    if not isinstance(data, dict):
        return None, "invalid", [Problem(file, 2, f"frontmatter is YAML but not a set of properties "
                                                  f"({type(data).__name__}); not read")]
    return {str(k): v for k, v in data.items()}, how, []


def _quote(text: str) -> str:
    return "'" + text.strip().replace("'", "''") + "'"


def mask(lines: list[str], start: int) -> list[str]:
    """The lines with code and comments blanked; lines before ``start`` (frontmatter) blanked too."""
    out = [""] * len(lines)
    fence: str | None = None
    in_list = in_indented = False
    prev_blank = True
    for i, line in enumerate(lines):
        if i + 1 < start:
            continue
        if fence is not None:
            m = FENCE.match(line)
            if m and m.group(1)[0] == fence[0] and len(m.group(1)) >= len(fence) and not line[m.end():].strip():
                fence = None
            continue
        m = FENCE.match(line)
        if m:
            fence = m.group(1)
            continue
        blank = not line.strip()
        indented = line.startswith(("    ", "\t"))
        if in_indented and (indented or blank):
            prev_blank = blank
            continue
        in_indented = False
        if indented and prev_blank and not in_list:
            in_indented = True
            prev_blank = False
            continue
        if not blank:
            if LIST_ITEM.match(line):
                in_list = True
            elif not line[:1].isspace():
                in_list = False
        out[i] = line
        prev_blank = blank
    masked = [INLINE_CODE.sub(lambda m: " " * len(m.group(0)), line) for line in out]
    text = COMMENTS.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), "\n".join(masked))
    return text.split("\n")


def headings_of(masked: list[str], lines: list[str]) -> list[Heading]:
    """Headings found in the masked lines, their text as written (a comment in it stays)."""
    found = []
    for i, line in enumerate(masked):
        m = HEADING.match(line) and HEADING.match(lines[i])
        if m:
            text = m.group(3).strip()
            text = re.sub(r"[ \t]+#+$", "", text) if text.strip("#") else text
            found.append(Heading(len(m.group(2)), text, i + 1, quoted=bool(m.group(1))))
    return found


def split_target(inner: str) -> tuple[str, str | None, str | None, str | None]:
    """``note#heading|label`` -> (note, heading, block, label); ``#^id`` is a block."""
    label = None
    if "|" in inner:
        inner, label = inner.split("|", 1)
    inner = inner.rstrip("\\")  # [[a\|b]] inside a table
    heading = block = None
    if "#" in inner:
        inner, rest = inner.split("#", 1)
        if rest.startswith("^"):
            block = rest[1:]
        else:
            heading = rest
    return inner.strip(), heading, block, label


def _kind(embed: bool, heading: str | None, block: str | None, label: str | None) -> str:
    if embed:
        return "embed"
    if heading is not None or block is not None:
        return "heading"
    if label:
        return "alias"
    return "link"


def wikilinks_in(line: str, number: int, location: str = "body", prop: str | None = None) -> list[RawLink]:
    links = []
    for m in WIKILINK.finditer(line):
        raw = m.group(2)
        target, heading, block, label = split_target(raw)
        links.append(RawLink(number, raw, target, heading, block, label,
                             _kind(bool(m.group(1)), heading, block, label), "wikilink", location, prop,
                             m.start() + 1))
    return links


def markdown_links_in(line: str, number: int) -> list[RawLink]:
    links = []
    for m in MD_LINK.finditer(line):
        dest = m.group(3)
        if dest.startswith("<"):
            dest = dest[1:-1]
        if not dest or dest.startswith("#") or SCHEME.match(dest):
            continue  # an in-page anchor or a URL: not a link to a note
        path, _, anchor = dest.partition("#")
        heading = block = None
        if anchor:
            if anchor.startswith("^"):
                block = urllib.parse.unquote(anchor[1:])
            else:
                heading = urllib.parse.unquote(anchor)
        label = m.group(2).strip() or None
        links.append(RawLink(number, dest, urllib.parse.unquote(path), heading, block, label,
                             _kind(bool(m.group(1)), heading, block, label), "markdown", column=m.start() + 1))
    return links


def _strings(value: Any, split: str) -> list[str]:
    """A property as a list of strings: a list kept, a string split (``split`` is a regex)."""
    if value is None:
        return []
    items = value if isinstance(value, list) else [value]
    out: list[str] = []
    for item in items:
        if item is None or isinstance(item, (dict, list)):
            continue  # a nested value is no name
        parts = re.split(split, str(item)) if isinstance(item, str) else [str(item)]
        out.extend(p.strip() for p in parts if p.strip())
    return out


def frontmatter_links(lines: list[str]) -> list[RawLink]:
    """Wikilinks in frontmatter values, each with its top-level key and YAML line."""
    links, prop = [], None
    for i, line in enumerate(lines):
        key = re.match(r"^([^\s#:][^:]*):", line)
        if key:
            prop = key.group(1).strip()
        links.extend(wikilinks_in(line, i + 2, "frontmatter", prop))
    return links


def parse_note(text: str, file: str) -> ParsedNote:
    """Everything a note says about itself and its links (see the module docstring)."""
    fm_lines, body_start = split_frontmatter(text)
    frontmatter, how, problems = parse_frontmatter(fm_lines, file)
    lines = text.split("\n")
    masked = mask(lines, body_start)
    headings = headings_of(masked, lines)
    props = frontmatter or {}
    title, title_source = None, None
    if isinstance(props.get("title"), (str, int, float)) and str(props["title"]).strip():
        title, title_source = str(props["title"]).strip(), "frontmatter"
    else:
        first = next((h for h in headings if h.level == 1 and not h.quoted), None)
        if first is not None:
            title, title_source = first.text, "h1"
    aliases = _strings(props.get("aliases", props.get("alias")), r",")
    tags = [t.lstrip("#") for t in _strings(props.get("tags", props.get("tag")), r"[,\s]+")]
    tags = [t for t in tags if t]
    for line in masked:
        for m in TAG.finditer(line):
            if not m.group(1).isdigit():
                tags.append(m.group(1))
    links = frontmatter_links(fm_lines) if frontmatter is not None else []
    for i, line in enumerate(masked):
        if "[" in line:
            blanked = WIKILINK.sub(lambda m: " " * len(m.group(0)), line)
            found = wikilinks_in(line, i + 1) + markdown_links_in(blanked, i + 1)
            links.extend(sorted(found, key=lambda link: link.column))
    words = sum(len(line.split()) for line in masked)
    return ParsedNote(frontmatter, how, title, title_source, list(dict.fromkeys(aliases)),
                      list(dict.fromkeys(tags)), headings, links, words, body_start, problems)
