"""Chinese text with no system CJK font, in Chromium on a machine whose only fonts are DejaVu and
Liberation (`latin_only_fonts`): which font draws each glyph, as Chromium reports it over the DevTools
protocol (CSS.getPlatformFontsForNode: the fonts used for a node's text, glyphs per font, and whether
each is a web font).

JupyterLab on a Chinese twin: a Markdown paragraph, a code comment, a widget label and a table cell draw their Chinese
with the package's font subset, served by its JupyterLab extension (labextension/) as a web font, and
the rest of their text with the machine's Latin fonts. The book's static files (book/_static/zh.css and
the font scripts/build_book.py copies beside it) do the same on small pages styled by the site's theme;
a page without Chinese never downloads the font, and a machine with a system CJK font the face names
draws with that instead. Negative controls: the same nodes without the extension's style, and the page
without the font file, draw their Chinese from no CJK font (the .notdef boxes of a Latin font).
"""

import functools
import http.server
import json
import os
import re
import shutil
import sys
import threading
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "scripts"))  # build_book, for the font files it copies into a site

from unified_rl.course.cjk_font import SHIPPED_FAMILY  # noqa: E402

TWIN = "course/zh/00_unified_paradigm.ipynb"
# what the web font must draw: CJK radicals to ideographs and punctuation, compatibility ideographs and
# forms, full-width forms (the rest of a node's text is the Latin font's)
CJK = re.compile(r"[\u2e80-\u9fff\uf900-\ufaff\ufe30-\ufe4f\uff00-\uffef]")
SCREENSHOTS = REPO / "build" / "browser-screenshots"

# The first element matching the selector whose text is all its own (no child element holds text: what
# getPlatformFontsForNode counts is then exactly that text) and has a Han character, and its text.
# Found, not marked: CodeMirror redraws a line whose DOM a script changed.
FIND_JS = """(() => {
  const own = el => [...el.childNodes].filter(n => n.nodeType === 3).map(n => n.textContent).join('');
  const el = [...document.querySelectorAll(%s)].find(e => own(e) === e.textContent && /[\\u4e00-\\u9fff]/.test(own(e)));
  if (el) el.scrollIntoView({block: 'center'});
  return el ? {el, text: el.textContent} : null;
})()"""


def probe(page, selector):
    """(the text of the first element of `selector` showing Chinese, [(family, glyphs, web font?)]
    Chromium drew that text with), or (None, []) when there is no such element."""
    page.evaluate("() => document.fonts.ready")
    cdp = page.context.new_cdp_session(page)
    try:
        cdp.send("DOM.enable")
        cdp.send("CSS.enable")
        cdp.send("DOM.getDocument", {"depth": 0})
        found = cdp.send("Runtime.evaluate", {"expression": FIND_JS % json.dumps(selector)})["result"]
        if found.get("subtype") == "null":
            return None, []
        get = "function (k) { return this[k]; }"
        el, text = (cdp.send("Runtime.callFunctionOn", {"objectId": found["objectId"], "functionDeclaration": get,
                                                        "arguments": [{"value": k}], "returnByValue": k == "text"})
                    ["result"] for k in ("el", "text"))
        node = cdp.send("DOM.requestNode", {"objectId": el["objectId"]})["nodeId"]
        fonts = cdp.send("CSS.getPlatformFontsForNode", {"nodeId": node})["fonts"]
    finally:
        cdp.detach()
    return text["value"], sorted((f["familyName"], f["glyphCount"], f["isCustomFont"]) for f in fonts)


def drawn_with_web_font(fonts, text, latin):
    """Why `text` is not drawn as it should be (every CJK character with the shipped web font, the rest
    with the machine's Latin fonts `latin`); [] if it is."""
    cjk = len(CJK.findall(text))
    rest = CJK.sub("", text)
    web = [(family, n) for family, n, custom in fonts if custom]
    others = {family for family, _, custom in fonts if not custom}
    drawn = sum(n for _, n, custom in fonts if not custom)
    problems = []
    if web != [(SHIPPED_FAMILY, cjk)]:
        problems.append(f"{cjk} CJK characters; drawn by web fonts: {web}")
    if not others <= latin:
        problems.append(f"drawn by fonts the machine should not have: {sorted(others - latin)}")
    if not len("".join(rest.split())) <= drawn <= len(rest):  # every visible character, spaces maybe
        problems.append(f"{len(rest)} other characters, {drawn} glyphs drawn by the Latin fonts")
    return problems


def first_explorer_cell(path):
    """The index, among the notebook's non-empty code cells, of the first one that shows an explorer."""
    import nbformat
    sources = [c.source for c in nbformat.read(path, as_version=4).cells if c.cell_type == "code" and c.source.strip()]
    return next(i for i, src in enumerate(sources) if "_explorer(" in src)


