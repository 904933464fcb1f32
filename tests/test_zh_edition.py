"""The Chinese edition (course/zh/) stays in step with the English notebooks, cell by cell.

For every English notebook there is a twin with the same cells (ids, types, order); every Markdown
cell records the hash of the English text it translates, and that hash is the current English
cell's (so an English edit without its translation fails here); code cells are the English ones
except the one declared line; a translated cell holds Chinese, and keeps the English cell's
equations, numbers and links (adjusted for the deeper folder). `problems` is written from the
contract (docs/ARCHITECTURE.md, "The Chinese edition") independently of scripts/zh_sync.py, and the
negative controls below show that it reports each kind of drift. Until the first twin notebook
lands in course/zh/ (which holds the glossary before that) the real-notebook test skips; once one
twin is there, every English notebook must have its twin.
"""

import contextlib
import copy
import hashlib
import io
import re
import subprocess
import sys
import tokenize
from collections import Counter
from pathlib import Path

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

REPO = Path(__file__).resolve().parents[1]
COURSE, ZH = REPO / "course", REPO / "course" / "zh"
sys.path.insert(0, str(REPO / "scripts"))
import zh_sync  # noqa: E402

LANG_LINE = 'from unified_rl.course.i18n import set_language; set_language("zh")  # 中文版'
CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
MATH = re.compile(r"\$\$.+?\$\$|(?<![\\$])\$[^$\n]+?\$", re.S)  # display first, then inline
FENCE, TICKS = re.compile(r"```.*?```", re.S), re.compile(r"`[^`\n]*`")
LINK = re.compile(r"\]\(([^)\s]+)")
LIST_MARKER = re.compile(r"^\s*\d+[.)]\s", re.M)  # "1. " items: a translation may regroup a list
NUMBER = re.compile(r"\d+(?:\.\d+)*")


def _src(cell):
    s = cell.get("source", "")
    return "".join(s) if isinstance(s, list) else s


def _code(source):
    """A code cell as it runs: Python tokens without comments (nbgrader's `### BEGIN/END` markers kept,
    nbgrader reads them); the source itself if it does not tokenize."""
    try:
        toks = tokenize.generate_tokens(io.StringIO(source).readline)
        return [(t.type, t.string) for t in toks if t.type not in (tokenize.NL, tokenize.COMMENT)
                or re.match(r"#+\s*(BEGIN|END) (SOLUTION|HIDDEN TESTS)", t.string)]
    except (tokenize.TokenError, IndentationError, SyntaxError):
        return source


def _hash(text):
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


TEXT_LABEL = re.compile(r"\\text\{[^{}]*\}")  # an equation's words: translated, so masked when comparing
# words a twin's \text{} may keep in English: symbols of the mathematics and option names, not prose
TEXT_LABEL_WORDS = {"kl", "logp", "mean", "std", "sg", "clip", "odds", "pass", "seq", "token", "dr", "group"}


def _masked(math):
    """An equation with its \text{} labels removed and its spacing dropped (kept only between letters)."""
    math = TEXT_LABEL.sub(" ", math)
    return re.sub(r" +", " ", re.sub(r"(?<![A-Za-z])\s+|\s+(?![A-Za-z])", "", math))


def _math(text):
    return Counter(_masked(m.group(0)) for m in MATH.finditer(FENCE.sub("", text)))


def _english_labels(text):
    """The \text{} labels of a twin's equations that still hold English words."""
    labels = [label for m in MATH.finditer(FENCE.sub("", text)) for label in TEXT_LABEL.findall(m.group(0))]
    words = lambda label: re.findall(r"\b[A-Za-z][a-z]+\b", label[len("\\text{"):])  # noqa: E731 (not names: GSPO, ReMax)
    return [label for label in labels if any(w.lower() not in TEXT_LABEL_WORDS for w in words(label))]


def _prose(text):
    """Text outside code, math, links' targets, URLs, tags; with digit groups joined (2,000 -> 2000)."""
    text = MATH.sub(" ", TICKS.sub(" ", FENCE.sub(" ", text)))
    text = re.sub(r"<[^>]+>|https?://\S+", " ", LINK.sub("](", text))
    return re.sub(r"(?<=\d),(?=\d{3}\b)", "", text)


