"""scripts/book_static.py: a widget's stored state as static HTML. An HTMLMath widget's TeX is handed to the
book's MathJax 3 in the delimiters it reads (`\\[...\\]`, `\\(...\\)`: it takes no single `$`) inside a class that
lifts the page's `mathjax_ignore` (tests/browser/test_book.py checks the built page typesets it)."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scripts"))
import book_static  # noqa: E402


def _state(model, value):
    return {"w": {"model_name": model, "state": {"value": value}}}


def test_an_htmlmath_widget_gets_tex_delimiters_mathjax_reads_and_a_class_that_lets_it_typeset():
    value = r"rule:<br>$$GC_{1,1} = \frac{2}{3}$$$$GC_{2,1} = x$$<br>P: $\text{cispo}: a$ costs \$5"
    out = book_static.widget_html("w", _state("HTMLMathModel", value))
    assert out == (r'<div class="mathjax_process">rule:<br>\[GC_{1,1} = \frac{2}{3}\]\[GC_{2,1} = x\]<br>'
                   r"P: \(\text{cispo}: a\) costs \$5</div>")


def test_a_plain_html_widget_is_left_as_written():
    value = "a price of $5 and $6 <b>bold</b>"  # dollars in an HTML widget are money, not math
    assert book_static.widget_html("w", _state("HTMLModel", value)) == f"<div>{value}</div>"
