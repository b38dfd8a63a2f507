"""Pages without a text layer, read by OCR: rendered with pypdfium2 (comes with the layout
extra) and recognised by the ``tesseract`` program (Debian's tesseract-ocr, found on PATH),
whose word boxes enter the same line and block building as a text layer's words. Each
OCRed page reports its mean word confidence; without tesseract the page is reported as
having no text layer, never silently empty."""
from __future__ import annotations

import csv
import io
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from kgkit.documents.layout.pdf_lines import Word

DPI = 300
TIMEOUT = 120  # seconds tesseract may take for one page
MIN_CONFIDENCE = 30  # words recognised with less are left out (tesseract's 0-100 scale)


@dataclass
class OcrPage:
    words: list[Word]
    confidence: float  # mean over the words kept, 0-100


def ocr_available() -> bool:
    return shutil.which("tesseract") is not None


def ocr_page(pdf_bytes: bytes, index: int) -> OcrPage:
    """Render page ``index`` (0-based) and recognise its words, in PDF points."""
    import pypdfium2 as pdfium

    scale = DPI / 72
    document = pdfium.PdfDocument(pdf_bytes)
    try:
        image = document[index].render(scale=scale).to_pil()
    finally:
        document.close()
    with tempfile.TemporaryDirectory(prefix="kgkit-ocr-") as tmp:
        png = Path(tmp) / "page.png"
        image.save(png)
        done = subprocess.run(["tesseract", str(png), "stdout", "--dpi", str(DPI), "tsv"], capture_output=True,
                              text=True, timeout=TIMEOUT, check=False)
    if done.returncode != 0:
        return OcrPage([], 0.0)
    return _words(done.stdout, scale)


def _words(tsv: str, scale: float) -> OcrPage:
    words, confidences = [], []
    for row in csv.DictReader(io.StringIO(tsv), delimiter="\t", quoting=csv.QUOTE_NONE):
        text = (row.get("text") or "").strip()
        try:
            conf = float(row.get("conf") or -1)
            left, top, width, height = (float(row[k]) / scale for k in ("left", "top", "width", "height"))
        except (KeyError, TypeError, ValueError):
            continue
        if row.get("level") != "5" or not text or conf < MIN_CONFIDENCE:
            continue
        # A word box spans ascenders to descenders: about 1.2 times the type size's x-height band.
        size = round(max(height * 0.95, 4.0) * 2) / 2
        words.append(Word(text, left, left + width, top, top + height, size, False))
        confidences.append(conf)
    return OcrPage(words, sum(confidences) / len(confidences) if confidences else 0.0)