@pytest.fixture
def latin_page(lab, latin_browser, request):
    context = latin_browser.new_context(viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    page.set_default_timeout(60_000)
    yield page
    rep = getattr(request.node, "rep_call", None)
    if rep is not None and rep.failed:
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(SCREENSHOTS / f"{request.node.name}.png"), full_page=True)
    context.close()
    for k in json.loads(lab.api("/api/kernels")):  # the twin's kernel holds a model: free it
        lab.api(f"/api/kernels/{k['id']}", method="DELETE")


# the nodes checked in JupyterLab: a paragraph of a Markdown cell, a code cell's comment, an explorer's label,
# a table's cell
LAB_NODES = {"Markdown": ".jp-MarkdownCell .jp-RenderedMarkdown p", "code comment": ".jp-CodeCell .cm-line span",
             "widget label": ".jp-OutputArea .widget-label", "table cell": ".jp-RenderedHTMLCommon td"}


def test_jupyterlab_draws_a_chinese_twins_text_with_the_shipped_web_font(lab, latin_page, latin_only_fonts):
    from test_explorers import _run_all  # noqa: PLC0415 - the browser helpers of the explorers' test

    page, latin = latin_page, latin_only_fonts["families"]
    _run_all(page, lab, TWIN, timeout_s=600, upto=first_explorer_cell(REPO / TWIN))
    shown = {}
    for what, selector in LAB_NODES.items():
        text, fonts = probe(page, selector)
        assert text, f"{TWIN}: no {what} shows Chinese"
        print(f"{what}: {text[:30]!r}... drawn with {fonts}")
        assert not drawn_with_web_font(fonts, text, latin), (what, text[:60], drawn_with_web_font(fonts, text, latin))
        shown[what] = text
    assert shown["code comment"].lstrip().startswith("#"), shown["code comment"]
    # negative control: without the extension's style, the same nodes' Chinese is drawn by no CJK font
    page.evaluate("() => document.getElementById('unified-rl-cjk-font').remove()")
    for what, selector in LAB_NODES.items():
        text, fonts = probe(page, selector)
        assert text == shown[what]
        print(f"without the extension, {what}: drawn with {fonts}")
        assert {family for family, *_ in fonts} <= latin and not any(custom for *_, custom in fonts), (what, fonts)
        assert drawn_with_web_font(fonts, text, latin)


# --- the book's static files ------------------------------------------------------------------------------

ZH_PAGE = """<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>统一范式</title>
<link rel="stylesheet" href="{up}_static/styles/pydata-sphinx-theme.css">
<link rel="stylesheet" href="{up}_static/zh.css"><script src="{up}_static/zh.js"></script></head>
<body><article class="bd-article">{body}</article></body></html>
"""
ZH_BODY = """<h1>所有方法的同一个梯度</h1>
<p id="text">每种方法都沿着同一个梯度（gradient）更新模型，区别只在于：训练数据从哪里来、如何给它打分。</p>
<pre id="code"># 词表大小、回答数、最大长度
V, B, T = 5, 4, 6</pre>"""
EN_BODY = """<p id="text">One gradient for SFT, RFT, DPO, PPO and GRPO.
<a class="lang-switch-link" id="switch" href="zh/page.html">中文</a></p>"""
PLAIN_BODY = """<p id="text">One gradient for SFT, RFT, DPO, PPO and GRPO.</p>"""


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


@pytest.fixture(scope="module")
def book_sites(tmp_path_factory):
    """The URL of two small sites styled as the book is (the theme's stylesheet, book/_static/, and the
    font scripts/build_book.py copies beside them): `with-font/`, and `no-font/` without the font file."""
    import importlib.util

    import build_book  # noqa: PLC0415 - scripts/ is on the path

    theme = importlib.util.find_spec("pydata_sphinx_theme")
    if theme is None:
        pytest.skip("pydata-sphinx-theme is missing (pip install -e '.[book]')")
    css = Path(theme.submodule_search_locations[0]) / "theme" / "pydata_sphinx_theme" / "static" / "styles"
    base = tmp_path_factory.mktemp("book-sites")
    for name in ("with-font", "no-font"):
        static = base / name / "_static"
        shutil.copytree(REPO / "book" / "_static", static)
        (static / "styles").mkdir()
        shutil.copy(css / "pydata-sphinx-theme.css", static / "styles")
        if name == "with-font":
            build_book.copy_font(static)
        (base / name / "zh").mkdir()
        (base / name / "zh" / "page.html").write_text(ZH_PAGE.format(up="../", body=ZH_BODY), encoding="utf-8")
        (base / name / "en.html").write_text(ZH_PAGE.format(up="", body=EN_BODY), encoding="utf-8")
        (base / name / "plain.html").write_text(ZH_PAGE.format(up="", body=PLAIN_BODY), encoding="utf-8")
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_Quiet, directory=str(base)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()


