"""One self-contained HTML page: the viewer's script, its vendored libraries and the data, inline.

Nothing is fetched when the page opens (no CDN, no font, no image): it works from a
``file://`` URL on a machine with no network. Document text is data here, never markup:
the data goes in a ``<script type="application/json">`` element with every ``<``, ``>``,
``&`` and line/paragraph separator written as a JSON escape, so no quote or name can end
the element, and the viewer's script puts text into the page with ``textContent`` only.
Behind both, the page's Content-Security-Policy lets only its own scripts run (each by
its sha256) and allows no request at all: a script injected anyway would not run.
"""
from __future__ import annotations

import base64
import hashlib
import html
import json
import re
from importlib import resources
from typing import Any

#: Inlined in this order: the graph model and its layout (after the first frame), then kgkit's
#: renderer (a 2D canvas, draw.js) and its script.
VENDOR = ("graphology.umd.min.js", "graphology-layout-forceatlas2.min.js")
SCRIPTS = ("draw.js", "viewer.js")

_JSON_ESCAPES = (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026"), ("\u2028", "\\u2028"), ("\u2029", "\\u2029"))


def _asset(folder: str, name: str) -> str:
    return resources.files("kgkit.view").joinpath(folder, name).read_text(encoding="utf-8")


def embed_json(data: Any) -> str:
    """JSON that can sit inside a ``<script>`` element whatever strings it holds.

    Written by orjson: ``json``'s encoder took most of a large page's build (1.8 of 2.1 s
    at 5,000 nodes, tens of seconds under heavy load), orjson a tenth of that. The text is
    ``json.dumps(data, ensure_ascii=False, separators=(",", ":"))``'s but for the spelling
    of numbers under 0.0001 (``1e-05``: ``0.00001``, the same number to a JSON reader) and
    NaN, which orjson writes as null (``json`` wrote ``NaN``, which no JSON reader takes);
    what orjson refuses (a key that is not a string, an integer beyond 64 bits) ``json``
    still writes."""
    import orjson

    try:
        text = orjson.dumps(data).decode("utf-8")
    except TypeError:  # orjson.JSONEncodeError
        text = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    for char, escape in _JSON_ESCAPES:  # str.replace runs in C: str.translate took seconds on a large page
        text = text.replace(char, escape)
    return text


def _script(source: str) -> str:
    """A script, inline; a library's own text never contains ``</script`` but the check is cheap."""
    if "</script" in source.lower():
        raise ValueError("an inlined script may not contain '</script'")
    return f"<script>{source}</script>"


def _csp(scripts: list[str]) -> str:
    """No request of any kind; only these scripts (by hash) and workers they make from blobs."""
    hashes = " ".join("'sha256-" + base64.b64encode(hashlib.sha256(s.encode()).digest()).decode() + "'"
                      for s in scripts)
    return (f"default-src 'none'; script-src {hashes}; worker-src blob:; style-src 'unsafe-inline'; "
            "img-src data: blob:; base-uri 'none'; form-action 'none'")


def render(data: dict[str, Any]) -> str:
    """The page for ``data`` (:meth:`kgkit.view.model.ViewerData.to_json`)."""
    title = html.escape(f"kgkit view: {data['meta']['title']}")
    sources = [_asset("vendor", name) for name in VENDOR] + [_asset("assets", name) for name in SCRIPTS]
    # one replacement pass over the template, so no piece is searched for another's placeholder
    graph = {k: v for k, v in data.items() if k != "evidence"}
    pieces = {"{{csp}}": html.escape(_csp(sources)), "{{title}}": title,
              "{{style}}": _asset("assets", "viewer.css"), "{{data}}": embed_json(graph),
              # parsed on the first click, not on opening: most of a page's bytes are evidence
              "{{evidence}}": embed_json(data.get("evidence", {})),
              "{{scripts}}": "\n".join(_script(s) for s in sources)}
    template = _asset("assets", "viewer.html")
    pattern = re.compile("|".join(re.escape(k) for k in pieces))
    return pattern.sub(lambda m: pieces[m.group(0)], template)
