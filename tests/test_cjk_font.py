"""The font the package ships for Chinese figures: it covers every character the package's Chinese can
put on a figure, and a Chinese figure drawn with it alone (no system CJK font) shows Chinese glyphs
without a missing-glyph warning. Rebuild it with scripts/make_cjk_font.py when the first test fails.
The same file is JupyterLab's web font for Chinese (labextension/): a wheel carries the extension and
the font where the lab finds them, and the committed build matches its source. Which font Chromium
draws the Chinese with is tests/browser/test_cjk_webfont.py's to check."""

import importlib.util
import io
import json
import re
import subprocess
import sys
import warnings
import zipfile
from pathlib import Path

import pytest

pytest.importorskip("matplotlib")
from fontTools.ttLib import TTFont  # noqa: E402 (matplotlib depends on fontTools)

from unified_rl.course import cjk_font  # noqa: E402

HAN = re.compile(r"[\u2e80-\u9fff\u3000-\u303f\uff00-\uffef“”‘’…—·]")  # Han, CJK and full-width punctuation


def _missing(text):
    cmap = TTFont(cjk_font.SHIPPED).getBestCmap()
    return sorted({c for c in HAN.findall(text) if ord(c) not in cmap})


def test_the_shipped_font_covers_the_packages_chinese():
    """Every Han character and CJK punctuation mark of the catalogue and the sentences is in the font."""
    text = cjk_font.package_chinese_text()
    assert len(set(HAN.findall(text))) > 500  # the text read is the package's Chinese, not an empty string
    assert _missing(text) == []
    assert _missing("统一范式：梯度系数（GC）“组相对”") == []


def test_the_coverage_check_fails_on_a_character_the_font_lacks():
    """The coverage check can fail: a rare character outside the subset (龘) is reported."""
    assert _missing("梯度龘") == ["龘"]


def _draw(text, families):
    """The pixels of `text` drawn with font.family `families`, and the warnings drawing it raised."""
    import matplotlib
    from matplotlib.figure import Figure
    with matplotlib.rc_context({"font.family": families}), warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fig = Figure(figsize=(6, 0.6), dpi=50)
        fig.text(0.01, 0.3, text, fontsize=14)
        buf = io.BytesIO()
        fig.savefig(buf, format="rgba")
    return buf.getvalue(), [str(w.message) for w in caught if "missing from font" in str(w.message)]


def test_a_chinese_figure_drawn_with_only_the_shipped_font_shows_chinese():
    """With only DejaVu Sans and the shipped subset (as on a machine without a system CJK font), the
    package's Chinese draws with no missing glyph, and two different characters draw differently (boxes
    for missing glyphs would all be the same); with DejaVu Sans alone the same text warns (boxes)."""
    families = cjk_font.cjk_families()
    assert cjk_font.SHIPPED_FAMILY in families
    chars = sorted(set(HAN.findall(cjk_font.package_chinese_text())))
    lines = ["".join(chars[i:i + 40]) for i in range(0, len(chars), 40)]
    for line in lines:
        _, warned = _draw(line, ["DejaVu Sans", cjk_font.SHIPPED_FAMILY])
        assert not warned, warned[:3]
    a, _ = _draw("梯", ["DejaVu Sans", cjk_font.SHIPPED_FAMILY])
    b, _ = _draw("度", ["DejaVu Sans", cjk_font.SHIPPED_FAMILY])
    box_a, warned_a = _draw("梯", ["DejaVu Sans"])
    box_b, _ = _draw("度", ["DejaVu Sans"])
    assert warned_a and box_a == box_b  # the control: without the font both are the same box
    assert a != b and a != box_a


# --- the same font for JupyterLab (labextension/) ------------------------------------------------------------

REPO = Path(__file__).resolve().parents[1]
EXT = REPO / "labextension"
LAB_DIR = "share/jupyter/labextensions/unified-rl-cjk-font"


