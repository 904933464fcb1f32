"""The static site `make book` builds, opened in headless Chromium: every page shows its plots and
typeset equations, the table of contents reaches every notebook, and nothing is fetched from
anywhere but the local server (no CDN for MathJax, widgets or fonts).

Needs build/book/html (`make book`, which `make test` runs first). With UNIFIED_RL_REQUIRE_BROWSER=1
a missing site, Chromium or playwright fails the test instead of skipping it.
"""

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
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]
REQUIRED = os.environ.get("UNIFIED_RL_REQUIRE_BROWSER") == "1"


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
def chromium(site_url, tmp_path_factory):
    if not os.path.exists(CHROMIUM):
        _missing(f"{CHROMIUM} is missing (apt-get install chromium)")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _missing("playwright is missing (pip install playwright)")
    home = tmp_path_factory.mktemp("chromium-home")
    pw = sync_playwright().start()
    browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, env={**os.environ, "HOME": str(home)})
    yield browser
    browser.close()
    pw.stop()


def _open(chromium, url):
    """A page loaded from `url` with every request outside the local server recorded and refused."""
    context = chromium.new_context(viewport={"width": 1300, "height": 900})
    page = context.new_page()
    foreign = []

    def route(r):
        host = urlparse(r.request.url).hostname
        if r.request.url.startswith(("data:", "blob:", "about:")) or host == "127.0.0.1":
            r.continue_()
        else:
            foreign.append(r.request.url)
            r.abort()
    context.route("**/*", route)
    page.goto(url, wait_until="load")
    return context, page, foreign


def test_table_of_contents_reaches_every_notebook(site_url, chromium):
    notebooks = sorted(p.name for p in (REPO / "course").glob("[0-9]*.ipynb"))
    pages = [name for name, src in _pages() if src is not None and src.suffix == ".ipynb"]
    assert sorted(f"{p}.ipynb" for p in pages) == notebooks, "the site is older than course/: run make book"
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
        page.wait_for_load_state("networkidle")
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
    finally:
        context.close()
