"""Every course notebook carries nbgrader's cell metadata as scripts/nbgrader_cells.py writes it (rerunning
it changes nothing); the stamper refuses what nbgrader would; `grade()` raises exactly when `check()`
does not say Correct; the instructor guide's points table is the exercise modules'."""

import copy
import importlib
import pkgutil
import re
import sys
from pathlib import Path

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

import unified_rl.course.ex as ex_pkg
from unified_rl.course import exercises as E

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "scripts"))
import nbgrader_cells  # noqa: E402

NOTEBOOKS = sorted((REPO / "course").glob("*.ipynb"))
MODULES = sorted(m.name for m in pkgutil.iter_modules(ex_pkg.__path__))
ALL = [(m, n) for m in MODULES for n in E.exercises_in(importlib.import_module(f"unified_rl.course.ex.{m}"))]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_every_notebook_is_stamped(path):
    nb = nbformat.read(path, as_version=4)
    assert not nbgrader_cells.stamp_notebook(copy.deepcopy(nb), path.name), \
        f"{path.name} is not stamped: run python scripts/nbgrader_cells.py"
    module = nbgrader_cells.exercise_module(nb, path.name)
    qs = E.exercises_in(module) if module else {}
    metas = [c.metadata["nbgrader"] for c in nb.cells if "nbgrader" in c.metadata]
    ids = [m["grade_id"] for m in metas]
    assert len(ids) == len(set(ids)) == 2 * len(qs)
    tests = {m["grade_id"]: m["points"] for m in metas if m["grade"]}
    assert tests == {f"{q}_check": ex.points for q, ex in qs.items()}


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_stamping_an_unmarked_notebook_gives_the_committed_one(path):
    """Strip what the stamper wrote (metadata and grade regions); stamping restores it, and twice is once."""
    nb = nbformat.read(path, as_version=4)
    bare = copy.deepcopy(nb)
    for cell in bare.cells:
        cell.metadata.pop("nbgrader", None)
        cell.source = nbgrader_cells._GRADE_REGION.sub("", cell.source)
    assert nbgrader_cells.stamp_notebook(bare, path.name) == any("nbgrader" in c.metadata for c in nb.cells)
    assert bare == nb
    assert not nbgrader_cells.stamp_notebook(bare, path.name)


def _nb(*sources):
    cells = [new_code_cell("from unified_rl.course.ex.nb00_paradigm import q1, q2, q3")]
    return new_notebook(cells=cells + [new_markdown_cell(s[3:]) if s.startswith("md:") else new_code_cell(s)
                                       for s in sources])


ANSWER = "x = ...\n### BEGIN SOLUTION\nx = 1\n### END SOLUTION"
CHECKS = [ANSWER, "q1.check()", ANSWER, "q2.check()", ANSWER, "q3.check()"]


def test_a_good_notebook_is_stamped_and_its_stale_marks_removed():
    nb = _nb(*CHECKS, "print('done')")
    nb.cells[-1].metadata["nbgrader"] = {"grade": True, "grade_id": "old", "points": 9}
    assert nbgrader_cells.stamp_notebook(nb)
    assert "nbgrader" not in nb.cells[-1].metadata
    assert nb.cells[2].source.startswith("q1.check()\n### BEGIN HIDDEN TESTS\nq1.grade()")
    assert nb.cells[6].metadata["nbgrader"]["points"] == 3 and nb.cells[5].metadata["nbgrader"]["solution"]


@pytest.mark.parametrize("cells,message", [
    (CHECKS[:5], "a solution region with no check after it"),
    (CHECKS[1:], "q1.check\\(\\) has no answer cell"),
    (CHECKS[:4], "exercises q3 of unified_rl.course.ex.nb00_paradigm are never checked"),
    (CHECKS + ["q4.check()"], "has no exercise q4"),
    (CHECKS + [ANSWER, "q1.check()"], "q1 is checked twice"),
    (CHECKS + ["md:Solutions go between ### BEGIN SOLUTION and ### END SOLUTION."], "no check after it"),
    (CHECKS + ["### BEGIN HIDDEN TESTS\nassert x\n### END HIDDEN TESTS"], "hidden-tests region outside a check"),
    ([ANSWER + "\nq1.check()"] + CHECKS[2:], "share one cell"),
    ([ANSWER, "q1.check()\nq2.check()"] + CHECKS[2:], "one check per cell"),
])
def test_the_stamper_refuses_what_nbgrader_cannot_grade(cells, message):
    with pytest.raises(ValueError, match=message):
        nbgrader_cells.stamp_notebook(_nb(*cells), "demo.ipynb")


