"""The notebooks' printed sentences speak Chinese in the Chinese edition.

A notebook's code is the same in both editions, so every sentence it prints, plots or displays goes
through `i18n.tr("English template", **fields)`, whose Chinese lives in the zh catalogue
(unified_rl/course/locale/zh/LC_MESSAGES/unified_rl.po, under the notebook's area #: nbNN).
These tests read the English notebooks' code (ast, no execution) and fail when
- a tr() sentence has no Chinese, or its Chinese has other {fields} than the English, or the call
  does not pass every field;
- a printed, plotted or displayed English sentence bypasses tr();
- a translation is listed that nothing uses (a sentence edited in English leaves its old key behind).
"""

import ast
import glob
import json
import os
import re
import string

import pytest

from unified_rl.course import catalogue
from unified_rl.course.i18n import SENTENCES, fields, set_language, tr

# the notebooks' areas (#: nbNN) of the zh catalogue; the catalogue holds the package's prose too
NOTEBOOK_SENTENCES = catalogue.merged({a: t for a, t in catalogue.sentence_groups().items() if a.startswith("nb")})

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
NOTEBOOKS = sorted(glob.glob(os.path.join(REPO, "course", "[0-9]*.ipynb")))
# calls whose string arguments a reader sees: printed, displayed, or drawn on a plot
SHOWN_CALLS = {"print", "Markdown", "display", "set_title", "set_xlabel", "set_ylabel", "suptitle", "title",
               "xlabel", "ylabel", "text", "annotate", "legend", "set"}
SHOWN_KEYWORDS = {"label", "title", "xlabel", "ylabel", "description", "header"}
HAN = re.compile(r"[\u4e00-\u9fff]")
# two words of letters: a sentence, not a name, a number or a symbol
WORDS = re.compile(r"[A-Za-z]{2,}[,:;]?\s+(?:[A-Za-z]{2,}|[a-z])\b")


def _name(func):
    return func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else None


def _literal_text(node):
    """The literal text of a str constant or an f-string (its {expressions} as {}), else None."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        return "".join(v.value if isinstance(v, ast.Constant) else "{}" for v in node.values)
    return None


def scan(source):
    """(tr_calls, bypasses) of one code cell: tr_calls = [(english, keyword names, has **)],
    bypasses = [English text shown without tr()]."""
    try:
        tree = ast.parse("\n".join(l for l in source.splitlines() if not l.lstrip().startswith(("%", "!"))))
    except SyntaxError:
        return [], []
    calls, bypass, inside_tr = [], [], set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and _name(node.func) == "tr":
            if node.args and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str):
                names = {k.arg for k in node.keywords if k.arg}
                calls.append((node.args[0].value, names, any(k.arg is None for k in node.keywords)))
            else:
                calls.append((None, set(), False))  # a tr() of something not a literal: cannot be checked
            inside_tr.update(id(n) for n in ast.walk(node))
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call) or id(node) in inside_tr:
            continue
        shown = list(node.args) if _name(node.func) in SHOWN_CALLS else []
        shown += [k.value for k in node.keywords if k.arg in SHOWN_KEYWORDS]
        for arg in shown:
            parts = {id(v) for sub in ast.walk(arg) if isinstance(sub, ast.JoinedStr) for v in sub.values}
            for sub in ast.walk(arg):
                if id(sub) in inside_tr or id(sub) in parts:  # an f-string is read whole, not its pieces
                    continue
                text = _literal_text(sub)
                if text and WORDS.search(text) and not HAN.search(text):
                    bypass.append(text)
    return calls, bypass


def specs(template):
    """Each {field}'s (name, conversion, format spec), sorted: a translation may reorder its fields, never
    change how one is shown ({x:.3f} must not become {x})."""
    return sorted((f, c or "", spec or "") for _, f, spec, c in string.Formatter().parse(template) if f is not None)


def problems(notebooks, sentences):
    """Everything wrong with the notebooks' sentences, as readable lines (empty: in step)."""
    out, used = [], set()
    for path in notebooks:
        nb = json.load(open(path, encoding="utf-8"))
        name = os.path.basename(path)
        for i, cell in enumerate(nb["cells"]):
            if cell["cell_type"] != "code":
                continue
            calls, bypass = scan("".join(cell["source"]))
            for english, names, star in calls:
                if english is None:
                    out.append(f"{name} cell {i}: tr() of something not a literal string")
                    continue
                used.add(english)
                if english not in sentences:
                    out.append(f"{name} cell {i}: no Chinese for {english!r}")
                    continue
                if specs(english) != specs(sentences[english]):
                    out.append(f"{name} cell {i}: fields differ: {english!r} {fields(english)} vs "
                               f"{sentences[english]!r} {fields(sentences[english])}")
                if not star and not set(fields(english)) <= names:
                    out.append(f"{name} cell {i}: tr({english!r}) is not given {sorted(set(fields(english)) - names)}")
            out += [f"{name} cell {i}: English shown without tr(): {text!r}" for text in bypass]
    out += [f"a translation nothing uses: {en!r}" for en in sorted(set(sentences) - used)]
    return out


