"""Bad vaults: each problem is a warning or error that names the file (and line), and the
reader never reads outside the vault."""
from __future__ import annotations

import os

import pytest

from kgkit.errors import InputError
from kgkit.wiki import build_baseline, read_vault
from kgkit.wiki.run_folder import baseline_report
from kgkit.wiki.vault import MAX_NOTE_BYTES
from support.wiki_vaults import write_vault


def warnings_of(vault) -> list[str]:
    return [p.format() for p in vault.problems]


def test_cycles_and_self_links_are_reported_and_make_no_loop(tmp_path):
    vault = read_vault(write_vault(tmp_path / "v", {
        "index.md": "# Index\n\n[[a]]\n",
        "a.md": "# A\n\nSee [[b]].\n",
        "b.md": "# B\n\nBack to [[a]] and to me: [[b]].\n",
    }))
    assert "b.md:3: [[b]] links the note to itself; no edge made" in warnings_of(vault)
    graph = build_baseline(vault)
    assert not [e for e in graph.edges if e["head"] == e["tail"]]
    report = baseline_report(vault, graph)
    assert report["notes_on_link_cycles"] == 2 and report["link_cycles"] == [["a", "b"]]
    assert report["self_links"] == 1


def test_the_same_file_name_in_two_folders_is_named_and_links_to_it_are_ambiguous(tmp_path):
    vault = read_vault(write_vault(tmp_path / "v", {
        "index.md": "# Index\n\n[[plan]]\n",
        "work/plan.md": "# Work plan\n",
        "home/plan.md": "# Home plan\n",
    }))
    assert any(w.startswith("home/plan.md: shares its file name 'plan' with work/plan.md") for w in warnings_of(vault))
    assert "index.md:3: [[plan]] matches 2 notes (home/plan, work/plan); ambiguous, no edge made -- write the path" \
        in warnings_of(vault)


def test_a_huge_note_is_kept_as_an_article_without_reading_its_text(tmp_path):
    root = write_vault(tmp_path / "v", {"index.md": "# Index\n\n[[big]]\n"})
    (root / "big.md").write_bytes(b"# Big\n\n[[index]]\n" + b"x" * (5 * 1024 * 1024))
    vault = read_vault(root)
    big = vault.note("big")
    assert big.bytes > MAX_NOTE_BYTES and not big.scanned and big.title == "big"
    assert not [l for l in vault.links if l.source == "big"]
    assert any(w.startswith("big.md: is 5.2 MB, over the 2 MiB a note may have") for w in warnings_of(vault))


def test_frontmatter_that_is_not_yaml_is_named_with_its_line_and_the_note_still_read(tmp_path):
    vault = read_vault(write_vault(tmp_path / "v", {
        "index.md": "# Index\n",
        "odd.md": "---\ntitle: Odd\ntags: [unclosed\n---\n# Odd heading\n\n[[index]]\n",
        "template.md": "---\ncreated: {{date}}\ntitle: Daily\n---\n# Day\n",
    }))
    [problem] = [p for p in vault.problems if p.file == "odd.md"]
    assert problem.line in (3, 4) and "frontmatter is not YAML" in problem.message
    assert vault.note("odd").title == "Odd heading"  # from the heading, as without frontmatter
    assert [l.target for l in vault.links if l.source == "odd"] == ["index"]
    assert vault.note("template").title == "Daily"  # a bare {{placeholder}} is quoted, not an error


def test_an_index_listing_notes_that_do_not_exist_names_each_with_its_line(tmp_path):
    vault = read_vault(write_vault(tmp_path / "v", {
        "index.md": "# Index\n\n## Reading\n\n- [[here]]\n- [[gone]]\n- [[also gone|Gone too]]\n",
        "here.md": "# Here\n",
    }))
    found = warnings_of(vault)
    assert "index.md:6: [[gone]] names no note in the vault (broken link)" in found
    assert "index.md:7: [[also gone|Gone too]] names no note in the vault (broken link)" in found
    assert "index.md:3: section 'Reading' lists 'gone', which is not a note of the vault" in found
    [cat] = vault.categories
    assert cat.articles == ["here"] and cat.unresolved == ["gone", "also gone"]


def test_symlinks_out_of_the_vault_are_named_and_never_read(tmp_path):
    outside = write_vault(tmp_path / "outside", {"secret.md": "# Secret\n\n[[secret-target]]\n",
                                                 "private/diary.md": "# Diary\n\n[[diary-target]]\n"})
    root = write_vault(tmp_path / "v", {"index.md": "# Index\n\n[[secret]]\n"})
    os.symlink(outside / "secret.md", root / "secret.md")
    os.symlink(outside / "private", root / "private")
    vault = read_vault(root)
    assert [n.id for n in vault.notes] == ["index"]
    assert "secret.md: is a symbolic link to outside the vault; not read" in warnings_of(vault)
    assert "private: is a symbolic link to outside the vault; not read" in warnings_of(vault)
    assert not [l for l in vault.links if "target" in l.raw]
    assert [l.status for l in vault.links] == ["broken"]


def test_a_folder_without_notes_or_no_folder_is_an_input_error(tmp_path):
    with pytest.raises(InputError, match="no Markdown notes"):
        read_vault(write_vault(tmp_path / "empty", {"a.txt": "x"}))
    with pytest.raises(InputError, match="not a folder"):
        read_vault(tmp_path / "nowhere")


def test_accents_in_either_unicode_form_and_a_byte_order_mark_do_not_break_links(tmp_path):
    import unicodedata

    decomposed = unicodedata.normalize("NFD", "café")
    vault = read_vault(write_vault(tmp_path / "v", {
        "index.md": "\ufeff---\ntitle: Home\n---\n# Index\n\n[[Café]]\n",
        f"{decomposed}.md": "# Café\n",
    }))
    assert vault.note("index").title == "Home"
    [link] = vault.links
    assert (link.status, link.target) == ("resolved", decomposed)


def test_a_broken_link_naming_an_alias_says_how_to_write_it(tmp_path):
    vault = read_vault(write_vault(tmp_path / "v", {
        "index.md": "# Index\n\n[[earth]]\n",
        "soil.md": "---\naliases: [earth]\n---\n# Soil\n",
    }))
    assert warnings_of(vault) == ["index.md:3: [[earth]] names no note in the vault (broken link); soil has 'earth' "
                                  "as an alias, which Obsidian does not resolve: write [[soil|earth]]"]


def test_a_folder_swapped_for_a_link_after_the_scan_is_not_followed(tmp_path, monkeypatch):
    from kgkit.wiki import vault as vault_module

    outside = write_vault(tmp_path / "outside", {"a.md": "# Outside\n\n[[secret-target]]\n"})
    root = write_vault(tmp_path / "v", {"index.md": "# Index\n", "sub/a.md": "# A\n"})
    scanned = vault_module.scan_files(root)
    (root / "sub" / "a.md").unlink()
    (root / "sub").rmdir()
    os.symlink(outside, root / "sub")  # the race: after the scan, before the read
    monkeypatch.setattr(vault_module, "scan_files", lambda _root: scanned)
    vault = read_vault(root)
    assert not vault.note("sub/a").scanned
    assert any(w.startswith("sub/a.md: cannot be read") for w in warnings_of(vault))
    assert not [l for l in vault.links if "secret" in l.raw]