def _numbers(text):
    """Numbers written in the text, code and math included (each kept byte for byte), list markers not."""
    return Counter(NUMBER.findall(re.sub(r"(?<=\d),(?=\d{3}\b)", "", LIST_MARKER.sub("", text))))


def _has_prose(english):
    """Whether an English cell has words to translate (method names in capitals alone are not)."""
    return any(not w.isupper() for w in re.findall(r"[A-Za-z]{2,}", _prose(english)))


def _twin_link(target):
    """An English link target as the twin must write it (the twin is one folder deeper)."""
    if target.startswith("../"):
        return "../" + target
    return re.sub(r"(/blob/[^/]+/course/|lab/tree/course/)(?=\d\d_)", r"\1zh/", target)


def _declared(nb):
    return next((i for i, c in enumerate(nb.cells) if c.cell_type == "code" and "google.colab" not in _src(c)
                 and ("from unified_rl" in _src(c) or "import unified_rl" in _src(c))), None)


def problems(en, zh, name):
    """Every way the twin `zh` of English notebook `en` (file `name`) breaks the contract, as lines."""
    out = []
    shape = lambda nb: [(c.get("id"), c.cell_type) for c in nb.cells]  # noqa: E731
    if shape(en) != shape(zh):
        out.append(f"cells differ: English {shape(en)}, twin {shape(zh)}")
        return out
    meta = copy.deepcopy(dict(en.metadata))
    meta["unified_rl"] = {"edition": "zh", "source": f"../{name}"}
    if dict(zh.metadata) != meta:
        out.append("notebook metadata is not the English one plus unified_rl edition/source")
    declared = _declared(en)
    for i, (e, z) in enumerate(zip(en.cells, zh.cells)):
        where = f"cell {i} (id {e.get('id')})"
        if e.cell_type == "code":
            want = (LANG_LINE + "\n" if i == declared else "") + _src(e)
            if _code(_src(z)) != _code(want):  # comments aside: a twin translates them
                out.append(f"{where}: code differs from the English cell" + (" (the declared line included)" if i == declared else ""))
            if z.metadata != e.metadata:
                out.append(f"{where}: code cell metadata differs")
            if z.get("outputs") or z.get("execution_count") is not None:
                out.append(f"{where}: stored with outputs")
            continue
        if e.cell_type != "markdown":
            if _src(z) != _src(e):
                out.append(f"{where}: raw cell differs")
            continue
        e_text, z_text = _src(e), _src(z)
        recorded = z.metadata.get("unified_rl", {}).get("translates")
        if recorded is None:
            out.append(f"{where}: not translated yet")
            continue
        if recorded != _hash(e_text):
            out.append(f"{where}: translates {recorded}, but the English cell is now {_hash(e_text)}: "
                       "retranslate it (python scripts/zh_sync.py --status)")
        rest = copy.deepcopy(dict(z.metadata))
        rest["unified_rl"] = {k: v for k, v in rest["unified_rl"].items() if k != "translates"}
        if not rest["unified_rl"]:
            del rest["unified_rl"]
        if rest != dict(e.metadata):
            out.append(f"{where}: metadata is not the English cell's plus translates")
        if _has_prose(e_text) and not CJK.search(_prose(z_text)):
            out.append(f"{where}: no Chinese in the translation")
        if _math(z_text) != _math(e_text):
            out.append(f"{where}: equations differ: missing {sorted((_math(e_text) - _math(z_text)).elements())}, "
                       f"added {sorted((_math(z_text) - _math(e_text)).elements())}")
        if _english_labels(z_text):
            out.append(f"{where}: English words in an equation: {_english_labels(z_text)}")
        if _numbers(z_text) != _numbers(e_text):
            out.append(f"{where}: numbers differ: missing {sorted((_numbers(e_text) - _numbers(z_text)).elements())}, "
                       f"added {sorted((_numbers(z_text) - _numbers(e_text)).elements())}")
        want_links = Counter(_twin_link(t) for t in LINK.findall(e_text))
        if Counter(t for t in LINK.findall(z_text) if t != "GLOSSARY.md") != want_links:  # the twins' own link
            out.append(f"{where}: links differ from the English cell's (as seen from course/zh/): "
                       f"want {sorted(want_links.elements())}, found {sorted(LINK.findall(z_text))}")
    return out