def _load_install():
    spec = importlib.util.spec_from_file_location("labextension_install", EXT / "install.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _wheel_data(wheel):
    """{path under the wheel's data folder: bytes} of a wheel built from a copy of the repository's sources."""
    with zipfile.ZipFile(wheel) as z:
        data = {n.split(".data/data/", 1)[1]: z.read(n) for n in z.namelist() if ".data/data/" in n}
        data["<package font>"] = z.read("unified_rl/course/fonts/wqy-microhei-subset.ttf")
    return data


def test_the_wheel_installs_the_lab_extension_with_the_font_and_install_py_copies_the_same(tmp_path, source_wheel):
    """A wheel puts the built extension where JupyterLab looks (PREFIX/share/jupyter/labextensions/), with the
    file its package.json loads and the font it serves, byte for byte the figures' font; labextension/install.py
    (for editable installs, which carry no data files) writes exactly the same files."""
    data = _wheel_data(source_wheel)
    package = json.loads(data[f"{LAB_DIR}/package.json"])
    assert package["name"] == LAB_DIR.rsplit("/", 1)[1]
    assert f"{LAB_DIR}/{package['jupyterlab']['_build']['load']}" in data
    assert data[f"{LAB_DIR}/static/wqy-microhei-subset.ttf"] == Path(cjk_font.SHIPPED).read_bytes()
    assert data["<package font>"] == Path(cjk_font.SHIPPED).read_bytes()  # the figures' copy, as before
    _load_install().install(str(tmp_path / "prefix"))
    copied = {p.relative_to(tmp_path / "prefix").as_posix(): p.read_bytes()
              for p in (tmp_path / "prefix").rglob("*") if p.is_file()}
    assert copied == {k: v for k, v in data.items() if k.startswith(LAB_DIR)}


def test_install_py_refuses_a_data_files_pattern_that_matches_nothing(tmp_path):
    """A pattern naming no file (an unbuilt extension) is a clear error, not a silently partial extension."""
    bad = tmp_path / "pyproject.toml"
    bad.write_text(f'[tool.setuptools.data-files]\n"{LAB_DIR}/static" = ["labextension/built/static/nothing-*.js"]\n')
    with pytest.raises(ValueError, match="nothing-\\*.js.*matches no file"):
        _load_install().data_files(str(bad))
    r = subprocess.run([sys.executable, str(EXT / "install.py"), "a", "b"], capture_output=True, text=True)
    assert r.returncode != 0 and r.stderr.strip().startswith("usage:") and "Traceback" not in r.stderr


def _js_strings(text):
    """The single-quoted string literals of JavaScript source, comments left out."""
    return set(re.findall(r"'([^'\n]+)'", re.sub(r"(^|\s)//.*$", "", text, flags=re.M)))


def test_the_committed_build_is_the_source_built():
    """Every string literal of labextension/src/index.js is in the committed bundle: an edit of the source
    without `labextension/build.sh` fails here (a minifier keeps string literals)."""
    source = (EXT / "src" / "index.js").read_text()
    built = "".join(p.read_text() for p in (EXT / "built" / "static").glob("*.js"))
    strings = _js_strings(source)
    assert len(strings) > 10
    assert sorted(s for s in strings if s not in built) == []


def test_the_lab_and_the_book_declare_the_same_cjk_face():
    """labextension/src/index.js and book/_static/zh.css name the same system fonts and the same unicode-range,
    and the face's file is the package's font."""
    source = (EXT / "src" / "index.js").read_text()
    css = (REPO / "book" / "_static" / "zh.css").read_text()
    system = re.search(r"const SYSTEM = \[(.*?)\];", source, re.S).group(1)
    names = re.findall(r"'([^']+)'", system)
    assert len(names) >= 6 and re.findall(r'local\("([^"]+)"\)', css) == names
    (unicode_range,) = re.findall(r"const RANGE = '([^']+)'", source)
    assert f"unicode-range: {unicode_range};" in css
    font = Path(cjk_font.SHIPPED).name
    assert f"const FILE = '{font}'" in source and f'url("{font}")' in css
