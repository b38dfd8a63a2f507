"""How fast a `kgkit view` page becomes usable in a real browser, at 500, 5,000 and 20,000 nodes.

The graph is made up but shaped like a corpus graph: N entities of eight types with aliases in
N/50 documents and 4N links, of which 70 % are binary edges and the rest the role links of
n-ary items (three roles each, drawn as small nodes of their own); every item has an evidence
row with a quote inside a 500-character passage. The page is the one `kgkit view` writes
(kgkit.view.page.render), opened from a file:// URL in Debian's headless Chromium with its
default GPU settings (this VM has none: the 2D canvas is drawn in software) and the network
off. Per size it prints:

* build: seconds to render the page in Python, and its size;
* interactive: milliseconds from navigation start until the first frame is drawn with every
  handler attached (search, filters, clicks work from then on; the ForceAtlas2 layout then
  refines positions in a web worker);
* first_search / first_evidence: right after that, with the layout still running, a name
  searched and its node focused (until the next frame), then an item selected until its
  evidence panel shows the marked quote: what "interactive" is worth to someone who acts at once;
* browser_cpu_s: CPU seconds the browser's processes spent from navigation until interactive
  (an upper bound: it includes polling the page for readiness), in all and by kind of process,
  the figure that load does not stretch;
* search+focus: a name searched, its node focused at one hop, the panel filled and the frame redrawn;
* filter: one type unchecked and the graph redrawn;
* script_start: when the page's own script starts (the HTML and the libraries parsed before it),
  the page's timing marks (data parsed, arrays built, first frame drawn, controls made, the
  whole page read), and the machine's load average, since on a shared machine every figure
  moves with it.

Search+focus and filter are timed with the layout stopped.

``--vis-network FILE`` also opens the same graph drawn by vis-network (its standalone UMD
build, e.g. from the npm package) with positions given and physics off, for the comparison in
docs/viewer.md.

    python benchmarks/viewer_bench.py [--nodes 500 5000 20000] [--vis-network vis-network.min.js]
    python benchmarks/viewer_bench.py --build-only [--repeat 3]   # the Python page build alone
"""
from __future__ import annotations

import argparse
import json
import os
import random
import re
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from kgkit.view.model import ViewerData, spread  # noqa: E402
from kgkit.view.page import render  # noqa: E402

TYPES = ["Party", "Agreement", "Date", "Jurisdiction", "Person", "Duration", "Money", "ClauseType"]
PASSAGE = "The Supplier shall deliver the goods described in Schedule A to the Customer's premises " * 3