# --- fixtures: a tiny English notebook and its twin, written by hand ---------------------------------

EN_TEXT = ["# 01 · A tiny notebook\n\nThe **gradient coefficient** $GC$ scales each token's gradient; "
           "see [the next notebook](02_next.ipynb) and [the guide](../docs/ARCHITECTURE.md).",
           "The run reached 0.875 accuracy after 2,000 steps:\n\n$$\nA_i = \\frac{r_i - \\mu}{\\sigma}\n$$\n\n"
           "1. sample a group\n2. score it",
           "[Open in Colab](https://colab.research.google.com/github/o/r/blob/main/course/01_tiny.ipynb)"]
ZH_TEXT = ["# 01 · 一个小笔记本\n\n**梯度系数**（gradient coefficient）$GC$ 缩放每个词元的梯度；"
           "见[下一个笔记本](02_next.ipynb)和[说明](../../docs/ARCHITECTURE.md)。",
           "训练 2000 步后准确率达到 0.875：\n\n$$\nA_i = \\frac{r_i - \\mu}{\\sigma}\n$$\n\n"
           "- 采样一组\n- 打分",
           "[在 Colab 中打开](https://colab.research.google.com/github/o/r/blob/main/course/zh/01_tiny.ipynb)"]
EN_CODE = ["# On Colab: install this course's package.\nimport sys\nif 'google.colab' in sys.modules:\n    pass",
           "from unified_rl import coefficients\nx = 1", "print(x + 1)"]


def english():
    cells = [new_markdown_cell(EN_TEXT[0]), new_code_cell(EN_CODE[0]), new_code_cell(EN_CODE[1]),
             new_markdown_cell(EN_TEXT[1]), new_code_cell(EN_CODE[2], metadata={"tags": ["t"]}),
             new_markdown_cell(EN_TEXT[2], metadata={"tags": ["colab-link"]})]
    for i, c in enumerate(cells):
        c["id"] = str(i)
    return new_notebook(cells=cells, metadata={"kernelspec": {"name": "python3", "display_name": "Python 3",
                                                              "language": "python"}})


def twin(en):
    """The twin, built by hand from the contract (not by zh_sync)."""
    zh = copy.deepcopy(en)
    zh.metadata["unified_rl"] = {"edition": "zh", "source": "../01_tiny.ipynb"}
    zh.cells[2].source = LANG_LINE + "\n" + EN_CODE[1]
    for i, text in zip((0, 3, 5), ZH_TEXT):
        zh.cells[i].metadata["unified_rl"] = {"translates": _hash(_src(en.cells[i]))}
        zh.cells[i].source = text
    return zh


def test_the_fixture_twin_is_in_step():
    en = english()
    assert problems(en, twin(en), "01_tiny.ipynb") == []
    assert not any(zh_sync.compare(en, twin(en), "01_tiny.ipynb").values())


def _reported(en, zh, fragment):
    found = problems(en, zh, "01_tiny.ipynb")
    assert any(fragment in line for line in found), f"expected {fragment!r} among {found}"


def test_an_english_edit_without_its_translation_fails():
    en, zh = english(), twin(english())
    en.cells[3].source = en.cells[3].source.replace("0.875", "0.9")  # the English number changed
    _reported(en, zh, "retranslate")
    assert zh_sync.compare(en, zh, "01_tiny.ipynb")["stale"] == ["3"]