def test_every_sentence_the_notebooks_show_is_translated():
    found = problems(NOTEBOOKS, NOTEBOOK_SENTENCES)
    assert not found, "\n".join(found)


def test_the_translations_are_chinese_and_keep_code_spans():
    assert SENTENCES, "no sentences: the notebooks print nothing through tr()"
    not_zh = [en for en, zh in SENTENCES.items() if WORDS.search(en) and not HAN.search(zh)]
    assert not not_zh, f"translations without Chinese: {not_zh}"
    lost = {en: s for en, zh in SENTENCES.items() for s in re.findall(r"`[^`]+`", en) if s not in zh}
    assert not lost, f"code spans not kept: {lost}"


def _notebook(tmp_path, *sources):
    path = tmp_path / "99_x.ipynb"
    cells = [{"cell_type": "code", "metadata": {}, "source": s, "outputs": [], "execution_count": None} for s in sources]
    path.write_text(json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}))
    return [str(path)]


@pytest.mark.parametrize("source, fragment", [
    ('print(f"max gradient difference {d:.1e}")', "without tr()"),
    ('ax.set(xlabel="GRPO step", ylim=(0, 1))', "without tr()"),
    ('ax.plot(x, y, label=f"right replies in the batch")', "without tr()"),
    ('display(Markdown("The full run is " + str(x)))', "without tr()"),
    ('print(tr("an untranslated sentence {x}", x=1))', "no Chinese"),
    ('print(tr("mean {mean:.4f}", mean=1))', "fields differ"),
    ('print(tr("std {s:.4f}", s=1))', "fields differ"),
    ('print(tr("mean {m:.4f}"))', "is not given"),
    ('print(tr(sentence))', "not a literal"),
])
def test_the_check_catches(tmp_path, source, fragment):
    """Negative controls: a sentence that bypasses tr(), lacks its Chinese, or loses a field is reported."""
    sentences = {"mean {m:.4f}": "均值 {m:.4f}", "mean {mean:.4f}": "均值 {m:.4f}", "std {s:.4f}": "标准差 {s}"}
    found = problems(_notebook(tmp_path, source), sentences)
    assert any(fragment in line for line in found), found


def test_what_is_not_a_sentence(tmp_path):
    """Names, numbers, symbols and Chinese are not English sentences; unused translations are reported."""
    found = problems(_notebook(tmp_path, 'print("messages:", m)\nprint(f"{name:<10} {d:.1e}")\nax.set(xlabel="t")',
                               'print(tr("mean {m:.4f}", m=1))'), {"mean {m:.4f}": "均值 {m:.4f}", "gone": "没了"})
    assert found == ["a translation nothing uses: 'gone'"]


def test_tr_speaks_the_current_language():
    english = next(iter(SENTENCES), None)
    if english is None:
        pytest.skip("no sentences yet")
    values = {f: 1 for f in fields(english)}
    try:
        assert tr(english, **values) == english.format(**values)
        set_language("zh")
        assert tr(english, **values) == SENTENCES[english].format(**values)
        assert tr("not in the catalogue {x}", x=2) == "not in the catalogue 2"  # English is the fallback
    finally:
        set_language("en")
    with pytest.raises(ValueError, match="needs the field"):
        tr("a {missing}")
