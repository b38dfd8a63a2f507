"""The viewer page in a real browser: Debian's headless Chromium, network off, opening the
file from a ``file://`` URL. It must draw what the data holds, with no console message;
search must focus a node, the view switcher and filters must change what is drawn, the
evidence panel must show the quote marked in its passage; a page of hostile names runs
nothing. Screenshots go to $KGKIT_TEST_ARTIFACTS (default ./test-artifacts).

Skipped without chromium and chromedriver, except when KGKIT_REQUIRE names ``browser``
(.ci/run installs them and runs this file so)."""
from __future__ import annotations

import pytest

from support.cli_support import kgkit
from support.graph_support import small_runs  # noqa: F401  (fixture)
from support.view_support import HOSTILE_NAME, HOSTILE_QUOTE, browser, console_errors, expected_drawn, hostile_run, page_data  # noqa: F401,E501


@pytest.fixture(scope="module")
def corpus_page(small_runs, tmp_path_factory):
    out = tmp_path_factory.mktemp("view") / "corpus.html"
    result = kgkit("view", str(small_runs["alpha"].parent), "-o", str(out))
    assert result.exit_code == 0, result.output
    return out, page_data(out.read_text(encoding="utf-8"))


def test_the_page_opens_offline_and_draws_the_graph(browser, corpus_page):
    path, data = corpus_page
    browser.open(path)
    assert console_errors(browser) == []
    assert browser.requests() == []
    assert browser.js("return kgkitViewer.drawn()") == expected_drawn(data)
    # the 2D canvas holds the drawing: some of its pixels are not the white background
    inked = browser.js("const c = document.querySelector('#graph canvas'), d = c.getContext('2d')"
                       ".getImageData(0, 0, c.width, c.height).data; let k = 0;"
                       "for (let i = 0; i < d.length; i += 4) if (d[i] < 250 || d[i + 1] < 250 || d[i + 2] < 250) k++;"
                       "return k")
    assert inked > 500
    browser.screenshot("viewer-corpus.png")


def test_search_focuses_a_node_and_its_evidence_shows_the_quote(browser, corpus_page):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    path, data = corpus_page
    browser.open(path)
    box = browser.driver.find_element(By.ID, "search")
    box.send_keys("harbor")
    assert browser.js("return document.querySelectorAll('#results li').length") >= 1
    box.send_keys(Keys.ENTER)
    harbor = next(n for n in data["nodes"] if n["name"].startswith("Harbor Analytics"))
    panel = browser.driver.find_element(By.ID, "panel")
    assert panel.get_attribute("data-selected") == harbor["id"]
    assert harbor["name"] in panel.find_element(By.TAG_NAME, "h2").text
    # a focus of one hop draws the node's neighbourhood only
    browser.js("document.getElementById('hops').value = '1'; document.getElementById('hops').dispatchEvent(new Event('change'))")
    focused = browser.js("return kgkitViewer.drawn()")
    assert 1 < focused["nodes"] < expected_drawn(data)["nodes"]
    # an item of the node: its evidence, the quote marked inside the passage of its document
    panel.find_element(By.CSS_SELECTOR, "ul li a.link").click()
    item = data["evidence"][panel.get_attribute("data-selected")]
    marks = [m.text for m in panel.find_elements(By.TAG_NAME, "mark")]
    assert marks and marks[0] == item[0]["mark"].strip() and item[0]["quote"] == item[0]["mark"]
    assert data["documents"][item[0]["doc"]]["name"] in panel.text
    assert console_errors(browser) == []
    browser.screenshot("viewer-evidence.png")


def test_a_click_on_a_drawn_node_or_link_opens_its_panel(browser, corpus_page):
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.by import By

    path, data = corpus_page
    browser.open(path)
    browser.js("if (kgkitViewer.layoutRunning()) document.getElementById('layout').click()")
    canvas = browser.driver.find_element(By.CSS_SELECTOR, "#graph canvas")
    size = canvas.size
    harbor = next(n for n in data["nodes"] if n["name"].startswith("Harbor Analytics"))
    # a focus of one hop: the node drawn alone with its neighbours, and the camera fits them, however
    # far the layout has spread the rest of the graph
    browser.js("document.getElementById('hops').value = '1'; document.getElementById('hops').dispatchEvent(new Event('change'))")
    browser.js("kgkitViewer.focus(arguments[0])", harbor["id"])
    # as a long layout run does on a fast machine: a node outside the focus flung far away
    assert browser.js("""const m = kgkitViewer.model, far = m.nodeHidden.indexOf(1);
        if (far < 0) return false;
        let x0 = Infinity, x1 = -Infinity;
        for (let i = 0; i < m.n; i++) { x0 = Math.min(x0, m.x[i]); x1 = Math.max(x1, m.x[i]); }
        m.x[far] = x1 + 40 * (x1 - x0); kgkitViewer.renderer.moved(); return true""")
    browser.js("kgkitViewer.focus(arguments[0])", harbor["id"])
    camera_still(browser)
    at = browser.js("return kgkitViewer.screenOf(arguments[0])", harbor["id"])
    browser.js("document.getElementById('panel').dataset.selected = ''")
    ActionChains(browser.driver).move_to_element_with_offset(
        canvas, int(at["x"] - size["width"] / 2), int(at["y"] - size["height"] / 2)).click().perform()
    assert browser.driver.find_element(By.ID, "panel").get_attribute("data-selected") == harbor["id"]
    # a link: a point on a drawn arrow (a binary edge) with no node there, where the renderer's own
    # picking finds that link. Points along each link are tried, so wherever the layout had moved
    # the nodes when it was stopped, some drawn link has one.
    spot = browser.js("""const m = kgkitViewer.model, r = kgkitViewer.renderer, c = document.querySelector('#graph canvas');
        for (const t of [0.5, 0.35, 0.65, 0.2, 0.8]) {
          for (let e = 0; e < m.m; e++) {
            if (m.edgeHidden[e] || m.nodeHidden[m.source[e]] || m.nodeHidden[m.target[e]] || !m.arrow[e]) continue;
            const a = r.screen(m.source[e]), b = r.screen(m.target[e]);
            const x = Math.round(a.x + (b.x - a.x) * t), y = Math.round(a.y + (b.y - a.y) * t);
            if (x > 10 && y > 10 && x < c.clientWidth - 10 && y < c.clientHeight - 10 && r.nodeAt(x, y) < 0
                && r.edgeAt(x, y) === e) return {x, y, a, b};
          }
        }
        return null""")
    assert spot, "no drawn link to click"
    ActionChains(browser.driver).move_to_element_with_offset(
        canvas, int(spot["x"] - size["width"] / 2), int(spot["y"] - size["height"] / 2)).click().perform()
    selected = browser.driver.find_element(By.ID, "panel").get_attribute("data-selected")
    item = next((it for it in data["items"] if it["id"] == selected), None)
    assert item and item["kind"] in ("edge", "temporal"), selected  # the items drawn as arrows
    head, tail = (browser.js("return kgkitViewer.screenOf(arguments[0])", end) for _, end in item["ends"][:2])
    assert (head, tail) == (spot["a"], spot["b"])  # the link aimed at, not another
    assert console_errors(browser) == []