def test_a_cell_added_or_removed_on_one_side_fails():
    en, zh = english(), twin(english())
    en.cells.insert(4, new_markdown_cell("A new paragraph."))
    en.cells[4]["id"] = "new"
    _reported(en, zh, "cells differ")
    assert zh_sync.compare(en, zh, "01_tiny.ipynb")["added"] == ["new"]
    en, zh = english(), twin(english())
    del zh.cells[3]
    _reported(en, zh, "cells differ")
    en, zh = english(), twin(english())
    zh.cells[3], zh.cells[4] = zh.cells[4], zh.cells[3]
    _reported(en, zh, "cells differ")
    assert zh_sync.compare(en, zh, "01_tiny.ipynb")["reordered"]


def test_a_changed_code_cell_fails():
    for change in (lambda zh: setattr(zh.cells[4], "source", "print(x + 2)"),  # a different line
                   lambda zh: setattr(zh.cells[2], "source", EN_CODE[1]),  # the declared line missing
                   lambda zh: setattr(zh.cells[4], "source", LANG_LINE + "\n" + EN_CODE[2]),  # declared twice
                   lambda zh: zh.cells[4].metadata.update(tags=[])):
        en, zh = english(), twin(english())
        change(zh)
        found = problems(en, zh, "01_tiny.ipynb")
        assert any("code" in line for line in found), found
        assert zh_sync.compare(en, zh, "01_tiny.ipynb")["code"], found


def test_code_comments_may_be_chinese_and_update_keeps_them():
    """A twin's code cell may translate its comments (the code compared without them); a code change
    beside a translated comment still fails; --update keeps the translated comments where a line's code
    is unchanged and takes the English code exactly (nbgrader's markers are code, never translated)."""
    en, zh = english(), twin(english())
    zh.cells[1].source = EN_CODE[0].replace("# On Colab: install this course's package.", "# 在 Colab 上：安装本课程的软件包。")
    assert problems(en, zh, "01_tiny.ipynb") == [] and not zh_sync.compare(en, zh, "01_tiny.ipynb")["code"]
    changed = copy.deepcopy(zh)
    changed.cells[1].source = changed.cells[1].source.replace("pass", "x = 2")
    _reported(en, changed, "code differs")
    assert zh_sync.compare(en, changed, "01_tiny.ipynb")["code"] == ["1"]
    marker = copy.deepcopy(zh)
    marker.cells[4].source = "### BEGIN SOLUTION\nprint(x + 1)\n### END SOLUTION"
    _reported(english(), marker, "code differs")  # a marker is code: adding one is a change
    en.cells[1].source = EN_CODE[0].replace("    pass", "    print('colab')  # say so")
    updated = zh_sync.update(en, zh, "01_tiny.ipynb")
    assert updated.cells[1].source.startswith("# 在 Colab 上：安装本课程的软件包。")
    assert "print('colab')  # say so" in updated.cells[1].source
    assert _code(updated.cells[1].source) == _code(en.cells[1].source) and problems(en, updated, "01_tiny.ipynb") == []


def test_a_translation_that_drops_an_equation_a_number_a_link_or_its_chinese_fails():
    for i, old, new, fragment in [(3, "$$\nA_i = \\frac{r_i - \\mu}{\\sigma}\n$$", "", "equations differ"),
                                  (0, "$GC$", "GC", "equations differ"),
                                  (3, "0.875", "0.88", "numbers differ"),
                                  (3, "2000", "两千", "numbers differ"),
                                  (0, "../../docs", "../docs", "links differ"),
                                  (5, "course/zh/", "course/", "links differ")]:
        en, zh = english(), twin(english())
        assert old in zh.cells[i].source
        zh.cells[i].source = zh.cells[i].source.replace(old, new)
        _reported(en, zh, fragment)
    en, zh = english(), twin(english())
    zh.cells[3].source = EN_TEXT[1]  # the English text, marked as translated
    _reported(en, zh, "no Chinese")


