"""Print the README's first two ```console blocks, the try-it command then the test command,
one per line, so .ci/run tests what the README says rather than a copy of it.

Each block must be one command on one line (steps joined with ``&&``); anything else is an
error here, not a silently different test.
"""
from __future__ import annotations

import re
import sys
from pathlib import Path

BLOCK = re.compile(r"^```console[ \t]*\n(.*?)^```[ \t]*$", re.M | re.S)


def commands(readme: str) -> list[str]:
    blocks = [b.strip() for b in BLOCK.findall(readme)][:2]
    if len(blocks) < 2:
        raise ValueError(f"README.md has {len(blocks)} ```console block(s); the try-it and test commands need 2")
    for name, block in zip(("try-it", "test"), blocks):
        if "\n" in block or not block:
            raise ValueError(f"README.md's {name} command must be one line (steps joined with &&): {block!r}")
    return blocks


if __name__ == "__main__":
    try:
        print("\n".join(commands(Path(sys.argv[1]).read_text(encoding="utf-8"))))
    except (OSError, ValueError) as e:
        print(f"ci: {e}", file=sys.stderr)
        sys.exit(2)