def camera_still(browser, timeout: float = 60.0) -> None:
    """Until the camera's move has ended (it animates over frames a loaded machine may draw late)."""
    browser.driver.set_script_timeout(timeout + 5)
    assert browser.driver.execute_async_script("""const done = arguments[1], until = performance.now() + arguments[0];
        const look = () => (!kgkitViewer.renderer.moving() ? done(true) : performance.now() > until ? done(false)
                            : requestAnimationFrame(look));
        look()""", timeout * 1000), "the camera was still moving"


def test_the_view_switcher_and_filters_change_what_is_drawn(browser, corpus_page):
    path, data = corpus_page
    browser.open(path)
    for view in data["views"]:
        browser.js("const s = document.getElementById('view'); s.value = arguments[0]; s.dispatchEvent(new Event('change'))",
                   view)
        assert browser.js("return kgkitViewer.drawn()") == expected_drawn(data, view), view
    browser.js("const s = document.getElementById('view'); s.value = ''; s.dispatchEvent(new Event('change'))")
    assert browser.js("return kgkitViewer.drawn()") == expected_drawn(data)
    browser.js("document.querySelector('#legend input[data-value=\"Party\"]').click()")
    without = expected_drawn(data, hidden_types={"Party"})
    assert browser.js("return kgkitViewer.drawn()") == without and without != expected_drawn(data)
    assert console_errors(browser) == []


def test_a_hostile_page_runs_nothing_and_shows_the_names_as_text(browser, small_runs, tmp_path):
    from selenium.webdriver.common.by import By

    node = hostile_run(small_runs["alpha"], tmp_path / "alpha", "Bluefin Logistics LLC")
    out = tmp_path / "hostile.html"
    # --no-text: the panel shows the stored (hostile) quotes themselves, not the document's passage
    assert kgkit("view", str(tmp_path / "alpha"), "-o", str(out), "--no-text").exit_code == 0
    browser.open(out)
    assert browser.js("return kgkitViewer.search('onerror')") == [node]  # found by name and by alias
    browser.js("kgkitViewer.focus(arguments[0])", node)
    panel = browser.driver.find_element(By.ID, "panel")
    shown = panel.find_element(By.TAG_NAME, "h2").text
    assert shown == HOSTILE_NAME.replace("\u202e", "\u27e8U+202E\u27e9")  # the override visible, not obeyed
    panel.find_element(By.CSS_SELECTOR, "ul li a.link").click()
    quotes = browser.js("return [...document.querySelectorAll('#panel .quote')].map(e => e.textContent)")
    assert "\u201c" + HOSTILE_QUOTE.replace("\u202e", "\u27e8U+202E\u27e9") + "\u201d" in quotes
    assert browser.js("return window.__pwned === undefined")
    assert browser.js("return document.querySelectorAll('img, iframe, object, embed').length") == 0
    assert browser.js("return document.scripts.length") == 6  # the data, 4 scripts, the evidence
    assert console_errors(browser) == []
    browser.screenshot("viewer-hostile.png")


def test_the_bundled_example_contract_opens_with_its_evidence(browser, tmp_path):
    from kgkit.engine.run import extract
    from support.shared_data import CONTRACT_PDF

    run = extract([str(CONTRACT_PDF)], domain="legal_contracts", views=["all"], out_dir=tmp_path / "out")[0].run_dir
    out = tmp_path / "example.html"
    assert kgkit("view", str(run), "-o", str(out)).exit_code == 0
    data = page_data(out.read_text(encoding="utf-8"))
    assert {"binary", "nary", "temporal", "event"} <= set(data["views"])
    browser.open(out)
    assert console_errors(browser) == [] and browser.requests() == []
    assert browser.js("return kgkitViewer.drawn()") == expected_drawn(data)
    event = next(it for it in data["items"] if it["kind"] == "event")
    browser.js("kgkitViewer.select(arguments[0])", event["id"])
    marks = browser.js("return [...document.querySelectorAll('#panel mark')].map(m => m.textContent)")
    assert marks == [e["mark"] for e in data["evidence"][event["id"]]]
    browser.screenshot("viewer-example.png")
