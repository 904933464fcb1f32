"""The static site `make book` builds, opened in headless Chromium: every page shows its plots and
typeset equations, the table of contents reaches every notebook, and nothing is fetched from
anywhere but the local server (no CDN for MathJax, widgets or fonts). The Chinese edition: every
page's language switch leads to its twin and back, and Chinese text is drawn with the font the package ships, served
by the site as a web font, in a Chromium that sees no CJK font (`latin_only_fonts`; the fonts Chromium
used, asked over the DevTools protocol), not as boxes (distinct characters draw distinct bitmaps,
unlike characters no font has).

Needs build/book/html (`make book`, which `make test` runs first). With UNIFIED_RL_REQUIRE_BROWSER=1
a missing site, Chromium or playwright fails the test instead of skipping it.
"""

import contextlib
import functools
import http.server
import json
import os
import re
import threading
from pathlib import Path
from urllib.parse import urlparse

import nbformat
import pytest

REPO = Path(__file__).resolve().parents[2]
BOOK = REPO / "build" / "book"
SITE = BOOK / "html"
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync",
                 "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1"]  # no other host resolves
REQUIRED = os.environ.get("UNIFIED_RL_REQUIRE_BROWSER") == "1"
pytestmark = pytest.mark.book  # make test runs it once the site is built


def _missing(reason):
    (pytest.fail if REQUIRED else pytest.skip)(reason)


def _pages():
    """(page name, its source notebook or None) in the order of the table of contents."""
    toc_file = BOOK / "src" / "_toc.yml"
    if not toc_file.is_file():
        return []
    toc = json.loads(toc_file.read_text())  # written as JSON by scripts/build_book.py
    names = [toc["root"]] + [ch["file"] for part in toc["parts"] for ch in part["chapters"]]
    found = [next((p for p in (BOOK / "src" / f"{n}.ipynb", BOOK / "src" / f"{n}.md") if p.exists()), None)
             for n in names]
    return list(zip(names, found))


def _expected(nb_path):
    """Plots and equations the page must show: image outputs (widgets' included) and math in markdown."""
    if nb_path is None:
        return 0, 0
    if nb_path.suffix == ".md":
        nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell(nb_path.read_text())])
    else:
        nb = nbformat.read(nb_path, as_version=4)
    images = 0
    for cell in nb.cells:
        for out in cell.get("outputs", []):
            data = out.get("data", {})
            if "image/png" in data or "image/jpeg" in data:
                images += 1
            elif "text/html" in data:
                images += "".join(data["text/html"]).count('src="data:image/')
    md = "\n".join(c.source for c in nb.cells if c.cell_type == "markdown")
    md = re.sub(r"`[^`]*`", "", re.sub(r"```.*?```", "", md, flags=re.S))  # code is not math
    display = len(re.findall(r"\$\$.+?\$\$", md, flags=re.S)) + md.count("\\begin{gather}")
    inline = len(re.findall(r"(?<![$\\])\$[^$\n]+?\$(?!\$)", re.sub(r"\$\$.+?\$\$", "", md, flags=re.S)))
    return images, display + inline


@pytest.fixture(scope="module")
def site_url():
    if not (SITE / "index.html").exists():
        _missing(f"no site at {SITE}: run `make book` first")
    handler = functools.partial(_QuietHandler, directory=str(SITE.resolve()))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


@pytest.fixture(scope="module")
def chromium(site_url, tmp_path_factory, playwright_driver, latin_only_fonts):
    """Chromium, from the session's playwright driver (tests/browser/conftest.py), seeing no CJK font."""
    home = tmp_path_factory.mktemp("chromium-home")
    browser = playwright_driver.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS,
                                                env={**os.environ, "HOME": str(home), **latin_only_fonts["env"]})
    yield browser
    browser.close()


def _foreign(url):
    """Whether a request goes anywhere but the local server."""
    return not url.startswith(("data:", "blob:", "about:")) and urlparse(url).hostname != "127.0.0.1"


def _open(chromium, url):
    """A page loaded from `url`, with every request outside the local server recorded. Chromium
    resolves no host name (--host-resolver-rules), so such a request fails at once; recording it from
    the request events, rather than routing every request through this process, keeps a busy
    machine's page loads as fast as an idle one's."""
    context = chromium.new_context(viewport={"width": 1300, "height": 900})
    page = context.new_page()
    foreign = []
    context.on("request", lambda request: foreign.append(request.url) if _foreign(request.url) else None)
    page.goto(url, wait_until="load")
    return context, page, foreign


def test_a_request_to_another_host_is_recorded_and_fails(site_url, chromium):
    """Negative control of the guard every page test asserts: an image from a CDN is seen and never loads."""
    context, page, foreign = _open(chromium, f"{site_url}/intro.html")
    try:
        loaded = page.evaluate("""() => new Promise(done => { const i = new Image();
            i.onload = () => done(true); i.onerror = () => done(false);
            i.src = 'https://cdn.example.org/x.png'; })""")
        assert loaded is False and foreign == ["https://cdn.example.org/x.png"], foreign
    finally:
        context.close()


