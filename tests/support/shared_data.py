"""Where test data lives: the shared gold corpora (tests marked ``corpus``) and the small
fixtures inside the repository that the default suite uses instead.

``shared/`` sits beside the repository checkout (locally and in CI), so by default the
data is found relative to this file; ``KGKIT_SHARED_DATA`` points elsewhere. Tests that
read it carry ``@pytest.mark.corpus``: the README's test command leaves them out (a fresh
clone has nothing beside it) and CI runs them with ``pytest -m corpus``. Everything else
reads only the repository: ``FIXTURES`` (tests/fixtures, sources and licences in its
README) and the example contract that ships in examples/.
"""
import os
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
DATA = Path(os.environ.get("KGKIT_SHARED_DATA") or REPO.parent / "shared" / "data")
# The sets in the shared gold.json format (a .txt beside every gold file); the others keep
# formats of their own (their READMEs say which).
DOCUMENT_SETS = ("conll04", "cuad", "scierc", "wikievents")
FIXTURES = REPO / "tests" / "fixtures"
CONTRACT_PDF = REPO / "examples" / "cooltech_strategic_alliance.pdf"  # CUAD v1, CC BY 4.0
