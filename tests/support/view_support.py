"""Helpers of the viewer tests: the data a page embeds, a run folder with hostile names, and
a real headless Chromium (Debian's ``chromium`` and ``chromedriver``, driven by selenium)."""
from __future__ import annotations

import json
import os
import re
import shutil
import time
from pathlib import Path

import pytest

from kgkit import ids
from support.optional_parts import require_module, unavailable

HOSTILE_NAME = '</script><script>window.__pwned=1</script><img src=x onerror="window.__pwned=2">\u202eevil'
HOSTILE_QUOTE = '<img src=x onerror="window.__pwned=3"> </script> & \u2028 {{data}} \u202egnp.exe'


def page_data(html: str) -> dict:
    """The JSON the page embeds (the graph, and apart from it the evidence), read back the way the page reads it."""
    parts = {}
    for part in ("data", "evidence"):
        match = re.search(rf'<script type="application/json" id="kgkit-{part}">(.*?)</script>', html, re.S)
        assert match, f"no {part} element in the page"
        parts[part] = json.loads(match.group(1))
    return {**parts["data"], "evidence": parts["evidence"]}


def hostile_run(source: Path, dest: Path, party: str) -> str:
    """A copy of run folder ``source`` whose Party ``party`` is named HOSTILE_NAME (its id
    recomputed and re-pointed everywhere) and whose every quote is HOSTILE_QUOTE; returns the new id."""
    shutil.copytree(source, dest)
    nodes = json.loads((dest / "nodes.json").read_text(encoding="utf-8"))
    node = next(n for n in nodes["nodes"] if n["type"] == "Party" and n["name"] == party)
    old, new = node["id"], ids.node_id("Party", HOSTILE_NAME)
    node["name"], node["aliases"] = HOSTILE_NAME, [HOSTILE_NAME + " alias"]
    (dest / "nodes.json").write_text(json.dumps(nodes).replace(old, new), encoding="utf-8")
    for view in (dest / "views").glob("*.json"):
        data = json.loads(view.read_text(encoding="utf-8").replace(old, new))
        for kind in ("edges", "hyperedges", "events"):
            for item in data.get(kind, []):
                if item.get("evidence", {}).get("quote"):
                    item["evidence"]["quote"] = HOSTILE_QUOTE
        view.write_text(json.dumps(data), encoding="utf-8")
    return new


def expected_drawn(data, view="", hidden_types=()):
    """What the page should draw with its default statuses: nodes of shown types (in a view, those
    an item of the view ends), the item nodes of n-ary items and events with an end shown,
    documents (all views only); their links."""
    types = {n["id"]: n["type"] for n in data["nodes"]}
    shown = lambda n: n in types and types[n] not in hidden_types  # noqa: E731
    items = [it for it in data["items"] if it["status"] in ("verified", "accepted") and (not view or view in it["views"])]
    nodes, links, item_nodes = set(), 0, 0
    for it in items:
        ends = [e[1] for e in it["ends"] if shown(e[1])]
        if it["kind"] in ("edge", "temporal"):
            if len(ends) == 2:
                links += 1
                nodes.update(ends)
        elif ends:
            item_nodes += 1
            links += len(ends)
            nodes.update(ends)
    if not view:
        nodes |= {n for n in types if shown(n)}
    docs = [] if view else data["documents"]
    links += sum(1 for d in docs if d.get("node") in nodes)
    return {"nodes": len(nodes) + item_nodes + len(docs), "edges": links}


def console_errors(browser) -> list[dict]:
    """Console errors and warnings of the page (a CSP violation or a failed request is one)."""
    return [m for m in browser.console() if m["level"] in ("SEVERE", "WARNING")]


class Browser:
    """One headless Chromium with the network off; console messages kept per page."""

    def __init__(self, driver):
        self.driver = driver

    def open(self, path: Path, timeout: float = 60.0):
        self.driver.get(Path(path).resolve().as_uri())
        deadline = time.monotonic() + timeout
        while not self.driver.execute_script("return !!(window.kgkitViewer && window.kgkitViewer.ready)"):
            if time.monotonic() > deadline:
                raise AssertionError(f"the page did not get ready in {timeout}s: {self.console()}")
            time.sleep(0.05)
        return self

    def js(self, script: str, *args):
        return self.driver.execute_script(script, *args)

    def console(self) -> list[dict]:
        return self.driver.get_log("browser")

    def requests(self) -> list[str]:
        """Every resource the page asked for (none may be: the page is self-contained)."""
        return self.js("return performance.getEntriesByType('resource').map(e => e.name)")

    def screenshot(self, name: str) -> Path:
        folder = Path(os.environ.get("KGKIT_TEST_ARTIFACTS") or Path.cwd() / "test-artifacts")
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / name
        self.driver.save_screenshot(str(path))
        return path


def chromium_options(webdriver, binary: str):
    opts = webdriver.ChromeOptions()
    for arg in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=1400,900",
                # no GPU flags: the page draws on a 2D canvas, which Chromium's defaults draw in
                # software here (forcing SwiftShader's GL made every frame wait on the GPU process)
                # no network: every host name fails, no proxy reachable
                "--host-resolver-rules=MAP * ~NOTFOUND", "--proxy-server=http://127.0.0.1:9",
                "--no-first-run", "--disable-background-networking", "--disable-component-update"):
        opts.add_argument(arg)
    opts.binary_location = binary
    opts.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    return opts


@pytest.fixture(scope="module")
def browser():
    """A real browser, or a skip (a failure when KGKIT_REQUIRE names ``browser``)."""
    require_module("selenium", "browser")
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    binary = os.environ.get("KGKIT_CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")
    driver_path = shutil.which("chromedriver")
    if not binary or not driver_path:
        unavailable("browser", "browser tests skipped: no chromium and chromedriver (apt-get install chromium chromium-driver)")
    driver = webdriver.Chrome(service=Service(driver_path), options=chromium_options(webdriver, binary))
    try:
        driver.execute_cdp_cmd("Network.enable", {})
        driver.execute_cdp_cmd("Network.emulateNetworkConditions", {
            "offline": True, "latency": 0, "downloadThroughput": 0, "uploadThroughput": 0})
        yield Browser(driver)
    finally:
        driver.quit()