def test_an_equations_labels_are_translated_and_nothing_else_changes():
    """A \\text{} label is masked when equations are compared: translated (even regrouped around a
    symbol) it passes; an English label left in a twin fails, and so does any change outside the labels."""
    en_math = "$$GC = \\begin{cases} 1 & \\text{the answer of } o \\text{ is correct} \\end{cases}$$"
    zh_math = "$$GC = \\begin{cases} 1 & o \\text{ 的答案正确} \\end{cases}$$"
    assert _math(en_math) == _math(zh_math) and not _english_labels(zh_math)
    assert _english_labels(en_math) == ["\\text{the answer of }", "\\text{ is correct}"]
    assert not _english_labels("$\\text{KL}(\\pi) + \\text{std}$") and _math(zh_math) != _math(zh_math.replace("1", "2"))
    assert _math(zh_math) != _math(zh_math.replace("o \\text", "q \\text"))
    for cell_text, fragment in [(ZH_TEXT[1].replace("A_i =", "A_i = \\text{advantage}"), "English words in an equation"),
                                (ZH_TEXT[1].replace("A_i =", "A_i \\text{优势} = -"), "equations differ")]:
        en, zh = english(), twin(english())
        zh.cells[3].source = cell_text
        _reported(en, zh, fragment)


def test_what_is_not_a_difference():
    """The narrow exceptions: list markers, digit groups, a prose-less cell without Chinese."""
    assert _numbers("1. a\n2. b 2,000") == _numbers("- 甲\n- 乙 2000")
    assert not _has_prose("$$x$$\n`code` [GRPO](01_a.ipynb)") and _has_prose("GRPO uses groups")
    assert _twin_link("03_x.ipynb") == "03_x.ipynb" and _twin_link("../README.md") == "../../README.md"


def test_stored_outputs_fail():
    en, zh = english(), twin(english())
    zh.cells[4].outputs = [nbformat.v4.new_output("stream", name="stdout", text="2\n")]
    zh.cells[4].execution_count = 1
    _reported(en, zh, "stored with outputs")


# --- zh_sync.py on a temporary course folder ----------------------------------------------------------

def _sync(course, *args, process=False):
    """scripts/zh_sync.py ARGS --course COURSE: (exit status, stdout + stderr), run by its `main` in this
    process (a second each, not an interpreter's start), or with process=True as the command itself."""
    argv = [*args, "--course", str(course)]
    if process:
        r = subprocess.run([sys.executable, str(REPO / "scripts" / "zh_sync.py"), *argv], capture_output=True, text=True)
        return r.returncode, r.stdout + r.stderr
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
        rc = zh_sync.main(argv)
    return rc or 0, out.getvalue()


def test_zh_sync_writes_skeletons_updates_code_and_never_touches_a_translation(tmp_path):
    en = english()
    nbformat.write(en, tmp_path / "01_tiny.ipynb")
    rc, out = _sync(tmp_path, "--status")
    assert rc == 1 and "01_tiny.ipynb: no twin" in out
    rc, out = _sync(tmp_path, "--update")
    assert rc == 0 and "updated  zh/01_tiny.ipynb" in out
    skeleton = nbformat.read(tmp_path / "zh" / "01_tiny.ipynb", as_version=4)
    found = problems(en, skeleton, "01_tiny.ipynb")
    assert found and all("not translated yet" in line for line in found), found  # only the text is missing
    assert [_src(c) for c in skeleton.cells if c.cell_type == "markdown"] == EN_TEXT

    nbformat.write(twin(en), tmp_path / "zh" / "01_tiny.ipynb")  # a translator's work
    translated = (tmp_path / "zh" / "01_tiny.ipynb").read_text()
    assert _sync(tmp_path, "--status")[0] == 0
    rc, out = _sync(tmp_path, "--update")
    assert rc == 0 and "updated" not in out and (tmp_path / "zh" / "01_tiny.ipynb").read_text() == translated

    en.cells[4].source = "print(x + 3)"  # English edits: a code cell, a Markdown cell, a new cell, reordering
    en.cells[3].source = en.cells[3].source.replace("0.875", "0.9")
    en.cells.insert(1, new_markdown_cell("A new paragraph."))
    en.cells[1]["id"] = "new"
    nbformat.write(en, tmp_path / "01_tiny.ipynb")
    rc, out = _sync(tmp_path, "--status")
    assert rc == 1 and "added new" in out and "stale 3" in out and "code 4" in out
    assert _sync(tmp_path, "--update")[0] == 0
    once = (tmp_path / "zh" / "01_tiny.ipynb").read_text()
    assert _sync(tmp_path, "--update")[0] == 0 and (tmp_path / "zh" / "01_tiny.ipynb").read_text() == once
    zh = nbformat.read(tmp_path / "zh" / "01_tiny.ipynb", as_version=4)
    assert {p.split(":")[0] for p in problems(en, zh, "01_tiny.ipynb")} == {"cell 1 (id new)", "cell 4 (id 3)"}
    assert zh.cells[4].source == ZH_TEXT[1]  # the stale translation is kept for its translator
    assert zh.cells[0].source == ZH_TEXT[0] and zh.cells[6].source == ZH_TEXT[2]  # valid ones untouched
    assert zh.cells[5].source == "print(x + 3)"