def synthetic(nodes: int, seed: int = 0) -> ViewerData:
    rng = random.Random(seed)
    docs = [{"id": f"d_{i:06d}", "name": f"contract_{i:05d}", "title": f"Agreement {i}", "pages": 12, "node": None,
             "source": None, "nodes": 0, "items": 0} for i in range(max(1, nodes // 50))]
    radius = 40 * nodes ** 0.5
    node_rows = []
    for i in range(nodes):
        x, y = spread(f"n_{i:08d}", radius)
        node_rows.append({"id": f"n_{i:08d}", "type": TYPES[i % len(TYPES)], "name": f"Entity {i} Holdings",
                          "aliases": [f"E{i}"], "docs": sorted(rng.sample(range(len(docs)), min(2, len(docs)))),
                          "scope": "corpus", "x": x, "y": y})
    links = 4 * nodes
    binary, nary = int(links * 0.7), (links - int(links * 0.7)) // 3
    items, evidence = [], {}
    for i in range(binary + nary):
        kind = "edge" if i < binary else "hyperedge"
        k = 2 if kind == "edge" else 3
        ends = [n["id"] for n in rng.sample(node_rows, k)]
        roles = ["head", "tail"] if kind == "edge" else ["party", "counterparty", "date"]
        item = {"id": f"{kind[0]}_{i:08d}", "item": f"{kind[0]}_{i:08d}", "kind": kind,
                "rel": rng.choice(["HAS_PARTY", "GOVERNED_BY", "SIGNED_ON", "PAYS"]) if kind == "edge" else "Term",
                "ends": [list(p) for p in zip(roles, ends)], "views": ["binary"] if kind == "edge" else ["nary"],
                "docs": [rng.randrange(len(docs))], "conf": 0.8, "status": "verified"}
        if kind == "hyperedge":
            item["x"], item["y"] = spread(item["id"], radius)
        items.append(item)
        evidence[item["id"]] = [{"doc": item["docs"][0], "page": 3, "view": item["views"][0], "quote": "deliver the goods",
                                 "pre": PASSAGE[:200], "mark": "deliver the goods", "post": PASSAGE[:280]}]
    return ViewerData(meta={"title": f"synthetic {nodes}", "tenant": "bench", "version": 1, "kgkit": "bench",
                            "text": True}, nodes=node_rows, items=items, documents=docs, evidence=evidence)


VIS_PAGE = """<!doctype html><html><body style="margin:0"><div id="c" style="width:1400px;height:860px"></div>
<script type="application/json" id="d">{data}</script><script>{lib}</script><script>
const D = JSON.parse(document.getElementById('d').textContent);
const nodes = D.nodes.map(n => ({{id: n.id, x: n.x, y: n.y, label: n.name, size: 4}}));
const edges = [];
for (const it of D.items) {{
  if (it.kind === 'edge') edges.push({{id: it.id, from: it.ends[0][1], to: it.ends[1][1]}});
  else {{ nodes.push({{id: it.id, x: it.x, y: it.y, size: 2}}); it.ends.forEach((e, k) => edges.push({{id: it.id + k, from: it.id, to: e[1]}})); }}
}}
const net = new vis.Network(document.getElementById('c'), {{nodes: new vis.DataSet(nodes), edges: new vis.DataSet(edges)}},
  {{physics: false, layout: {{improvedLayout: false}}, edges: {{smooth: false}}}});
net.once('afterDrawing', () => {{ window.visReady = performance.now(); }});
</script></body></html>"""


def browser_cpu(root: int) -> dict[str, float]:
    """CPU seconds (user + system) used so far by every process under ``root`` (chromedriver),
    by kind of process (browser, renderer, gpu-process, utility, ...) and in all. On a loaded
    machine wall time stretches with everyone else's work; this is the page's own cost."""
    children: dict[int, list[int]] = {}
    ticks: dict[int, int] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        pid = int(stat.parent.name)
        children.setdefault(int(fields[1]), []).append(pid)
        ticks[pid] = int(fields[11]) + int(fields[12])
    out: dict[str, float] = {}
    todo = [root]
    while todo:
        pid = todo.pop()
        try:  # Chromium rewrites its processes' titles: the arguments may be one string
            found = re.search(rb"--type=([\w-]+)", Path(f"/proc/{pid}/cmdline").read_bytes())
        except OSError:
            found = None
        kind = found.group(1).decode() if found else "browser"
        out[kind] = out.get(kind, 0.0) + ticks.get(pid, 0) / os.sysconf("SC_CLK_TCK")
        todo.extend(children.get(pid, []))
    out["all"] = sum(out.values())
    return out


TIMED = """const done = arguments[arguments.length - 1], t = performance.now();
{body}
const wait = () => (({until}) ? done(performance.now() - t) : requestAnimationFrame(wait));
requestAnimationFrame(wait);"""


def timed(browser, body: str, until: str = "true", *args) -> float:
    """Milliseconds from running ``body`` in the page until ``until`` holds at a frame."""
    return browser.driver.execute_async_script(TIMED.format(body=body, until=until), *args)


def measure(browser, data: ViewerData, folder: Path, vis: str | None) -> dict:
    t0 = time.perf_counter()
    page = render(data.to_json())
    build = time.perf_counter() - t0
    path = folder / f"view_{len(data.nodes)}.html"
    path.write_text(page, encoding="utf-8")
    browser.driver.get("about:blank")
    root = browser.driver.service.process.pid
    cpu0 = browser_cpu(root)
    browser.open(path, timeout=300)
    cpu1 = browser_cpu(root)
    cpu = {k: round(v - cpu0.get(k, 0.0), 2) for k, v in cpu1.items()}
    ready = browser.js("return kgkitViewer.readyAt")
    marks = browser.js("return kgkitViewer.marks")
    drawn = browser.js("return kgkitViewer.drawn()")
    name = data.nodes[len(data.nodes) // 2]["name"]
    focus = "kgkitViewer.focus(kgkitViewer.search(arguments[0])[0]);"
    # at once, with the layout still running: what a user who searches straight away waits for
    first = timed(browser, focus, "true", name)
    item = data.items[len(data.items) // 2]["id"]
    evidence = timed(browser, "kgkitViewer.select(arguments[0]);", "document.querySelector('#panel mark')", item)
    browser.js("if (kgkitViewer.layoutRunning()) document.getElementById('layout').click()")  # timings below: layout off
    browser.js("kgkitViewer.focus(null); document.getElementById('clear').click()")
    search = timed(browser, focus, "true", name)
    browser.js("kgkitViewer.focus(null); document.getElementById('clear').click()")
    filt = timed(browser, "document.querySelector('#legend input[data-value=\"Party\"]').click();")
    errors = [m["message"][:200] for m in browser.console() if m["level"] in ("SEVERE", "WARNING")]
    out = {"nodes": len(data.nodes), "links": drawn["edges"], "drawn_nodes": drawn["nodes"], "build_s": round(build, 2),
           "page_mb": round(len(page.encode()) / 1e6, 1), "interactive_ms": round(ready),
           "browser_cpu_s": cpu["all"], "cpu_by_process": cpu, "first_search_ms": round(first),
           "first_evidence_ms": round(evidence), "search_focus_ms": round(search), "filter_ms": round(filt),
           "script_start_ms": round(marks["start"]), "marks": {k: round(v) for k, v in marks.items()},
           "console_errors": errors, "load_average": [round(x, 1) for x in os.getloadavg()]}
    if vis:
        vis_path = folder / f"vis_{len(data.nodes)}.html"
        lib = Path(vis).read_text(encoding="utf-8")
        vis_path.write_text(VIS_PAGE.format(data=json.dumps(data.to_json()).replace("<", "\\u003c"), lib=lib),
                            encoding="utf-8")
        browser.driver.get(vis_path.as_uri())
        deadline = time.monotonic() + 300
        while not browser.js("return window.visReady || null") and time.monotonic() < deadline:
            time.sleep(0.1)
        out["vis_network_first_frame_ms"] = round(browser.js("return window.visReady || -1"))
    return out


def build_only(data: ViewerData, repeat: int) -> dict:
    """The page build alone, ``repeat`` times: the best and the worst seconds, CPU seconds of
    the best, and the load average (the build runs on one core; the load stretches its wall time)."""
    walls, cpus = [], []
    for _ in range(repeat):
        t0, c0 = time.perf_counter(), time.process_time()
        page = render(data.to_json())
        walls.append(time.perf_counter() - t0)
        cpus.append(time.process_time() - c0)
    best = walls.index(min(walls))
    return {"nodes": len(data.nodes), "items": len(data.items), "build_s": round(walls[best], 3),
            "build_cpu_s": round(cpus[best], 3), "worst_s": round(max(walls), 3),
            "page_mb": round(len(page.encode()) / 1e6, 1), "load_average": [round(x, 1) for x in os.getloadavg()]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--nodes", type=int, nargs="+", default=[500, 5000, 20000])
    parser.add_argument("--vis-network", help="vis-network's standalone UMD build, to draw the same graph with it")
    parser.add_argument("--build-only", action="store_true",
                        help="only the page build in Python (no browser): its seconds (best of --repeat) and size")
    parser.add_argument("--repeat", type=int, default=3, help="with --build-only: builds per size")
    args = parser.parse_args()
    if args.build_only:
        for n in args.nodes:
            print(json.dumps(build_only(synthetic(n), args.repeat)), flush=True)
        return
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    from support.view_support import Browser, chromium_options

    binary = shutil.which("chromium") or shutil.which("chromium-browser")
    driver = webdriver.Chrome(service=Service(shutil.which("chromedriver")), options=chromium_options(webdriver, binary))
    driver.set_script_timeout(600)
    driver.execute_cdp_cmd("Network.enable", {})
    driver.execute_cdp_cmd("Network.emulateNetworkConditions",
                           {"offline": True, "latency": 0, "downloadThroughput": 0, "uploadThroughput": 0})
    try:
        with tempfile.TemporaryDirectory() as tmp:
            for n in args.nodes:
                print(json.dumps(measure(Browser(driver), synthetic(n), Path(tmp), args.vis_network)), flush=True)
    finally:
        driver.quit()


if __name__ == "__main__":
    main()