def test_table_of_contents_reaches_every_notebook(site_url, chromium):
    notebooks = sorted(p.name for p in (REPO / "course").glob("[0-9]*.ipynb"))
    notebooks += sorted(f"zh/{p.name}" for p in (REPO / "course" / "zh").glob("[0-9]*.ipynb"))
    pages = [name for name, src in _pages() if src is not None and src.suffix == ".ipynb"]
    assert sorted(f"{p}.ipynb" for p in pages) == sorted(notebooks), "the site is older than course/: run make book"
    context, page, foreign = _open(chromium, f"{site_url}/index.html")
    try:
        page.wait_for_load_state("networkidle")
        hrefs = page.eval_on_selector_all("nav a.reference.internal", "els => els.map(e => e.getAttribute('href'))")
        for name in pages:
            assert any(h.split("#")[0].endswith(f"{name}.html") for h in hrefs), f"{name} is not in the table of contents"
        assert not foreign, f"requests outside the local server: {foreign[:5]}"
    finally:
        context.close()


@pytest.mark.parametrize("name,nb_path", _pages() or [("intro", None)], ids=lambda v: v if isinstance(v, str) else "")
def test_page_renders_plots_and_equations(site_url, chromium, name, nb_path):
    images, maths = _expected(nb_path)
    context, page, foreign = _open(chromium, f"{site_url}/{name}.html")
    try:
        if maths or page.query_selector("script[src*='mathjax']"):  # Sphinx loads MathJax where there is math
            page.wait_for_function("() => window.MathJax && window.MathJax.startup && window.MathJax.startup.promise",
                                   timeout=20000)
            page.evaluate("() => window.MathJax.startup.promise")  # typesetting done
        # a page of many equations loads MathJax's fonts for a while. A page whose network never fell quiet
        # for 90 s (it happened once, beside other browsers, and never alone) is checked as it stands:
        # the assertions below say whether its images and equations are there
        from playwright.sync_api import TimeoutError as PlaywrightTimeout  # present: the chromium fixture ran
        with contextlib.suppress(PlaywrightTimeout):
            page.wait_for_load_state("networkidle", timeout=30_000)
        info = page.evaluate("""() => {
            const main = document.querySelector('main') || document.body;
            const article = document.querySelector('article.bd-article') || main;  // not the header's hidden menus
            const imgs = [...article.querySelectorAll('img')];
            const clone = main.cloneNode(true);
            clone.querySelectorAll('pre, code, script, style, mjx-container, .highlight').forEach(e => e.remove());
            return {
                images: imgs.length,
                broken: imgs.filter(i => !(i.complete && i.naturalWidth > 0 && i.getBoundingClientRect().width > 0))
                            .map(i => (i.getAttribute('src') || '').slice(0, 60)),
                math: main.querySelectorAll('mjx-container').length,
                mathErrors: main.querySelectorAll('mjx-merror').length,
                rawText: clone.innerText,
            };
        }""")
        assert not foreign, f"requests outside the local server: {foreign[:5]}"
        assert not info["broken"], f"images that did not render: {info['broken'][:5]}"
        assert info["images"] >= images, f"{info['images']} images on the page, the notebook has {images}"
        assert info["math"] >= maths, f"{info['math']} typeset equations, the notebook's markdown has {maths}"
        assert info["mathErrors"] == 0
        assert "$$" not in info["rawText"] and "\\frac" not in info["rawText"], "math left as raw TeX"
        rows = re.findall(r"^\|[-—|: ]+\|$", info["rawText"], flags=re.M)  # a table's |---| line left as text
        assert not rows, f"a Markdown table (a cell's or an output's) left as text: {rows[:2]}"
    finally:
        context.close()


# --- the Chinese edition --------------------------------------------------------------------------------

def _twin_href(name):
    """The page a page's language switch must lead to (relative to the site's root)."""
    if name.startswith("zh/"):
        stem = name[len("zh/"):]
        return "intro.html" if stem in ("README", "GLOSSARY") else f"{stem}.html"
    if (BOOK / "src" / "zh" / f"{name}.ipynb").exists():
        return f"zh/{name}.html"
    return "zh/README.html"


def _zh_pages():
    return [name for name, src in _pages() if name.startswith("zh/") and src is not None]


