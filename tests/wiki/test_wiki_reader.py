"""The wiki reader on vaults the tests write: articles, every link kind resolved Obsidian's
way, index sections, sources, the baseline graph -- with no model call."""
from __future__ import annotations

import pytest

from kgkit.wiki import build_baseline, is_vault, read_vault
from kgkit.wiki.baseline import CATEGORIZED_UNDER, RELATED, link_cycles
from support.wiki_vaults import write_vault


@pytest.fixture
def garden(tmp_path):
    return read_vault(write_vault(tmp_path / "garden"))


def links_of(vault, source):
    return [(l.line, l.raw, l.kind, l.syntax, l.status, l.target, l.resolved_by) for l in vault.links
            if l.source == source]


def test_articles_take_title_aliases_and_tags_from_frontmatter_then_heading_then_name(garden):
    notes = {n.id: n for n in garden.notes}
    assert sorted(notes) == ["compost", "index", "notes/ideas", "notes/spade", "soil", "start-here",
                             "tools/shears", "tools/spade", "watering"]
    assert (notes["index"].title, notes["index"].title_source) == ("Garden Handbook", "frontmatter")
    assert (notes["soil"].title, notes["soil"].title_source) == ("Soil", "h1")
    assert notes["soil"].aliases == ["earth", "dirt"]
    assert notes["soil"].tags == ["gardening", "basics"]  # a string property split on commas
    assert notes["start-here"].tags == ["beginner"]  # an inline #tag
    assert "raw/survey" not in notes  # raw/ holds sources, not articles


def test_every_link_kind_resolves_like_obsidian(garden):
    assert links_of(garden, "index") == [
        (7, "start-here", "link", "wikilink", "resolved", "start-here", "vault-path"),
        (11, "soil", "link", "wikilink", "resolved", "soil", "vault-path"),
        (11, "watering|how much water", "alias", "wikilink", "resolved", "watering", "vault-path"),
        (12, "compost#Hot piles", "heading", "wikilink", "resolved", "compost", "vault-path"),
        (13, "missing-page", "link", "wikilink", "broken", None, None),
        (17, "tools/spade", "link", "wikilink", "resolved", "tools/spade", "vault-path"),
        (18, "tools/shears.md", "alias", "markdown", "resolved", "tools/shears", "vault-path"),
        (19, "layout.png", "embed", "wikilink", "attachment", None, "vault-path"),
    ]
    assert links_of(garden, "tools/spade") == [
        (3, "soil", "link", "wikilink", "resolved", "soil", "vault-path"),
        (3, "shears", "link", "wikilink", "resolved", "tools/shears", "same-folder"),
    ]
    assert links_of(garden, "tools/shears") == [
        (3, "../soil", "link", "wikilink", "resolved", "soil", "relative"),
        (3, "./spade.md", "alias", "markdown", "resolved", "tools/spade", "relative"),
    ]


def test_a_shared_name_is_ambiguous_unless_the_folder_or_root_decides_and_never_guessed(garden):
    [ambiguous, by_path] = [l for l in garden.links if l.source == "compost"]
    assert (ambiguous.status, ambiguous.target, ambiguous.candidates) == ("ambiguous", None,
                                                                          ["notes/spade", "tools/spade"])
    assert (by_path.status, by_path.target) == ("resolved", "notes/spade")
    [same_folder] = [l for l in garden.links if l.source == "notes/ideas"]
    assert (same_folder.status, same_folder.target, same_folder.resolved_by) == ("resolved", "notes/spade",
                                                                                 "same-folder")
    assert same_folder.candidates == ["notes/spade", "tools/spade"]  # listed even when the folder chose


def test_code_and_comments_hold_no_links_and_embeds_and_self_links_are_kept_apart(garden):
    raws = [l.raw for l in garden.links]
    for hidden in ("not-a-link-in-code", "also-not-a-link", "commented-out", "hidden-too"):
        assert hidden not in raws
    soil = {l.raw: l for l in garden.links if l.source == "soil"}
    assert (soil["#Texture"].status, soil["#Texture"].target) == ("self", "soil")
    assert soil["soil#Texture"].heading_found is True
    embed = next(l for l in garden.links if l.source == "start-here" and l.kind == "embed")
    assert (embed.raw, embed.status, embed.target) == ("compost", "resolved", "compost")


def test_index_sections_become_categories_and_files_sources(garden):
    cats = [(c.index, c.section, c.level, c.articles, c.unresolved) for c in garden.categories]
    assert cats == [("index", "Basics", 2, ["soil", "watering", "compost"], ["missing-page"]),
                    ("index", "Tools", 2, ["tools/spade", "tools/shears"], [])]
    sources = {s.path: (s.bytes, s.linked_from) for s in garden.sources}
    assert sources == {"layout.png": (16, ["index"]), "raw/survey.csv": (15, [])}