def _open_page(browser, url):
    """The page at `url`, loaded with its fonts, and the font files it requested."""
    context = browser.new_context()
    page = context.new_page()
    fonts = []
    page.on("request", lambda r: fonts.append(r.url.rsplit("/", 1)[-1]) if r.resource_type == "font" else None)
    page.goto(url, wait_until="load")
    page.evaluate("() => document.fonts.ready")
    return context, page, fonts


def test_the_books_static_files_draw_chinese_with_the_shipped_web_font(book_sites, latin_browser, latin_only_fonts):
    latin = latin_only_fonts["families"]
    context, page, requested = _open_page(latin_browser, f"{book_sites}/with-font/zh/page.html")
    try:
        assert page.evaluate("document.documentElement.lang") == "zh-CN"
        for selector in ("h1", "#text", "#code"):
            text, fonts = probe(page, selector)
            print(f"book, {selector}: drawn with {fonts}")
            assert text and not drawn_with_web_font(fonts, text, latin), (selector, fonts)
        assert requested == ["wqy-microhei-subset.ttf"]
    finally:
        context.close()
    # an English page: its 中文 switch is drawn with the web font, its English with the theme's
    context, page, requested = _open_page(latin_browser, f"{book_sites}/with-font/en.html")
    try:
        text, fonts = probe(page, "#switch")
        assert text == "中文" and not drawn_with_web_font(fonts, text, latin), fonts
    finally:
        context.close()


def test_a_book_page_without_chinese_never_loads_the_font(book_sites, latin_browser):
    context, page, requested = _open_page(latin_browser, f"{book_sites}/with-font/plain.html")
    try:
        assert page.evaluate("() => document.fonts.check('16px \"WenQuanYi Micro Hei Subset\"', 'x')")
        assert requested == [], requested
    finally:
        context.close()


def test_without_the_font_file_the_books_chinese_is_drawn_by_no_cjk_font(book_sites, latin_browser, latin_only_fonts):
    """Negative control: the same page on the site that lacks the font file (a build that did not copy it)."""
    latin = latin_only_fonts["families"]
    context, page, requested = _open_page(latin_browser, f"{book_sites}/no-font/zh/page.html")
    try:
        for selector in ("h1", "#text", "#code"):
            text, fonts = probe(page, selector)
            print(f"book without the font, {selector}: drawn with {fonts}")
            assert {family for family, *_ in fonts} <= latin and not any(custom for *_, custom in fonts), fonts
            assert drawn_with_web_font(fonts, text, latin)
        assert requested == ["wqy-microhei-subset.ttf"]  # asked for, and not found
    finally:
        context.close()


CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]


@pytest.fixture(scope="module")
def system_cjk_browser(latin_browser, latin_only_fonts, tmp_path_factory):
    """Chromium on a machine whose one CJK font is a system font named "WenQuanYi Micro Hei" (the shipped
    subset under the full font's names, one of those the CJK face asks for with local())."""
    from fontTools.ttLib import TTFont

    from unified_rl.course.cjk_font import SHIPPED

    base = tmp_path_factory.mktemp("system-cjk")
    (base / "fonts").mkdir()
    font = TTFont(SHIPPED)
    for record in font["name"].names:
        if record.nameID in (1, 4, 16):
            record.string = "WenQuanYi Micro Hei"
        elif record.nameID == 6:
            record.string = "WenQuanYiMicroHei"
    font.save(base / "fonts" / "wqy-microhei.ttf")
    conf = Path(latin_only_fonts["env"]["FONTCONFIG_FILE"]).read_text()
    conf = re.sub(r"<cachedir>.*</cachedir>", f"<dir>{base / 'fonts'}</dir>\n  <cachedir>{base / 'cache'}</cachedir>", conf)
    (base / "fonts.conf").write_text(conf)
    b = latin_browser.browser_type.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, env={
        **os.environ, "HOME": str(tmp_path_factory.mktemp("chromium-home-cjk")), "FONTCONFIG_FILE": str(base / "fonts.conf")})
    yield b
    b.close()


def test_a_system_cjk_font_the_face_names_comes_before_the_shipped_one(book_sites, system_cjk_browser):
    context, page, requested = _open_page(system_cjk_browser, f"{book_sites}/with-font/zh/page.html")
    try:
        for selector in ("h1", "#text", "#code"):
            text, fonts = probe(page, selector)
            print(f"book with a system CJK font, {selector}: drawn with {fonts}")
            assert ("WenQuanYi Micro Hei", len(CJK.findall(text)), False) in fonts, fonts
            assert not any(custom for *_, custom in fonts), fonts
        assert requested == [], requested  # the shipped file is not even downloaded
    finally:
        context.close()
