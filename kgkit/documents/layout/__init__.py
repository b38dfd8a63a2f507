"""Layout-aware reading: a PDF as blocks in reading order (kind, text, page, bbox, section).

The seam to the loader is :func:`kgkit.documents.load.load_document` with
``layout=True``; everything layout-specific lives here."""
from kgkit.documents.layout.model import Block, LayoutDocument, Line
from kgkit.documents.layout.reader import layout_available, layout_text, read_pdf_layout, section_bounds

__all__ = ["Block", "LayoutDocument", "Line", "layout_available", "layout_text", "read_pdf_layout",
           "section_bounds"]
