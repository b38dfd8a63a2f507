"""Python's cyclic garbage collector, paced for a document's run.

A run allocates millions of small objects that live until its document is written: mentions,
nodes, answers, index entries. With the collector's defaults (a young collection every 700
allocations, and full ones that walk everything alive) it re-scanned them again and again,
a tenth of the CPU of a 1.6 MB offline run (1.2 of 11.6 s), more the longer the document.
While documents run, young collections wait for :data:`YOUNG` allocations instead. Reference
counting still frees each object as soon as it is unused; only garbage held in reference
cycles waits a little longer. Thresholds the process set higher are kept, and the process's
own settings come back when the last document finishes, so a library caller is left as it was.
"""
from __future__ import annotations

import contextlib
import gc
import threading
from typing import Iterator

YOUNG = 20_000  # allocations between young collections (Python's default: 700)
OLDER = 10  # young collections between middle ones, and middle ones between full ones (default: 10)

_lock = threading.Lock()
_running = 0
_saved: tuple[int, ...] = ()


@contextlib.contextmanager
def paced() -> Iterator[None]:
    """Collect less often while the block runs (documents may run at once: the first to
    start sets the pace, the last to finish restores the process's)."""
    global _running, _saved
    with _lock:
        if not _running:
            _saved = gc.get_threshold()
            gc.set_threshold(max(_saved[0], YOUNG), *(max(t, OLDER) for t in _saved[1:]))
        _running += 1
    try:
        yield
    finally:
        with _lock:
            _running -= 1
            if not _running:
                gc.set_threshold(*_saved)
