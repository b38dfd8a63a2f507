"""Small vaults written by the tests themselves (kgkit's own text, no gold document in them)."""
from __future__ import annotations

from pathlib import Path

GARDEN = {
    "index.md": """\
---
title: Garden Handbook
tags: [handbook, moc]
---
# Garden Handbook

An overview of the handbook. See [[start-here]] first.

## Basics

- [[soil]] and [[watering|how much water]]
- [[compost#Hot piles]]
- [[missing-page]]

## Tools

- [[tools/spade]]
- [Pruning shears](tools/shears.md)
- ![[layout.png]]
""",
    "start-here.md": """\
# Start here

Read [[soil]] before anything else, then [[index]].
Plants in ![[compost]] grow faster. Some #beginner tips.

```
[[not-a-link-in-code]]
```

Inline `[[also-not-a-link]]` code and <!-- [[commented-out]] --> comments.
%% [[hidden-too]] %%
""",
    "soil.md": """\
---
aliases: [earth, dirt]
tags: gardening, basics
---
# Soil

Good soil feeds [[watering|water]] uptake; see [[compost]] and [[soil#Texture]].

## Texture

Loam is best. Jump to [[#Texture]] or read [[tools/spade]].
""",
    "watering.md": "# Watering\n\nWater in the morning. Back to [[soil]].\n",
    "compost.md": "# Compost\n\n## Hot piles\n\nTurn them weekly. Uses [[Spade]] and [[notes/spade]].\n",
    "tools/spade.md": "# Spade\n\nA spade digs [[soil]]. Sibling: [[shears]].\n",
    "tools/shears.md": "# Shears\n\nCut with care; see [[../soil]] and [the spade](./spade.md).\n",
    "notes/spade.md": "# Spade notes\n\nAnother note named spade.\n",
    "notes/ideas.md": "# Ideas\n\nWhich spade? [[spade]] is the one in this folder.\n",
    "raw/survey.csv": "plot,yield\n1,3\n",
    "layout.png": "not really a png",
}


def write_vault(root: Path, files: dict[str, str | bytes] | None = None) -> Path:
    """Write ``files`` (default: GARDEN) under ``root`` and return it."""
    root.mkdir(parents=True, exist_ok=True)
    for rel, text in (GARDEN if files is None else files).items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(text, bytes):
            path.write_bytes(text)
        else:
            path.write_text(text, encoding="utf-8")
    return root


def two_shelves(root: Path, per_shelf: int = 12) -> Path:
    """A vault whose index lists two shelves of notes: enough for two model batches."""
    files: dict[str, str | bytes] = {}
    index = ["# Library", ""]
    for shelf in ("Alpha", "Beta"):
        index += ["", f"## {shelf}", ""]
        for i in range(per_shelf):
            name = f"{shelf.lower()}-{i:02d}"
            index.append(f"- [[{name}]]")
            files[f"{shelf.lower()}/{name}.md"] = (
                f"# {shelf} note {i}\n\nThis note describes item number {i} of the {shelf} shelf in plain words.\n"
                f"It links on to [[{shelf.lower()}-{(i + 1) % per_shelf:02d}]].\n")
    files["index.md"] = "\n".join(index) + "\n"
    return write_vault(root, files)