def test_zh_sync_keeps_a_translation_when_ids_are_renumbered(tmp_path):
    en = english()
    nbformat.write(twin(en), (tmp_path / "zh").mkdir() or tmp_path / "zh" / "01_tiny.ipynb")
    en.cells.insert(0, new_markdown_cell("Intro."))
    for i, c in enumerate(en.cells):
        c["id"] = str(i)  # colab.py renumbers ids when it inserts a cell
    nbformat.write(en, tmp_path / "01_tiny.ipynb")
    assert _sync(tmp_path, "--update")[0] == 0
    zh = nbformat.read(tmp_path / "zh" / "01_tiny.ipynb", as_version=4)
    assert [c.source for c in zh.cells if c.cell_type == "markdown"] == ["Intro."] + ZH_TEXT
    assert [p.split(":")[0] for p in problems(en, zh, "01_tiny.ipynb")] == ["cell 0 (id 0)"]


def test_zh_sync_refuses_a_missing_folder_or_a_broken_twin_in_one_line(tmp_path):
    for process in (True, False):  # the command, and its main as the other tests call it
        rc, out = _sync(tmp_path / "nothing", "--status", process=process)
        assert rc == 2 and out.strip().count("\n") == 0 and "no folder" in out
    nbformat.write(english(), tmp_path / "01_tiny.ipynb")
    (tmp_path / "zh").mkdir()
    (tmp_path / "zh" / "01_tiny.ipynb").write_text("{not json")
    for mode in ("--status", "--update"):
        rc, out = _sync(tmp_path, mode)
        assert rc == 2 and out.strip().count("\n") == 0 and "01_tiny.ipynb is not a readable notebook" in out, out
    assert (tmp_path / "zh" / "01_tiny.ipynb").read_text() == "{not json"  # left as it was


# --- the real course ------------------------------------------------------------------------------------

ENGLISH = sorted(COURSE.glob("[0-9]*.ipynb"))
TWINS = sorted(ZH.glob("[0-9]*.ipynb"))
NOT_YET = "course/zh/ holds no twin notebook yet: the Chinese edition's notebooks have not landed"


@pytest.mark.parametrize("path", ENGLISH, ids=[p.name for p in ENGLISH])
def test_every_notebook_has_a_twin_in_step(path):
    if not TWINS:
        pytest.skip(NOT_YET)
    twin_path = ZH / path.name
    assert twin_path.is_file(), f"course/zh/{path.name} is missing (python scripts/zh_sync.py --update writes a skeleton)"
    found = problems(nbformat.read(path, as_version=4), nbformat.read(twin_path, as_version=4), path.name)
    assert not found, f"course/zh/{path.name}:\n" + "\n".join(found)


def test_no_twin_without_an_english_notebook():
    if not TWINS:
        pytest.skip(NOT_YET)
    orphans = sorted({p.name for p in TWINS} - {p.name for p in ENGLISH})
    assert not orphans, f"twins without an English notebook: {orphans}"


# --- student copies of the Chinese edition ----------------------------------------------------------

