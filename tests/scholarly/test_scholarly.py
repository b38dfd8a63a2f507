"""Reading a paper's scholarly structure: reference entries of several styles, in-text
markers of every style linked to them, citation intent with its SciCite / ACL-ARC
mappings, strength max-pooled over mentions, author lines, and the whole paper as
structure.json through `kgkit extract --domain scholarly` (all on our own text)."""
from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from kgkit.cli import cli
from kgkit.documents.layout.model import Block
from kgkit.scholarly.citations import ReferenceIndex, _markers, expand_numbers, find_citations
from kgkit.scholarly.intent import ACLARC, INTENT, SCICITE, citation_function, pooled_strength
from kgkit.scholarly.metadata import author_names, sort_name
from kgkit.scholarly.references import parse_reference, surname
from support.pdf_maker import two_column_paper

pytest.importorskip("pdfplumber")


@pytest.mark.parametrize("raw, number, key, first, year, title", [
    ("J. F. Smith and K. Lee. 2019a. Reading order matters. In Proc. of the Layout Workshop, pages 1-9.", None,
     "Smith and Lee, 2019a", "Smith", "2019a", "Reading order matters"),
    ("Ana Costa, Bo Wu, and Cy Diaz. 2020. Typed links for papers. In ACL.", None,
     "Costa et al., 2020", "Costa", "2020", "Typed links for papers"),
    ("Moreau P, Diallo AB, Kim S: Hospital audits in practice. Int J Care 2011, 23:1-8.", 4,
     "[4]", "Moreau", "2011", "Hospital audits in practice"),
    ("P. Moreau and S. Kim, “Heart care at home,” Journal of Care, vol. 3, pp. 1-9, 2008.", 2,
     "[2]", "Moreau", "2008", "Heart care at home"),
    ("Novak, J., Petit, L. & Ruiz, M. Heat through walls. Build. Sci. 12, 3-9 (2017).", 7,
     "[7]", "Novak", "2017", "Heat through walls"),
])
def test_reference_styles(raw, number, key, first, year, title):
    ref = parse_reference(raw, 5, number)
    assert (ref.key, ref.first_author_surname, ref.year, ref.title) == (key, first, year, title)


@pytest.mark.parametrize("name, family", [("J. F. Allen", "Allen"), ("Allen, J. F.", "Allen"), ("Allen JF", "Allen"),
                                          ("Jacob Devlin", "Devlin"), ("Anna van der Berg", "van der Berg")])
def test_surname(name, family):
    assert surname(name) == family


def test_number_ranges_expand():
    assert expand_numbers("3-5, 9") == [3, 4, 5, 9]
    assert expand_numbers("2–3") == [2, 3]


def _refs():
    return [parse_reference("J. Smith and K. Lee. 2019a. One. In X.", 1, None),
            parse_reference("J. Smith and K. Lee. 2019b. Two. In X.", 1, None),
            parse_reference("A. Costa, B. Wu, and C. Diaz. 2020. Three. In Y.", 1, None),
            parse_reference("M. Novak. 2018. Four. In Z.", 1, None)]


def test_author_year_markers_of_every_style_link_to_their_entries():
    index = ReferenceIndex(_refs())
    sentence = ("Costa et al. (2020) and Smith and Lee (2019b) disagree with earlier work "
                "(Smith and Lee, 2019a; Novak, 2018; e.g., Unknown, 2001).")
    found = [(marker, keys, missing) for _, _, marker, keys, missing in _markers(sentence, index)]
    assert ("(Smith and Lee, 2019a; Novak, 2018; e.g., Unknown, 2001)",
            ["Smith and Lee, 2019a", "Novak, 2018"], ["Unknown, 2001"]) in found
    assert ("Costa et al. (2020)", ["Costa et al., 2020"], []) in found
    assert ("Smith and Lee (2019b)", ["Smith and Lee, 2019b"], []) in found


def test_a_capitalised_word_before_a_bracketed_year_is_no_marker_unless_it_names_an_entry():
    index = ReferenceIndex(_refs())
    assert list(_markers("The Census (2010) counted everyone.", index)) == []


