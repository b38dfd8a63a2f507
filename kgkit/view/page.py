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

#: Inlined in this order: the graph model, the WebGL renderer, the layout, then kgkit's script.
VENDOR = ("graphology.umd.min.js", "sigma.min.js", "graphology-layout-forceatlas2.min.js")

_JSON_ESCAPES = (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026"), ("\u2028", "\\u2028"), ("\u2029", "\\u2029"))


#: Statements of a vendored file dropped as it is inlined (the file itself stays as npm ships it):
#: sigma 3.0.3's bundle builds two image programs at load and throws them away, each on a WebGL
#: context of its own, which in software rendering cost as long as the page's first frame.
_DEAD_CODE = {"sigma.min.js": ('Ft(),Ft({keepWithinCircle:!1,size:{mode:"force",value:256},drawingMode:"color",'
                               'correctCentering:!0});',)}


def _asset(folder: str, name: str) -> str:
    text = resources.files("kgkit.view").joinpath(folder, name).read_text(encoding="utf-8")
    for statement in _DEAD_CODE.get(name, ()):
        if text.count(statement) != 1:
            raise ValueError(f"{name}: the statement to drop is not there once (was the library upgraded?)")
        text = text.replace(statement, "")
    return text


def embed_json(data: Any) -> str:
    """JSON that can sit inside a ``<script>`` element whatever strings it holds."""
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
    sources = [_asset("vendor", name) for name in VENDOR]
    viewer = _asset("assets", "viewer.js")
    # one replacement pass over the template, so no piece is searched for another's placeholder
    graph = {k: v for k, v in data.items() if k != "evidence"}
    pieces = {"{{csp}}": html.escape(_csp(sources + [viewer])), "{{title}}": title,
              "{{style}}": _asset("assets", "viewer.css"), "{{data}}": embed_json(graph),
              # parsed on the first click, not on opening: most of a page's bytes are evidence
              "{{evidence}}": embed_json(data.get("evidence", {})),
              "{{libraries}}": "\n".join(_script(s) for s in sources), "{{viewer}}": _script(viewer)}
    template = _asset("assets", "viewer.html")
    pattern = re.compile("|".join(re.escape(k) for k in pieces))
    return pattern.sub(lambda m: pieces[m.group(0)], template)
