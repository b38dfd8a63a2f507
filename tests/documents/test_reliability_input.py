"""Input hardening (issue 10): files stay in their folder, errors never print a file, no
regex or special file can stall a run, and one ``kgkit validate`` checks every kind of file.

Each test is one case of docs/security.md or docs/reliability.md, run through the real
entry point (``kgkit ...`` under CliRunner) where a user would meet it.
"""
from __future__ import annotations

import io
import json
import os
import re
import subprocess
import sys
import warnings
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from support.cli_support import kgkit
from kgkit.guards import safe_regex
from kgkit.documents.load import load_document
from kgkit.errors import InputError


def _nodes(out: Path) -> list[dict]:
    (doc,) = [p for p in out.iterdir() if (p / "nodes.json").is_file()]
    return json.loads((doc / "nodes.json").read_text())["nodes"]


# --------------------------------------------------------------------------- item 12


def test_blank_defined_term_does_not_crash_offline_backend(tmp_path):
    """A placeholder left in a filing -- a defined term of only narrow no-break spaces --
    used to raise IndexError in the offline backend (exit 1, traceback)."""
    doc = tmp_path / "filing.txt"
    doc.write_text('This Agreement is made by Northwind Traders Inc. (the "Supplier") and '
                   'Harbor Lane LLC ("\u202f\u202f\u202f").\nThe Supplier shall deliver the goods.\n',
                   encoding="utf-8")
    result = kgkit("extract", str(doc), "--domain", "legal_contracts", "--out", str(tmp_path / "out"))
    assert result.exit_code == 0, result.output
    names = {n["name"]: n["aliases"] for n in _nodes(tmp_path / "out")}
    assert names["Northwind Traders Inc."] == ["Supplier"]
    assert "Harbor Lane LLC" in names and all(a.strip() for a in names["Harbor Lane LLC"])


# --------------------------------------------------------------------------- item 9


def test_ten_thousand_types_without_aliases_are_not_an_alias_bomb(tmp_path):
    """Only values added by alias expansion count towards the alias-bomb limit."""
    lines = ["name: many_types", "entity_types:"]
    lines += [f"  - name: Kind{i}\n    description: kind number {i}\n    examples: [Sample {i}]" for i in range(10_000)]
    path = tmp_path / "many_types.yaml"
    path.write_text("\n".join(lines) + "\n")
    result = kgkit("domain", "validate", str(path))
    assert result.exit_code == 0, result.output
    assert result.stdout == f"OK {path}\n"


def test_alias_bomb_is_still_refused(tmp_path):
    path = tmp_path / "bomb.yaml"
    path.write_text("name: bomb\na: &a [x, x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]\n"
                    "c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]\nd: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]\n"
                    "e: [*d, *d, *d, *d, *d, *d, *d, *d, *d, *d]\n")
    result = kgkit("domain", "validate", str(path))
    assert result.exit_code == 2
    assert "aliases expand to more than 50000 values" in result.stderr


# --------------------------------------------------------------------------- item 3

SECRET = "sk-live-4b1d2c3e9f8a7b6c5d4e"


def _secret_files(tmp_path: Path) -> Path:
    """A project with a .env beside a domains/ folder, as many repositories have."""
    (tmp_path / ".env").write_text(f"OPENAI_API_KEY={SECRET}\nDB_PASSWORD=hunter2-{SECRET}\n")
    (tmp_path / "domains").mkdir()
    return tmp_path / "domains"


