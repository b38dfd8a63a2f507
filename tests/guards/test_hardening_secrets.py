"""Passwords in a graph store URL: masked by ``kgkit config show``, and kept out of the
error a malformed or unreachable PostgreSQL URL gives (exit 2, no traceback); the API key
masked wherever an answer's data holds it."""
from __future__ import annotations

import pytest

from support.cli_support import kgkit
from kgkit.guards.secrets import mask_url, url_secrets

PASSWORD = "Pw-h28-7c1e9d"


@pytest.mark.parametrize("url", [f"postgresql://kg:{PASSWORD}@db.example:5432/corpus",
                                 f"postgres://kg:{PASSWORD}@/corpus?host=/tmp",
                                 f"postgresql://kg@/corpus?password={PASSWORD}&host=/tmp",
                                 f"postgresql://kg:{PASSWORD}@db@example/corpus"])
def test_config_show_masks_the_graph_url_password(cli_home, url):
    (cli_home / "kgkit.yaml").write_text(f"graph:\n  url: '{url}'\n")
    result = kgkit("config", "show", "--config", "kgkit.yaml")
    assert result.exit_code == 0, result.output
    assert PASSWORD not in result.output
    assert "kg" in result.output and "********" in result.output


MALFORMED = [f"postgresql://kg:{PASSWORD}@[::1/corpus",  # an unclosed IPv6 bracket: the driver quotes the URL
             f"postgresql://kg:{PASSWORD}%zz@localhost/corpus",  # a bad escape: the driver quotes the password
             f"postgresql://kg:{PASSWORD}@/corpus?nosuchoption=1",
             f"postgresql://kg:{PASSWORD}@ho st/corpus",
             f"postgresql://kg@/corpus?password={PASSWORD}&host=/nonexistent-h28"]


@pytest.mark.parametrize("url", MALFORMED)
def test_a_bad_postgresql_url_is_named_without_its_password(cli_home, url):
    pytest.importorskip("psycopg")
    result = kgkit("graph", "stats", url)
    assert result.exit_code == 2, result.output
    assert "cannot connect to the graph store" in result.output and "Traceback" not in result.output
    assert PASSWORD not in result.output and PASSWORD.replace("-", "%2D") not in result.output


def test_url_secrets_survive_malformed_urls():
    assert url_secrets(f"postgresql://u:{PASSWORD}@[::1") == [PASSWORD]
    assert url_secrets("postgresql://u:p%40ss@h/db") == ["p%40ss", "p@ss"]
    assert mask_url("postgresql://u@h/db?sslpassword=x&password=y") == "postgresql://u@h/db?sslpassword=***&password=***"
    assert mask_url("https://api.example/v1") == "https://api.example/v1"


@pytest.mark.parametrize("key", ["sk-live-0123456789abcdef", "k\u00e9y-with-accent-0123", 'sk-"quoted"-0123', "sk\\back-0123"])
def test_scrub_masks_a_key_wherever_answer_data_holds_it(key):
    from kgkit.guards.secrets import MASK, scrub

    clean = {"entities": [{"name": "Ann Lee", "type": "Person", "confidence": 0.9}], "n": [1, 2.5, None, True]}
    assert scrub(clean, key) == clean
    held = {"entities": [{"name": f"line one\nthen {key}", "type": "Person"}, {key: "as a key"}],
            "deep": [[{"evidence": f"\t{key}\u2028"}]]}
    out = scrub(held, key)
    assert key not in repr(out) and MASK in out["entities"][0]["name"] and MASK in out["deep"][0][0]["evidence"]
    assert out["entities"][1] == {MASK: "as a key"}
    assert scrub({1: key}, key) == {1: MASK}  # data JSON cannot hold: the walk decides
    assert scrub([2**70, key], key) == [2**70, MASK]
