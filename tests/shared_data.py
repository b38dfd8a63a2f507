"""Where the shared gold corpora are, for the tests marked ``corpus``.

``shared/`` sits beside the repository checkout (locally and in CI), so by default the
data is found relative to this file; ``KGKIT_SHARED_DATA`` points elsewhere. Tests that
read it carry ``@pytest.mark.corpus``: the README's test command leaves them out (a fresh
clone has nothing beside it) and CI runs them with ``pytest -m corpus``.
"""
import os
from pathlib import Path

DATA = Path(os.environ.get("KGKIT_SHARED_DATA") or Path(__file__).resolve().parents[2] / "shared" / "data")
