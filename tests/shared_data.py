"""Where the shared gold corpora are: ``shared/`` sits beside the repository checkout
(locally and in CI alike), so tests find it relative to this file, never by an absolute path."""
from pathlib import Path

SHARED = Path(__file__).resolve().parents[2] / "shared"
DATA = SHARED / "data"
