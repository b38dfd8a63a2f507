"""The core-then-modes engine: one skeleton per document, every view derived from it.

``run.extract`` orchestrates (load, chunk, core, modes, write); ``core`` builds the
skeleton; ``passes`` runs or reuses one pass; ``accounting`` keeps the call budget;
``outputs`` and ``manifest`` write the run folder; ``join`` joins views by node ID;
``plan`` prices a run without running it.
"""
