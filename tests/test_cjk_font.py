"""The font the package ships for Chinese figures: it covers every character the package's Chinese can
put on a figure, and a Chinese figure drawn with it alone (no system CJK font) shows Chinese glyphs
without a missing-glyph warning. Rebuild it with scripts/make_cjk_font.py when the first test fails."""

import io
import re
import warnings

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
