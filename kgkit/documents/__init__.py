"""Documents: load a file into text with page offsets, then cut it into chunks."""
from kgkit.documents.chunking import chunk_document
from kgkit.documents.load import load_document
from kgkit.documents.types import Chunk, Document, Page

__all__ = ["Chunk", "Document", "Page", "chunk_document", "load_document"]