def test_citations_carry_section_page_and_span():
    refs = [parse_reference("A. B. Cole. 2015. Title. In X.", 1, 1)]
    block = Block(kind="paragraph", text="Graphs are old [1]. They are useful.", page=3, bbox=(0, 0, 1, 1),
                  section="1 Introduction", section_path=["1 Introduction"], start=100, end=136)
    (c,) = find_citations([block], refs)
    assert (c.marker, c.refs, c.section, c.page, c.span) == ("[1]", ["[1]"], "1 Introduction", 3, (115, 118))
    assert c.sentence == "Graphs are old [1]."


@pytest.mark.parametrize("sentence, function", [
    ("We use the parser of [3] for all experiments.", "uses"),
    ("Our model extends the approach of Smith (2019).", "extends"),
    ("Unlike [4], we keep every edge.", "compares"),
    ("These results are consistent with earlier reports [5].", "supports"),
    ("Little work has addressed this gap [6].", "motivation"),
    ("In future work we will test richer features [7].", "future"),
    ("Graphs have a long history [8].", "background"),
])
def test_citation_function_and_its_label_sets(sentence, function):
    assert citation_function(sentence) == function
    assert INTENT[function] in {"support", "contrast", "extend", "background"}
    assert SCICITE[function] in {"background", "method", "result"}
    assert ACLARC[function] in {"Background", "Uses", "CompareOrContrast", "Motivation", "Extends", "Future"}


def test_strength_is_max_pooled_and_bibliography_only_is_peripheral():
    assert (pooled_strength([]).level, pooled_strength([]).label) == (1, "peripheral")
    assert pooled_strength(["background", "background"]).level == 2
    assert pooled_strength(["background", "compares"]).level == 3
    assert pooled_strength(["uses"]).label == "strong"
    assert pooled_strength(["uses", "background", "uses"]).label == "foundational"


@pytest.mark.parametrize("line, names", [
    ("Lamya Roe1*, Omar Diaz2,3 and Rin Sato4", ["Lamya Roe", "Omar Diaz", "Rin Sato"]),
    ("Sha Li and Heng Ji and Jia Han", ["Sha Li", "Heng Ji", "Jia Han"]),
    ("1 Department of Physics, Example University", []),
    ("We study how papers cite each other", []),
])
def test_author_names(line, names):
    assert author_names(line) == names


def test_sort_name():
    assert sort_name("Naomi Park") == "Park, Naomi"


def test_extract_writes_structure_with_anchors_sections_metadata_references_and_typed_citations(tmp_path, monkeypatch):
    monkeypatch.setenv("KGKIT_CONFIG_DIR", str(tmp_path / "cfg"))
    monkeypatch.setenv("KGKIT_CACHE_DIR", str(tmp_path / "cache"))
    pdf = two_column_paper(tmp_path / "paper.pdf")
    result = CliRunner().invoke(cli, ["extract", "--domain", "scholarly", str(pdf), "--out", str(tmp_path / "out")])
    assert result.exit_code == 0, result.output
    run = tmp_path / "out" / "paper"
    data = json.loads((run / "structure.json").read_text(encoding="utf-8"))
    meta = data["metadata"]
    assert meta["title"]["value"] == "Graph Methods for Citation Analysis"
    assert [a["sort_name"] for a in meta["authors"]] == ["Lovelace, Ada", "Turing, Alan", "Hopper, Grace"]
    labelled = {(a["label"], a["page"]) for a in data["anchors"] if a["label"]}
    assert labelled == {("Figure 1", 1), ("Table 1", 1), ("Equation 1", 1)}
    assert all(a["bbox"] and a["modality"] for a in data["anchors"])
    assert [s["name"] for s in data["sections"]][:4] == ["Abstract", "1 Introduction", "2 Related Work",
                                                          "2.1 Typed Citations"]
    works = {w["key"]: w for w in data["references"]}
    assert set(works) == {"[1]", "[2]", "[3]"}
    assert works["[2]"]["mentions"] == 2 and works["[2]"]["strength"] >= 2 and works["[2]"]["evidence"]
    edges = data["graph"]["edges"]
    assert {e["type"] for e in edges} >= {"belongs_to", "grounded_in", "CITES", "AUTHORED_BY"}
    text = json.loads((run / "manifest.json").read_text())["input"]
    assert text["chunks"] >= 1
