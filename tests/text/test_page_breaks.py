"""Page breaks inside a sentence, found and read across; every text is written for the test."""
from __future__ import annotations

from kgkit.documents.chunking import chunk_document
from kgkit.documents.types import Document
from kgkit.text.page_breaks import page_breaks, reading_text
from kgkit.text.sentences import split_sentences

CUT = "The supplier shall deliver the goods to the\n\n14\n\nSource: NORTHWIND LTD, 8-K, 5/5/2015\n\nwarehouse of the buyer."


def test_a_page_number_and_a_source_line_between_two_halves_are_read_as_spaces():
    reading = reading_text(CUT)
    assert len(reading) == len(CUT)
    assert [s.text for s in split_sentences(reading)] == [
        "The supplier shall deliver the goods to the" + " " * (len(CUT) - len("The supplier shall deliver the goods "
                                                                          "to the") - len("warehouse of the buyer."))
        + "warehouse of the buyer."]
    assert page_breaks(CUT) == ((CUT.index("the\n") + 3, CUT.index("warehouse")),)


def test_a_break_is_inside_a_sentence_only_where_the_sentence_goes_on():
    assert page_breaks("The goods are delivered.\n\n14\n\nThe buyer pays.") == ()  # a sentence ended before
    assert page_breaks("SCHEDULE OF PRICES\n\n14\n\nThe buyer pays.") == ()  # a heading before
    assert page_breaks("The parties agree as follows\n\nDelivery happens weekly.") == ()  # no furniture, a capital
    assert page_breaks("The parties agree as follows\n\nARTICLE TWO\n\nDelivery.") == ()  # a heading, not furniture
    assert page_breaks("goods to the\n\nwarehouse.") == ((12, 14),)  # no furniture, the sentence going on in lower case
    assert page_breaks("goods to the\n- 3 -\nCONFIDENTIAL\nWarehouse Nine.") != ()  # capitals beside a page number
    assert page_breaks("goods to the\n\n3\n\nWarehouse Nine.") != ()  # a page's number, and a line ending in "the"
    assert page_breaks("goods in stock\n- 3 -\nCONFIDENTIAL\nWarehouse Nine.") == ()  # a heading after the page
    assert page_breaks("goods in stock\n- 3 -\nCONFIDENTIAL\nwarehouse nine.") != ()


def test_a_line_that_recurs_inside_a_paragraph_is_text():
    """A wrapped line's last word recurs ("Agreement."): it is no running footer."""
    text = "either party may end this\nAgreement.\nThe buyer may end this\nAgreement.\n3\n\nand so on."
    assert all("Agreement." not in text[a:b] for a, b in page_breaks(text))


def test_a_running_line_written_on_every_page_is_furniture():
    text = "NORTHWIND SUPPLY TERMS\nThe first page ends.\n\nNORTHWIND SUPPLY TERMS\n\nand the goods arrive."
    assert page_breaks(text) == ()  # the sentence before ended
    text = "NORTHWIND SUPPLY TERMS\nThe goods go to the\n\nNORTHWIND SUPPLY TERMS\n\nWarehouse Nine."
    assert len(page_breaks(text)) == 1


def test_a_chunk_does_not_end_at_a_page_break_inside_a_sentence():
    filler = "The buyer inspects every shipment on arrival. " * 30
    text = filler + CUT + " " + filler
    doc = Document(id="d_test", name="test", text=text, source="test.txt", media_type="text/plain", sha256="0" * 64)
    cut_from, cut_to = text.index("to the\n\n14") + len("to the"), text.index("warehouse")
    chunks = chunk_document(doc, size=len(filler) + 200, overlap=100)
    assert len(chunks) > 1
    assert not any(cut_from <= c.end <= cut_to for c in chunks)  # no chunk ends inside the break
    assert any("to the\n\n14" in c.text and "warehouse of the buyer." in c.text for c in chunks)


def test_numbered_headings_are_no_running_line():
    text = "ARTICLE 2\nPrices.\nThe parties agree as follows\n\nARTICLE 3\n\nDelivery is weekly."
    assert page_breaks(text) == ()
