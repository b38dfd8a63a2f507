"""Prompt templates (``*.j2``) for every pass and their sandboxed renderer (``render.py``)."""