def test_a_check_cell_keeps_the_instructors_own_hidden_tests():
    extra = "q3.check()\n### BEGIN HIDDEN TESTS\nassert my_extra_test()\n### END HIDDEN TESTS"
    nb = _nb(*CHECKS[:5], extra)
    nbgrader_cells.stamp_notebook(nb)
    assert nb.cells[6].source.startswith(extra + "\n### BEGIN HIDDEN TESTS\nq3.grade()")
    assert not nbgrader_cells.stamp_notebook(nb)


def test_two_exercise_modules_are_refused():
    nb = _nb(*CHECKS)
    nb.cells.append(new_code_cell("from unified_rl.course.ex.nb01_sft import q1 as other"))
    with pytest.raises(ValueError, match="2 modules"):
        nbgrader_cells.stamp_notebook(nb, "demo.ipynb")


@pytest.mark.parametrize("module,name", ALL, ids=[f"{m}.{n}" for m, n in ALL])
def test_grade_raises_unless_correct(module, name):
    q = getattr(importlib.import_module(f"unified_rl.course.ex.{module}"), name)
    assert isinstance(q.points, int) and q.points >= 1
    q.grade(q.solution_value)  # nothing raised: full points
    for answer in [q.stub, *q.wrong]:
        with pytest.raises(E.AnswerNotCorrect, match=rf"(Incorrect|Not attempted yet).*\(0 of {q.points} points\)"):
            q.grade(answer)
        assert not q.check(answer)  # the same verdict as the learner's check


def test_grade_reads_the_notebook_variable():
    from unified_rl.course.ex.nb00_paradigm import q1
    grpo_differs_in = "data source"  # noqa: F841 (read by grade() from this frame)
    with pytest.raises(E.AnswerNotCorrect, match="both sample the current policy"):
        q1.grade()
    grpo_differs_in = "gradient coefficient"  # noqa: F841
    q1.grade()


def test_a_warning_reaches_the_verdict_not_stderr(capsys):
    """nbgrader zeroes a test cell that writes to stderr: a correct answer that warns keeps its points."""
    import warnings
    from unified_rl.course.ex.nb00_paradigm import q3

    def my_surrogate_loss(logp, coef, mask):
        warnings.warn("an old habit")
        return q3.solution_value(logp, coef, mask)

    q3.grade(my_surrogate_loss)
    assert q3.check(my_surrogate_loss)
    out = capsys.readouterr()
    assert out.err == "" and "Correct (warned while checking: UserWarning: an old habit)" in out.out


@pytest.mark.parametrize("points", [0, -1, 1.5, True, "2"])
def test_points_must_be_a_positive_whole_number(points):
    with pytest.raises(ValueError, match="points must be a positive whole number"):
        E.ValueExercise(1.0, var="x", points=points)


def test_instructor_guide_lists_the_modules_points():
    text = (REPO / "course" / "INSTRUCTORS.md").read_text()
    m = re.search(re.escape(nbgrader_cells.TABLE_BEGIN) + r"\n(.*?)\n" + re.escape(nbgrader_cells.TABLE_END), text, re.S)
    assert m, "course/INSTRUCTORS.md has no points table: run python scripts/nbgrader_cells.py"
    assert m.group(1) == nbgrader_cells.points_table(NOTEBOOKS)


ZH = REPO / "course" / "zh"


@pytest.mark.parametrize("path", [p for p in NOTEBOOKS if (ZH / p.name).exists()], ids=lambda p: p.name)
def test_chinese_titles_give_the_same_labels_and_points(path):
    """A Chinese title's label ends at the full-width "：" ("Q1：..."): in Chinese, the twin's points are the English ones."""
    from unified_rl.course.i18n import set_language
    english = nbgrader_cells.points(path)
    try:
        set_language("zh")
        titles = [E.exercises_in(nbgrader_cells.exercise_module(nbformat.read(ZH / path.name, as_version=4),
                                                                path.name))[q].title for q, *_ in english]
        chinese = nbgrader_cells.points(ZH / path.name)
    finally:
        set_language("en")
    assert all("：" in t and ":" not in t.split("：")[0] for t in titles), titles  # the titles are the Chinese ones
    assert chinese == english


def test_label_ends_at_either_colon():
    assert nbgrader_cells.label("Q3: implement eq 10") == "Q3"
    assert nbgrader_cells.label("Q3：实现 eq 10（RFT 的 GC）") == "Q3"
    assert nbgrader_cells.label("no colon") == "no colon"
