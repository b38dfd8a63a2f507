"""Which gold documents to score: a list of document ids, or a split of a learn report.

``kgkit eval --docs FILE`` reads FILE as either a ``kgkit skills learn --json`` report
(its ``split`` lists train, dev and held-out documents; ``--split`` picks one, default
``heldout``) or plain text, one document id per line (``#`` starts a comment). So the
held-out figure of a learn run can be reproduced by anyone with the gold folder.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Sequence

from kgkit.errors import InputError
from kgkit.eval.gold import GoldDoc


def read_doc_ids(path: str | Path, split: str | None = None) -> list[str]:
    """The document ids named by ``path`` (see the module doc)."""
    file = Path(path)
    try:
        text = file.read_text(encoding="utf-8")
    except OSError as exc:
        raise InputError(f"cannot read the document list {file}: {exc.strerror or exc}") from exc
    if text.lstrip().startswith("{"):
        try:
            splits = json.loads(text).get("split")
        except (json.JSONDecodeError, AttributeError) as exc:
            raise InputError(f"{file}: not a learn report (invalid JSON: {exc})") from exc
        if not isinstance(splits, dict):
            raise InputError(f"{file}: a JSON document list must be a `kgkit skills learn --json` report with a split")
        name = split or "heldout"
        if name not in splits:
            raise InputError(f"{file}: no split {name!r} in the learn report (splits: {', '.join(sorted(splits))})")
        return list(splits[name])
    if split is not None:
        raise InputError(f"--split needs a learn report; {file} is a plain list of document ids")
    return [line.split("#", 1)[0].strip() for line in text.splitlines() if line.split("#", 1)[0].strip()]


def select_docs(docs: Sequence[GoldDoc], ids: Sequence[str], source: str = "the document list") -> list[GoldDoc]:
    """The gold documents with these ids, in gold order; an unknown id is an error naming it."""
    by_id = {d.doc_id: d for d in docs}
    unknown = [i for i in ids if i not in by_id]
    if unknown:
        raise InputError(f"{source} names documents not in the gold folder: {', '.join(unknown[:10])}"
                         + (f" (and {len(unknown) - 10} more)" if len(unknown) > 10 else ""))
    if not ids:
        raise InputError(f"{source} names no documents")
    wanted = set(ids)
    return [d for d in docs if d.doc_id in wanted]