def assert_twin_copy_is_the_english(en_copy, zh_copy, where):
    """A student copy of a twin holds no solution or hidden test, and its code cells (and their nbgrader
    metadata) are the English student copy's, the declared line and the comments aside."""
    for copy_nb in (en_copy, zh_copy):
        text = "\n".join(c.source for c in copy_nb.cells)
        assert "BEGIN SOLUTION" not in text and "BEGIN HIDDEN TESTS" not in text, where
    declared = _declared(en_copy)
    assert len(en_copy.cells) == len(zh_copy.cells), where
    for i, (e, z) in enumerate(zip(en_copy.cells, zh_copy.cells)):
        if e.cell_type == "code":
            assert _code(z.source) == _code((LANG_LINE + "\n" if i == declared else "") + e.source), f"{where}, cell {i}"
            # nbgrader's checksum hashes the source, comments included: a twin's translated comments change it
            strip = lambda meta: {k: v for k, v in (meta or {}).items() if k != "checksum"}  # noqa: E731
            assert strip(z.metadata.get("nbgrader")) == strip(e.metadata.get("nbgrader")), f"{where}, cell {i}"


# nbgrader's release of every twin is checked the same way by tests/test_nbgrader.py's
# test_make_student_is_the_same_release, which runs `make student`'s nbgrader engine on the whole course
def test_student_copies_strip_the_chinese_twins_as_the_english(tmp_path):
    """`make student` releases course/zh/ into build/student/zh/: no solution or hidden test left in a
    twin, and its code cells are the English student copy's (the declared line aside)."""
    from unified_rl.course import student

    name = "09_summary.ipynb"
    en = nbformat.read(COURSE / name, as_version=4)
    twin_nb = nbformat.read(ZH / name, as_version=4) if (ZH / name).exists() else zh_sync.update(en, None, name)
    src = tmp_path / "course"
    (src / "zh").mkdir(parents=True)
    nbformat.write(en, src / name)
    nbformat.write(twin_nb, src / "zh" / name)
    (src / "zh" / "GLOSSARY.md").write_text("# 术语表\n", encoding="utf-8")
    written = student.make_student_copies(src, tmp_path / "student", engine="builtin")
    rel = sorted(p.relative_to(tmp_path / "student").as_posix() for p in written)
    assert {name, f"zh/{name}", "zh/GLOSSARY.md"} <= set(rel)
    en_copy = nbformat.read(tmp_path / "student" / name, as_version=4)
    zh_copy = nbformat.read(tmp_path / "student" / "zh" / name, as_version=4)
    assert sum("### BEGIN SOLUTION" in c.source for c in en.cells) > 0  # the notebook sets exercises
    assert all("raise NotImplementedError()" in "\n".join(c.source for c in nb.cells) for nb in (en_copy, zh_copy))
    assert_twin_copy_is_the_english(en_copy, zh_copy, name)


# --- the site's Chinese pages (scripts/build_book.py, without executing anything) -------------------

def test_the_site_gives_each_page_its_switch_and_the_chinese_pages_their_links(tmp_path):
    import json

    import build_book

    en = english()
    zh = twin(en)
    nbformat.write(en, tmp_path / "en.ipynb")
    nbformat.write(zh, tmp_path / "zh.ipynb")
    build_book.prepare(tmp_path / "en.ipynb", tmp_path / "en_page.ipynb", "o/r", "01_tiny.ipynb",
                       other="zh/01_tiny.html")
    build_book.prepare(tmp_path / "zh.ipynb", tmp_path / "zh_page.ipynb", "o/r", "01_tiny.ipynb", zh=True,
                       other="../01_tiny.html", max_steps=2)
    en_page = nbformat.read(tmp_path / "en_page.ipynb", as_version=4)
    zh_page = nbformat.read(tmp_path / "zh_page.ipynb", as_version=4)
    en_title, zh_title = en_page.cells[0].source.split("\n"), zh_page.cells[0].source.split("\n")
    assert 'href="zh/01_tiny.html"' in en_title[2] and ">中文<" in en_title[2]  # right under the title
    assert 'href="../01_tiny.html"' in zh_title[2] and ">English<" in zh_title[2]
    assert zh_title[0] == ZH_TEXT[0].split("\n")[0]
    note = zh_page.cells[1].source
    assert CJK.search(note) and "UNIFIED_RL_MAX_STEPS=2" in note
    assert "blob/main/course/zh/01_tiny.ipynb" in note and "lab/tree/course/zh/01_tiny.ipynb" in note
    assert "blob/main/course/01_tiny.ipynb" in en_page.cells[1].source
    assert not any("colab-link" in c.metadata.get("tags", []) for c in zh_page.cells)  # the note has the links

    src = tmp_path / "src"
    (src / "zh").mkdir(parents=True)
    for md in ("README.md", "GLOSSARY.md"):
        (src / "zh" / md).write_text("# x\n", encoding="utf-8")
    build_book.write_config(str(src), "https://github.com/o/r", "o/r", ["01_tiny.ipynb"], ["01_tiny.ipynb"])
    toc = json.loads((src / "_toc.yml").read_text())
    assert toc["parts"][-1]["chapters"] == [{"file": "zh/README"}, {"file": "zh/01_tiny"}, {"file": "zh/GLOSSARY"}]
    config = json.loads((src / "_config.yml").read_text())["sphinx"]["config"]
    assert "zh.css" in config["html_css_files"] and config["html_js_files"] == ["zh.js"]
    assert (REPO / "book" / "_static" / "zh.css").is_file() and (REPO / "book" / "_static" / "zh.js").is_file()