def test_extends_outside_the_domain_folder_is_refused_without_reading_it(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    domains = _secret_files(tmp_path)
    child = domains / "mine.yaml"
    child.write_text("name: mine\nextends: ../.env\nentity_types:\n  - name: Thing\n")
    result = kgkit("domain", "validate", str(child))
    assert result.exit_code == 2
    assert SECRET not in result.output and "hunter2" not in result.output
    assert result.stderr.splitlines()[0] == (
        f"{child}:2:10: extends: extends path '../.env' leads outside the domain's folder ({domains}); "
        "expected a file beside it or a domain name on the search path")


def test_extends_through_a_symlink_leaving_the_folder_is_refused(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    domains = _secret_files(tmp_path)
    (domains / "base.yaml").symlink_to(tmp_path / ".env")
    child = domains / "mine.yaml"
    child.write_text("name: mine\nextends: ./base.yaml\nentity_types:\n  - name: Thing\n")
    result = kgkit("domain", "validate", str(child))
    assert result.exit_code == 2
    assert SECRET not in result.output
    assert "extends path './base.yaml' leads outside the domain's folder" in result.stderr


def test_extends_beside_the_child_still_works(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    shared = tmp_path / "team"
    shared.mkdir()
    (shared / "base.yaml").write_text("name: base\nentity_types:\n  - name: Thing\n")
    (shared / "mine.yaml").write_text("name: mine\nextends: ./base.yaml\nrelation_types:\n"
                                      "  - name: next_to\n    head: [Thing]\n    tail: [Thing]\n")
    result = kgkit("domain", "validate", str(shared / "mine.yaml"))
    assert result.exit_code == 0, result.output


def test_a_text_file_given_as_domain_is_not_printed(tmp_path):
    env = tmp_path / "settings.env"
    env.write_text(f"OPENAI_API_KEY={SECRET}\nDB_PASSWORD=hunter2\n")
    result = kgkit("extract", str(env), "--domain", str(env), "--out", str(tmp_path / "out"))
    assert result.exit_code == 2
    assert SECRET not in result.output and "hunter2" not in result.output
    assert "got plain text (" in result.stderr
    assert not (tmp_path / "out").exists()


def test_a_system_file_given_as_view_is_one_issue_not_its_lines(tmp_path):
    """A shadow-like file parses as a mapping of its lines; listing each unknown key printed it."""
    shadow = tmp_path / "shadow"
    shadow.write_text("".join(f"user{i}:$6$salt{i}$Q9hashhashhash{i}:20228:0:99999:7:::\n" for i in range(12)))
    doc = tmp_path / "doc.txt"
    doc.write_text("Ada Lovelace worked with Charles Babbage in London.\n")
    result = kgkit("extract", str(doc), "--view", str(shadow), "--out", str(tmp_path / "out"))
    assert result.exit_code == 2
    assert "hashhash" not in result.output and "user0" not in result.output
    assert f"{shadow}:1:1: not a view file: none of its 12 top-level keys is a view key" in result.stderr


def test_view_prompt_outside_the_view_folder_is_refused(tmp_path):
    (tmp_path / "secret.j2").write_text(f"{SECRET}\n")
    views = tmp_path / "views"
    views.mkdir()
    (views / "leak.yaml").write_text("name: leak\nstrategy: upgrade\nmode: nary.v1\nupgrade:\n  prompt: ../secret.j2\n"
                                     "  output_schema: {type: object}\n")
    (views / "ok.j2").write_text("{{ chunk }}\n")
    (views / "fine.yaml").write_text("name: fine\nstrategy: upgrade\nmode: nary.v1\nupgrade:\n  prompt: ok.j2\n"
                                     "  output_schema: {type: object}\n")
    result = kgkit("domain", "validate", "--kind", "view", str(views / "leak.yaml"), str(views / "fine.yaml"))
    assert result.exit_code == 2
    assert SECRET not in result.output
    assert f"{views / 'leak.yaml'}:5:11: upgrade -> prompt: prompt file '../secret.j2' not found" in result.stderr
    assert f"OK {views / 'fine.yaml'}" in result.stdout


# --------------------------------------------------------------------------- item 5: special files and size


def _run_cli(*args: str, cwd: Path, stdin: bytes | None = None) -> subprocess.CompletedProcess:
    """The CLI in a child process with a deadline: a regression here hangs, and the test must not."""
    return subprocess.run([sys.executable, "-c", "from kgkit.cli import main; main()", *args], cwd=cwd,
                          input=stdin, capture_output=True, timeout=60)


@pytest.mark.parametrize("make", ["fifo", "dev_zero", "symlink_to_dev_zero"])
def test_special_files_are_refused_as_input(tmp_path, make):
    if make == "fifo":
        target = tmp_path / "pipe.txt"
        os.mkfifo(target)
        kind = "a FIFO (named pipe)"
    elif make == "dev_zero":
        target, kind = Path("/dev/zero"), "a character device"
    else:
        target, kind = tmp_path / "zeros.txt", "a character device"
        target.symlink_to("/dev/zero")
    result = _run_cli("extract", str(target), "--out", str(tmp_path / "out"), cwd=tmp_path)
    assert result.returncode == 2, result.stderr
    assert result.stderr.decode() == f"Error: {target} is {kind}, not a regular file; expected a document file\n"
    assert not (tmp_path / "out").exists()


def test_a_fifo_as_domain_file_is_an_issue_not_a_hang(tmp_path):
    fifo = tmp_path / "domain.yaml"
    os.mkfifo(fifo)
    result = _run_cli("domain", "validate", str(fifo), cwd=tmp_path)
    assert result.returncode == 2
    assert result.stderr.decode().splitlines()[0] == f"{fifo}: is a FIFO (named pipe), not a regular file; expected a YAML file"


def test_document_over_input_max_bytes_is_refused_with_its_size(tmp_path):
    (tmp_path / "kgkit.yaml").write_text("input:\n  max_bytes: 1000\n")
    doc = tmp_path / "long.txt"
    doc.write_text("Ada Lovelace met Charles Babbage. " * 100)  # 3,400 bytes
    result = kgkit("extract", str(doc), "--config", str(tmp_path / "kgkit.yaml"), "--out", str(tmp_path / "out"))
    assert result.exit_code == 2
    assert result.stderr == (f"Error: {doc} is 3,400 bytes, over input.max_bytes (1,000 bytes)\n"
                             "  hint: raise input.max_bytes if this file is meant to be read\n")
    assert not (tmp_path / "out").exists()


def test_stdin_over_the_limit_is_refused_without_reading_it_all():
    endless = io.BytesIO(b"a" * 5000)
    with pytest.raises(InputError, match=r"^stdin is more than 1,000 bytes, over input.max_bytes$"):
        load_document("-", stdin=endless, max_bytes=1000)
    assert endless.tell() == 1001


# --------------------------------------------------------------------------- item 5: regexes


@pytest.mark.parametrize("pattern", [r"(a+)+$", r"(a*)*", r"(a|a)*", r"(\w+\s?)+$", r"(?:[a-z]+\s*)+\.",
                                     r"(\s*\w+\s*)+$", r"((a+))+", r"(\w|\d)+", r"(.|\s)*", r"(ab|ab)+",
                                     "(?x)(a+) +", "(?x)( a + ) +$", "(?x)(\\w+ # a word\n)+", "(?x)(a+)#c\n+"])
def test_nested_quantifiers_are_found(pattern):
    assert safe_regex.nested_quantifier(pattern) is not None


@pytest.mark.parametrize("pattern", [r"(,\s*\w+)*", r"([a-z]+\.)+[a-z]+", r"(\d+,)*\d+", r"(?>a+)+", r"(a++)+",
                                     r"(a|b)*", r"(ab|ac)*", r"(?-i:(?:[A-Z][a-z]+\s?)+)", r"[(a+)+]", r"\(a+\)+",
                                     r"(?:[ \t]+[A-Z][A-Z0-9&/\-]*){0,5}", r"(?#(a+)+)x", "(?x)(a + b)+",
                                     "(?x)(a+) # one round, then a comment +\n"])
def test_safe_repeats_are_not_refused(pattern):
    assert safe_regex.nested_quantifier(pattern) is None


def test_nested_quantifier_names_the_group_position():
    assert safe_regex.nested_quantifier(r"\bid=(\d+)+;") == (
        5, r"'(\d+)+' repeats '\d+' with nothing between the rounds (nested quantifiers)")


def test_every_shipped_regex_passes_the_check():
    from kgkit.catalog.validation import _walk_patterns
    from kgkit.formats.yaml_source import load

    root = Path(__file__).resolve().parents[2]
    found = [(path, rx) for f in sorted(root.glob("domains/*.yaml")) + sorted(root.glob("templates/*.yaml"))
             for path, rx in _walk_patterns(load(f).data, ())]
    assert len(found) > 20
    assert [rx for _, rx in found if safe_regex.nested_quantifier(rx)] == []


def test_a_slow_regex_that_passes_validation_is_skipped_not_a_hang(tmp_path):
    """``(?:a|aa)+$`` passes the static check but backtracks exponentially: the per-chunk
    budget stops it, the run finishes (exit 0) and review.jsonl says which regex was skipped."""
    domain = tmp_path / "slow.yaml"
    domain.write_text("name: slow\nentity_types:\n  - name: Thing\n    patterns:\n      regex:\n"
                      "        - '(?P<name>(?:a|aa)+)$'\n  - name: Person\n    patterns:\n      phrases: [Grace Hopper]\n")
    assert kgkit("domain", "validate", str(domain)).exit_code == 0
    (tmp_path / "kgkit.yaml").write_text("input:\n  regex_timeout: 0.2\n")
    doc = tmp_path / "doc.txt"
    doc.write_text("Grace Hopper wrote a compiler.\n" + "a" * 60 + "!\n")
    result = _run_cli("extract", str(doc), "--domain", str(domain), "--config", "kgkit.yaml", "--out", "out",
                      cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    review = [json.loads(line) for line in (tmp_path / "out" / "doc" / "review.jsonl").read_text().splitlines()]
    assert [(r["stage"], r["item"], r["reason"]) for r in review] == [
        ("entities", {"regex": "(?P<name>(?:a|aa)+)$"}, "regex_timeout: ran over its 0.2s budget (input.regex_timeout)")]
    assert [n["name"] for n in _nodes(tmp_path / "out")] == ["Grace Hopper"]
    manifest = json.loads((tmp_path / "out" / "doc" / "manifest.json").read_text())
    assert manifest["warnings"] == ["1 regex(es) skipped on some chunks (input.regex_timeout); see review.jsonl"]


def test_budget_is_per_pattern_and_per_chunk():
    with safe_regex.chunk_budget(0.05) as budget:
        assert safe_regex.finditer("(?:a|aa)+$", "a" * 60 + "!") == []
        assert [m.group() for m in safe_regex.finditer(r"\d+", "12 and 34")] == ["12", "34"]
        assert safe_regex.finditer("(?:a|aa)+$", "aaa") == []  # skipped for the rest of the chunk
    assert list(budget.skipped) == ["(?:a|aa)+$"]
    with safe_regex.chunk_budget(0.05):
        assert [m.group() for m in safe_regex.finditer("(?:a|aa)+$", "aaa")] == ["aaa"]  # a new chunk


def test_a_learned_regex_that_does_not_compile_is_skipped():
    with safe_regex.chunk_budget() as budget:
        assert safe_regex.finditer("(unclosed", "text") == []
    assert budget.skipped["(unclosed"].startswith("regex_invalid: missing )")


# --------------------------------------------------------------------------- item 10: one validate

ROOT = Path(__file__).resolve().parents[2]
GOLD = {"doc_id": "note1", "source": "hand-made", "title": None,
        "entities": [{"name": "Mina Okafor", "type": "Person", "aliases": [], "spans": [[0, 11]]},
                     {"name": "Lagos", "type": "Location", "aliases": [], "spans": [[21, 26]]}],
        "relations": [{"head": "Mina Okafor", "relation": "lives_in", "tail": "Lagos",
                       "evidence": "Mina Okafor moved to Lagos."}],
        "hyperedges": [], "events": [], "temporal": []}


def _kinds_folder(tmp_path: Path) -> dict[str, Path]:
    """One valid file of every kind, none with a $schema line (found by name or keys)."""
    files = {
        "domain": tmp_path / "people.yaml",
        "view": tmp_path / "edges.yaml",
        "template": tmp_path / "visits.yaml",
        "config": tmp_path / "kgkit.yaml",
        "gold": tmp_path / "gold" / "note1.gold.json",
    }
    files["domain"].write_text("name: people\nentity_types:\n  - name: Person\n  - name: Location\n"
                               "relation_types:\n  - name: lives_in\n    head: [Person]\n    tail: [Location]\n")
    files["view"].write_text("name: edges\nstrategy: projection\nprojection:\n  relations: ['*']\n")
    files["template"].write_text("name: visits\nentity_types:\n  - name: Person\n  - name: Place\nrelation_types:\n"
                                 "  - name: visited\n    roles:\n      visitor: {types: [Person], required: true}\n"
                                 "      place: {types: [Place]}\n")
    files["config"].write_text("chunking:\n  size: 1500\ninput:\n  max_bytes: 5000000\n")
    files["gold"].parent.mkdir()
    files["gold"].write_text(json.dumps(GOLD, indent=1))
    (tmp_path / "gold" / "note1.txt").write_text("Mina Okafor moved to Lagos.")
    return files


def test_validate_finds_every_kind_and_passes_valid_files(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    files = _kinds_folder(tmp_path)
    paths = [*map(str, files.values()), str(tmp_path / "gold")]
    result = kgkit("validate", *paths)
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines() == [f"OK {p} ({k})" for k, p in [*files.items(), ("gold", tmp_path / "gold")]]


def test_validate_by_schema_line_and_every_shipped_file(tmp_path):
    shipped = sorted(ROOT.glob("domains/*.yaml")) + sorted(ROOT.glob("views/*.yaml")) + sorted(ROOT.glob("templates/*.yaml"))
    result = kgkit("validate", *map(str, shipped))
    assert result.exit_code == 0, result.output
    assert len(result.stdout.splitlines()) == len(shipped)
    odd = tmp_path / "thing.yaml"  # keys alone would say domain; its $schema line says template
    odd.write_text("# yaml-language-server: $schema=../kgkit/schemas/template.schema.json\nname: odd\n")
    result = kgkit("validate", str(odd))
    assert result.exit_code == 2
    assert result.stderr.splitlines() == [
        f"{odd}:2:1: missing required key 'entity_types'",
        f"{odd}:2:1: missing required key 'relation_types'",
        f"{odd}: 2 problems in this template file",
        "1 of 1 file invalid",
    ]


def test_validate_reports_every_file_with_line_accurate_errors(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    files = _kinds_folder(tmp_path)
    files["view"].write_text("name: edges\nstrategy: projektion\n")
    files["config"].write_text("chunking:\n  size: big\n")
    files["gold"].write_text(json.dumps({**GOLD, "relations": [{**GOLD["relations"][0], "tail": "Abuja"}]}, indent=1))
    result = kgkit("validate", *map(str, files.values()))
    assert result.exit_code == 2
    err = result.stderr
    assert f"{files['view']}:2:11: strategy: 'projektion' is not allowed; expected one of: projection, upgrade " \
           "(did you mean 'projection'?)" in err
    assert f"{files['config']}:2:9: chunking -> size: expected a whole number or nothing, got the text 'big'" in err
    assert f"{files['gold']}:" in err and "Abuja" in err
    assert result.stdout.splitlines() == [f"OK {files['domain']} (domain)", f"OK {files['template']} (template)"]
    assert err.splitlines()[-1] == "3 of 5 files invalid"


def test_validate_unknown_kind_and_special_files_are_reported_not_raised(tmp_path):
    unknown = tmp_path / "notes.yaml"
    unknown.write_text("shopping: [eggs, milk]\n")
    fifo = tmp_path / "pipe.yaml"
    os.mkfifo(fifo)
    result = _run_cli("validate", str(unknown), str(fifo), str(tmp_path / "missing.yaml"), cwd=tmp_path)
    assert result.returncode == 2
    lines = result.stderr.decode().splitlines()
    assert lines[0].startswith(f"{unknown}: cannot tell what kind of kgkit file this is")
    assert f"{fifo}: is a FIFO (named pipe), not a regular file; expected a kgkit file" in lines
    assert f"{tmp_path / 'missing.yaml'}: file not found" in lines
    assert lines[-1] == "3 of 3 files invalid"


def test_validate_a_file_that_is_not_a_yaml_mapping_shows_the_parse_problem_not_a_guessed_kind(tmp_path):
    env = tmp_path / ".env"
    env.write_text(f"OPENAI_API_KEY={SECRET}\n")
    broken = tmp_path / "half.yaml"
    broken.write_text("name: half\nentity_types: [Person, Place\n")
    result = kgkit("validate", str(env), str(broken))
    assert result.exit_code == 2
    assert SECRET not in result.output
    assert result.stderr.splitlines() == [
        f"{env}:1:1: expected a mapping (key: value lines) at the top level, got plain text (43 characters)",
        f"{env}: 1 problem in this file",
        f"{broken}:2:15: YAML syntax error: the bracket '[' opened here is never closed "
        "(the file ends at line 3 without closing it)",
        f"{broken}: 1 problem in this file",
        "2 of 2 files invalid",
    ]


def test_skill_retrieval_runs_skill_regexes_under_the_budget():
    """Retrieval matches each skill's regexes against the document head: the same budget applies."""
    from kgkit.skills.retrieve import score_skill

    skill = {"id": "s1", "kind": "entity", "target": "Thing", "pattern": {"phrases": [], "regex": ["(?:a|aa)+$"]},
             "instruction": "", "example": ""}
    with safe_regex.chunk_budget(0.05) as budget:
        assert score_skill(skill, "a" * 60 + "!", set()) == 0
    assert list(budget.skipped) == ["(?:a|aa)+$"]


_REGEX_PIECES = st.sampled_from(list("ab()[]|*+?{},.^$-\\dws ") + [
    "(?:", "(?P<n>", "(?=", "(?!", "(?<=", "(?>", "(?i:", "(?-i:", "(?#c)", "\\b", "{2,3}", "{,2}", "++", "*+",
    "[^]", "\\x41", "(?x)", "# c\n"])


@settings(max_examples=300, deadline=None)
@given(st.lists(_REGEX_PIECES, min_size=1, max_size=12).map("".join))
def test_the_nested_quantifier_check_never_raises(pattern):
    """Whatever compiles is either accepted or refused with a position inside the pattern."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", FutureWarning)  # "possible nested set": still a valid pattern
            re.compile(pattern)
    except re.error:
        return
    found = safe_regex.nested_quantifier(pattern)
    assert found is None or (0 <= found[0] < len(pattern) and pattern[found[0]] == "(")