def test_the_baseline_graph_has_weighted_deduplicated_edges_with_evidence(garden):
    graph = build_baseline(garden)
    types = {n["id"]: n["type"] for n in graph.nodes}
    assert types["soil"] == "Article" and types["topic:index#Basics"] == "Topic"
    assert types["source:layout.png"] == "Source" and types["source:raw/survey.csv"] == "Source"
    related = [(e["head"], e["tail"]) for e in graph.edges if e["relation"] == "related"]
    assert len(related) == len(set(related))  # one edge per pair
    assert ("soil", "soil") not in related and ("compost", "tools/spade") not in related  # self, ambiguous
    start = next(e for e in graph.edges if (e["head"], e["tail"]) == ("start-here", "soil"))
    assert (start["weight"], start["evidence"]["file"], start["evidence"]["line"]) == (RELATED, "start-here.md", 3)
    under = [(e["head"], e["tail"], e["weight"]) for e in graph.edges if e["relation"] == "categorized_under"]
    assert ("soil", "topic:index#Basics", CATEGORIZED_UNDER) in under
    assert ("tools/shears", "topic:index#Tools", CATEGORIZED_UNDER) in under
    assert [step["articles"] for step in graph.tour] == [["soil", "watering", "compost"],
                                                         ["tools/spade", "tools/shears"]]
    marks = {n["id"]: n["complexity"] for n in graph.nodes if n["type"] == "Article"}
    assert marks["soil"] in ("medium", "high") and marks["notes/ideas"] == "low"


def test_link_cycles_are_found_without_recursion(garden, tmp_path):
    on_cycles, cycles = link_cycles(garden)
    assert cycles == [["index", "start-here"], ["soil", "tools/shears", "tools/spade", "watering"]]
    assert on_cycles == 6
    chain = {f"n{i}.md": f"# N{i}\n\n[[n{(i + 1) % 3000}]]\n" for i in range(3000)}
    long_vault = read_vault(write_vault(tmp_path / "chain", {"index.md": "# Index\n", **chain}))
    count, [ring] = link_cycles(long_vault)
    assert count == len(ring) == 3000


def test_a_folder_is_a_vault_with_an_index_or_obsidian_settings(tmp_path):
    plain = write_vault(tmp_path / "plain", {"a.md": "# A\n"})
    assert not is_vault(plain)
    (plain / ".obsidian").mkdir()
    assert is_vault(plain)
    assert is_vault(write_vault(tmp_path / "indexed", {"index.md": "# I\n"}))


def test_a_categories_property_groups_notes_and_templates_are_marked(tmp_path):
    vault = read_vault(write_vault(tmp_path / "v", {
        "index.md": "# Index\n",
        "Categories/Books.md": "# Books\n",
        "dune.md": "---\ncategories:\n  - \"[[Books]]\"\n---\n# Dune\n",
        "emma.md": "---\ncategories: [\"[[Books]]\", \"[[Films]]\"]\n---\n# Emma\n",
        "Templates/daily.md": "---\ncreated: {{date}}\n---\n# {{title}}\n",
        ".obsidian/templates.json": '{"folder": "Templates"}',
    }))
    cats = [(c.kind, c.index, c.section, c.articles) for c in vault.categories]
    assert cats == [("property", "Categories/Books", "Books", ["dune", "emma"]), ("property", None, "Films", ["emma"])]
    dune = next(l for l in vault.links if l.source == "dune")
    assert (dune.location, dune.property, dune.line) == ("frontmatter", "categories", 3)
    graph = build_baseline(vault)
    under = {(e["head"], e["tail"]): e["evidence"]["line"] for e in graph.edges if e["relation"] == "categorized_under"}
    assert under == {("dune", "topic:category:Categories/Books"): 3, ("emma", "topic:category:Categories/Books"): 2,
                     ("emma", "topic:category:Films"): 2}
    assert vault.note("Templates/daily").template and not vault.note("dune").template
    from kgkit.wiki.enrich import make_batches

    assert "Templates/daily" not in [a for b in make_batches(vault) for a in b.articles]


def test_another_category_property_can_be_named(tmp_path):
    root = write_vault(tmp_path / "v", {"index.md": "# Index\n", "Rust.md": "# Rust\n",
                                        "borrow.md": "---\ntopics: \"[[Rust]]\"\n---\n# Borrowing\n"})
    assert read_vault(root).categories == []
    [cat] = read_vault(root, category_properties=("topics",)).categories
    assert (cat.kind, cat.index, cat.articles) == ("property", "Rust", ["borrow"])


def test_a_note_named_as_a_map_of_content_is_an_index(tmp_path):
    root = write_vault(tmp_path / "v", {"index.md": "# Index\n", "a.md": "# A\n", "b.md": "# B\n",
                                        "MOC - Letters.md": "# Letters\n\n## Vowels\n\n- [[a]]\n\n## Others\n\n- [[b]]\n",
                                        "Democracy.md": "# Democracy\n\n## Parts\n\n- [[a]]\n"})
    vault = read_vault(root)
    assert sorted(vault.index_notes) == ["MOC - Letters", "index"]
    assert [(c.section, c.articles) for c in vault.categories] == [("Vowels", ["a"]), ("Others", ["b"])]