def test_every_page_switches_to_its_twin_and_back(site_url, chromium):
    pages = [name for name, src in _pages() if src is not None]
    if not _zh_pages():
        pytest.skip("the site has no Chinese pages (course/zh/ holds no twin notebook)")
    context = chromium.new_context()
    # only the links matter here: no equations typeset nor images drawn (the page tests check those)
    context.route(re.compile(r"/mathjax/|/_images/"), lambda route: route.abort())
    try:
        page = context.new_page()
        for name in pages:
            page.goto(f"{site_url}/{name}.html", wait_until="domcontentloaded")
            links = page.query_selector_all("a.lang-switch-link")
            assert len(links) == 1, f"{name}: {len(links)} language switches"
            target = page.evaluate("a => new URL(a.getAttribute('href'), location.href).pathname", links[0])
            assert target == "/" + _twin_href(name), f"{name}: the switch leads to {target}"
            assert (links[0].inner_text() == "English") == name.startswith("zh/")
            if name.startswith("zh/") and _twin_href(name) != "intro.html":  # follow it, and back
                links[0].click()
                page.wait_for_url(f"**/{_twin_href(name)}")
                back = page.eval_on_selector("a.lang-switch-link", "a => new URL(a.href).pathname")
                assert back == f"/{name}.html", f"{_twin_href(name)}'s switch leads to {back}, not {name}"
                assert page.evaluate("document.documentElement.lang") != "zh-CN"
    finally:
        context.close()


_PROBE = """(text) => {
    const span = document.createElement('span');
    span.id = 'cjk-probe';
    span.textContent = text;
    (document.querySelector('article.bd-article') || document.body).appendChild(span);
    return getComputedStyle(span).fontFamily;
}"""

_BITMAPS = """([chars, font]) => {
    const c = document.createElement('canvas'); c.width = 48; c.height = 48;
    const g = c.getContext('2d', {willReadFrequently: true});
    g.font = '32px ' + font;
    return chars.map(ch => {
        g.clearRect(0, 0, 48, 48); g.fillStyle = '#000'; g.fillText(ch, 4, 36);
        const d = g.getImageData(0, 0, 48, 48).data;
        let h = 0, ink = 0;
        for (let i = 3; i < d.length; i += 4) { h = (h * 31 + d[i]) >>> 0; ink += d[i] > 0; }
        return h + ':' + ink;
    });
}"""


def fonts_used(page, text):
    """(family, web font?) -> glyphs drawn, for `text` appended to the page's article, as Chromium rendered it."""
    page.evaluate("() => document.getElementById('cjk-probe')?.remove()")
    page.evaluate(_PROBE, text)
    cdp = page.context.new_cdp_session(page)
    cdp.send("DOM.enable")
    cdp.send("CSS.enable")
    root = cdp.send("DOM.getDocument")["root"]["nodeId"]
    node = cdp.send("DOM.querySelector", {"nodeId": root, "selector": "#cjk-probe"})["nodeId"]
    fonts = cdp.send("CSS.getPlatformFontsForNode", {"nodeId": node})["fonts"]
    cdp.detach()
    return {(f["familyName"], f["isCustomFont"]): f["glyphCount"] for f in fonts}


def glyph_problems(page, chars):
    """Why `chars` do not render as glyphs in the page's font ([] if each draws its own bitmap)."""
    font = page.evaluate("() => getComputedStyle(document.body).fontFamily")
    maps = page.evaluate(_BITMAPS, [list(chars), font])
    out = [f"{ch!r} draws nothing" for ch, m in zip(chars, maps) if m.endswith(":0")]
    if len(set(maps)) < len(maps):
        out.append(f"{len(maps)} characters draw only {len(set(maps))} distinct bitmaps (boxes)")
    return out


def test_chinese_pages_draw_their_text_with_the_shipped_web_font(site_url, chromium, latin_only_fonts):
    from unified_rl.course.cjk_font import SHIPPED_FAMILY

    pages = _zh_pages()
    if not pages:
        pytest.skip("the site has no Chinese pages (course/zh/ holds no twin notebook)")
    context, page, foreign = _open(chromium, f"{site_url}/{pages[0]}.html")
    try:
        page.wait_for_load_state("networkidle")
        assert page.evaluate("document.documentElement.lang") == "zh-CN"
        text = page.evaluate("() => (document.querySelector('article.bd-article') || document.body).innerText")
        chars = "".join(dict.fromkeys(re.findall(r"[\u4e00-\u9fff]", text)))[:40]  # distinct, in order
        assert len(chars) >= 10, f"{pages[0]} shows only {len(chars)} distinct Chinese characters"
        page.evaluate("() => document.fonts.ready")
        used = fonts_used(page, chars)
        assert used == {(SHIPPED_FAMILY, True): len(chars)}, f"Chinese drawn with {used}"
        assert not glyph_problems(page, chars)
        # both checks can fail: characters no font has (private use) are drawn from a Latin font, not the
        # web font, as identical boxes; so is Chinese on this machine without the site's font
        boxes = "\ue000\ue001\ue002\ue003"
        latin = latin_only_fonts["families"]
        assert {family for family, _ in fonts_used(page, boxes)} <= latin, "private-use characters drawn by a CJK font"
        assert glyph_problems(page, boxes), "private-use characters passed as glyphs"
        page.evaluate("() => document.querySelectorAll('link[href*=\"zh.css\"]').forEach(l => l.remove())")
        bare = fonts_used(page, chars)
        assert {family for family, _ in bare} <= latin and not any(web for _, web in bare), bare
        assert not foreign, f"requests outside the local server: {foreign[:5]}"
    finally:
        context.close()