SEED_TERMS = ["统一范式", "数据来源", "奖励函数", "梯度系数", "优势", "策略", "参考模型", "组相对", "监督微调",
              "拒绝采样微调", "在线拒绝采样微调", "直接偏好优化", "近端策略优化", "组相对策略优化", "价值函数 / 评论家",
              "过程监督", "结果监督", "奖励模型", "KL 散度", "裁剪", "重要性比率", "在线 / 离线", "同策略 / 异策略",
              "练习", "提示", "答案 / 参考解答", "检查"]  # the terms the edition's contract starts from


def test_the_glossary_has_every_seed_term_once_with_its_english_and_a_note():
    rows = [[cell.strip() for cell in line.strip().strip("|").split("|")]
            for line in (ZH / "GLOSSARY.md").read_text(encoding="utf-8").split("\n## ")[0].splitlines()  # the terms' table
            if line.startswith("|") and not line.startswith("|---")][1:]  # the header row aside
    assert all(len(r) == 3 and all(r) for r in rows), [r for r in rows if len(r) != 3 or not all(r)]
    terms = [r[0] for r in rows]
    assert len(terms) == len(set(terms)), "a term is listed twice"
    assert not set(SEED_TERMS) - set(terms), f"missing: {sorted(set(SEED_TERMS) - set(terms))}"
    assert all(re.search(r"[A-Za-z]", r[1]) and CJK.search(r[2]) for r in rows)


def test_the_chinese_index_links_every_twin():
    index = (ZH / "README.md").read_text(encoding="utf-8")
    assert sorted(set(re.findall(r"\]\((\d\d_\w+\.ipynb)\)", index))) == [p.name for p in ENGLISH]


def test_an_edit_of_a_real_english_notebook_fails_without_its_translation(tmp_path):
    """The negative control on the course itself: a temporary copy of an English notebook edited
    (a sentence, a code line) is out of step with its twin, which was in step before."""
    if not TWINS:
        pytest.skip(NOT_YET)
    path = ENGLISH[0]
    en, zh = nbformat.read(path, as_version=4), nbformat.read(ZH / path.name, as_version=4)
    assert problems(en, zh, path.name) == []
    i = next(k for k, c in enumerate(en.cells) if c.cell_type == "markdown" and k > 0)
    j = max(k for k, c in enumerate(en.cells) if c.cell_type == "code")
    en.cells[i].source += "\n\nOne more sentence."
    en.cells[j].source += "\nprint('one more line')"
    nbformat.write(en, tmp_path / path.name)
    found = problems(nbformat.read(tmp_path / path.name, as_version=4), zh, path.name)
    assert any(f"cell {i} " in line and "retranslate" in line for line in found), found
    assert any(f"cell {j} " in line and "code differs" in line for line in found), found
