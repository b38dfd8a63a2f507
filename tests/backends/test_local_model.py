"""``llm.model: local/PATH.gguf``: the file checked before loading, the extra named, runaways cut.

These need neither llama-cpp-python nor a real model (the GGUF files are written here);
tests/backends/test_local_model_real.py runs the real one (marked ``model``).
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from support.cli_support import kgkit
from kgkit.backends.gguf import inspect
from kgkit.backends.local import LocalModel, model_path
from kgkit.backends.runaway import RunawayWatch, salvage
from kgkit.errors import ProviderConfigError
from support.local_model_support import write_gguf

DOC = "Acme Corp hired Jane Doe in Paris.\n"


@pytest.fixture
def doc(cli_home):
    path = cli_home / "doc.txt"
    path.write_text(DOC)
    return path


def extract_with(model: str, doc: Path, *extra: str):
    return kgkit("extract", "--model", model, "--out", "out", *extra, str(doc))


def assert_refused(result, *words: str) -> str:
    """Exit 2, the words in the message, no traceback, and no output written."""
    output = result.output + (result.stderr if result.stderr_bytes is not None else "")
    assert result.exit_code == 2, output
    assert "Traceback" not in output
    for word in words:
        assert word in output, output
    assert not Path("out").exists()
    return output


def test_a_missing_model_file_exits_2_naming_it(doc):
    assert_refused(extract_with("local/models/absent.gguf", doc), "absent.gguf", "no such model file")


def test_a_file_that_is_not_gguf_exits_2_naming_it(doc, cli_home):
    (cli_home / "page.gguf").write_text("<html>Not found</html>")
    assert_refused(extract_with("local/page.gguf", doc), "page.gguf", "not a GGUF model file")


def test_a_truncated_model_file_exits_2_with_the_sizes(doc, cli_home):
    write_gguf(cli_home / "half.gguf", elements=1000, data_bytes=1000)  # 4,000 bytes of data needed
    out = assert_refused(extract_with("local/half.gguf", doc), "half.gguf", "truncated")
    whole = inspect(write_gguf(cli_home / "whole.gguf", elements=1000))
    assert f"needs {whole.needed:,}" in out


def test_a_header_cut_short_is_truncated_too(tmp_path):
    path = write_gguf(tmp_path / "m.gguf")
    path.write_bytes(path.read_bytes()[:40])
    with pytest.raises(ProviderConfigError, match="truncated"):
        inspect(path)


def test_a_sha256_other_than_the_configured_one_exits_2_with_both(doc, cli_home):
    write_gguf(cli_home / "m.gguf")
    (cli_home / "kgkit.yaml").write_text("llm:\n  model_sha256: " + "ab" * 32 + "\n")
    out = assert_refused(extract_with("local/m.gguf", doc), "m.gguf", "ab" * 32, "differs from llm.model_sha256")
    assert inspect(cli_home / "m.gguf").size > 0 and "sha256" in out


def test_without_llama_cpp_the_error_names_the_extra(doc, cli_home, monkeypatch):
    write_gguf(cli_home / "m.gguf")
    monkeypatch.setitem(sys.modules, "llama_cpp", None)  # import llama_cpp raises ImportError
    assert_refused(extract_with("local/m.gguf", doc), "llama-cpp-python", "kgkit[local]")


class _Tokens:
    """llama.cpp's tokenizer as far as the context-window check uses it: a token per 4 bytes."""

    def tokenize(self, data: bytes, add_bos: bool = False, special: bool = False) -> list[int]:
        return [0] * (len(data) // 4 + 1)


@pytest.mark.parametrize("out", ["out", "out/deeper/run"])
def test_a_prompt_over_the_context_window_leaves_no_run_folder(cli_home, monkeypatch, out):
    (cli_home / "long.txt").write_text("Acme Corp hired Jane Doe in Paris. " * 300)
    (cli_home / "kgkit.yaml").write_text("llm:\n  context_window: 2048\n  max_tokens: 256\n"
                                         "chunking:\n  size: 6000\n  overlap: 0\n")
    write_gguf(cli_home / "m.gguf", context=4096)
    monkeypatch.setitem(sys.modules, "llama_cpp", type(sys)("llama_cpp"))  # present; never asked to generate
    monkeypatch.setattr(LocalModel, "llama", lambda self: _Tokens())

    result = kgkit("extract", "--model", "local/m.gguf", "--out", out, "--no-cache", "long.txt")

    assert result.exit_code == 2, result.output
    assert "context window of 2048 tokens" in result.output and "set chunking.size to" in result.output
    assert "Traceback" not in result.output
    assert not (cli_home / "out").exists(), sorted(str(p) for p in (cli_home / "out").rglob("*"))


def test_the_header_gives_the_context_length_and_a_window_beyond_it_is_refused(tmp_path, monkeypatch):
    path = write_gguf(tmp_path / "m.gguf", context=512)
    model = inspect(path)
    assert (model.architecture, model.context_length, model.needed) == ("qwen2", 512, path.stat().st_size)
    monkeypatch.setitem(sys.modules, "llama_cpp", type(sys)("llama_cpp"))  # present; never loaded here
    assert LocalModel(f"local/{path}").context_window == 512  # the model's own, below the default
    # every backend of the file (each stage's, each document's) takes turns on its one llama.cpp context
    assert LocalModel(f"local/{path}")._lock is LocalModel(f"local/{path}")._lock
    with pytest.raises(ProviderConfigError, match="trained with 512"):
        LocalModel(f"local/{path}", context_window=4096)


def test_a_relative_path_is_read_from_the_working_folder(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert model_path("local/models/m.gguf") == tmp_path / "models" / "m.gguf"
    assert model_path("local//abs/m.gguf") == Path("/abs/m.gguf")


def test_the_config_file_checks_the_sha256_form(doc, cli_home):
    (cli_home / "kgkit.yaml").write_text("llm:\n  model_sha256: not-a-digest\n")
    assert_refused(extract_with("local/m.gguf", doc), "model_sha256")


# -- runaways -----------------------------------------------------------------------------------

ITEM_A, ITEM_B = {"name": "Acme", "type": "Org"}, {"name": "Paris", "type": "Place"}


def test_a_list_that_repeats_old_items_is_cut_and_salvaged_without_repeats():
    text = '{"entities": [' + ", ".join(json.dumps(i) for i in [ITEM_A, ITEM_B] * 6)
    watch = RunawayWatch()
    stopped_at = next(i for i in range(0, len(text), 5) if watch.feed(text[i:i + 5]))
    assert "repeated earlier ones" in watch.reason and stopped_at < len(text) - 5
    assert salvage(watch.text) == {"entities": [ITEM_A, ITEM_B]}


def test_a_list_of_new_items_is_never_cut():
    watch = RunawayWatch()
    items = [{"name": f"Company {n}", "type": "Org"} for n in range(200)]
    assert not watch.feed(json.dumps({"entities": items}))
    assert watch.reason is None


def test_an_endless_string_and_endless_whitespace_are_cut():
    long_string, blank = RunawayWatch(), RunawayWatch()
    assert long_string.feed('{"entities": [{"name": "' + "ha" * 1500)
    assert blank.feed('{"entities": [' + " \n" * 150)
    assert "string" in long_string.reason and "whitespace" in blank.reason


def test_salvage_keeps_only_what_the_schema_takes_and_gives_none_without_an_item():
    cut = '{"entities": [{"name": "Acme", "type": "Org"}, {"name": "Paris"}, {"na'
    assert salvage(cut, lambda d: all("type" in i for i in d["entities"])) == {"entities": [ITEM_A]}
    assert salvage('{"entities": [{"na') is None and salvage("no json at all") is None
