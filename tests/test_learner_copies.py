"""Learners' copies (what `make lab` opens in learn/): answers blank, no outputs, no grading line; every
exercise runs and says "not attempted yet" until answered, a wrong answer shows one verdict, in English
and in Chinese; a learner's copy is never rewritten; `make lab` and Binder open these copies."""

import ast
import builtins
import re
import shutil
import subprocess
from pathlib import Path

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_output

from unified_rl.course import base, display, i18n, student

REPO = Path(__file__).resolve().parents[1]
COURSE = REPO / "course"
NOTEBOOKS = sorted(p.relative_to(COURSE).as_posix() for p in [*COURSE.glob("*.ipynb"), *COURSE.glob("zh/*.ipynb")])
SECRET = "SOLUTION_TEXT_42"
_CHECK = re.compile(r"^(q\d+)\.check\(\)", re.M)


def _demo():
    cells = [new_code_cell("seen = []"),
             new_code_cell(f"answer = ...\n### BEGIN SOLUTION\nanswer = 6 * 7  # {SECRET}\n### END SOLUTION\nseen.append(1)"),
             new_code_cell(f"print(answer)\n### BEGIN HIDDEN TESTS\nassert answer == 42  # {SECRET}\n### END HIDDEN TESTS"),
             new_code_cell(f"def double(x):\n    ### BEGIN SOLUTION\n    return 2 * x  # {SECRET}\n    ### END SOLUTION"),
             new_markdown_cell(f"Why?\n\n### BEGIN SOLUTION\nBecause {SECRET}.\n### END SOLUTION")]
    for i, meta in [(1, {"solution": True, "grade": False, "locked": False, "grade_id": "a"}),
                    (2, {"solution": False, "grade": True, "locked": True, "grade_id": "b", "points": 1}),
                    (3, {"solution": True, "grade": False, "locked": False, "grade_id": "c"}),
                    (4, {"solution": True, "grade": False, "locked": False, "grade_id": "d"})]:
        cells[i].metadata["nbgrader"] = dict(meta, schema_version=3)
    cells[0].outputs, cells[0].execution_count = [new_output("stream", name="stdout", text="old\n")], 4
    return new_notebook(cells=cells)


def test_a_learner_copy_of_a_demo_notebook():
    nb = student.learner_notebook(_demo(), "demo.ipynb")
    text = nbformat.writes(nb)
    assert SECRET not in text and "BEGIN" not in text and "END SOLUTION" not in text
    assert [c.source for c in nb.cells] == [
        "seen = []", "answer = ...\n# YOUR CODE HERE\nseen.append(1)", "print(answer)",
        "def double(x):\n    # YOUR CODE HERE\n    raise NotImplementedError()", "Why?\n\nYOUR ANSWER HERE"]
    assert all(not {"nbgrader", "editable", "deletable"} & set(c.metadata) for c in nb.cells)  # nothing locked
    assert nb.cells[0].outputs == [] and nb.cells[0].execution_count is None
    ns = {}
    for cell in nb.cells[:4]:
        exec(cell.source, ns)  # Run All goes on past the unanswered exercise
    with pytest.raises(NotImplementedError):
        ns["double"](1)  # the function exercise raises only when called: its check says "not attempted"
    assert nb.metadata["unified_rl"]["learner_copy"]["of"] == "demo.ipynb"


@pytest.fixture(scope="module")
def learn(tmp_path_factory):
    dst = tmp_path_factory.mktemp("learn")
    written, kept, changed = student.make_learner_copies(COURSE, dst)
    assert not kept and not changed
    return dst, written


def _region_lines(source):
    """The lines inside a cell's solution regions that the cell holds nowhere else."""
    inside, outside, region = set(), set(), False
    for line in source.split("\n"):
        if "### BEGIN SOLUTION" in line or "### END SOLUTION" in line:
            region = "BEGIN" in line
        elif line.strip():
            (inside if region else outside).add(line.strip())
    return inside - outside


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_the_copy_has_no_solution_no_output_no_grading_line(learn, name):
    src, nb = nbformat.read(COURSE / name, as_version=4), nbformat.read(learn[0] / name, as_version=4)
    text = nbformat.writes(nb)
    assert "SOLUTION" not in text and "HIDDEN TESTS" not in text and ".grade()" not in text
    assert len(nb.cells) == len(src.cells)
    answers = 0
    for s, c in zip(src.cells, nb.cells):
        leaked = _region_lines(s.source) & {line.strip() for line in c.source.split("\n")}
        assert not leaked, f"{name}: solution lines left in the copy: {sorted(leaked)[:3]}"
        answers += bool(_region_lines(s.source))
        assert "nbgrader" not in c.metadata and c.metadata.get("editable", True)
        if c.cell_type == "code":
            assert c.outputs == [] and c.execution_count is None
    assert answers == sum(bool(c.metadata.get("nbgrader", {}).get("solution")) for c in src.cells) > 0


def _imports(nb):
    """The notebook's import statements (its answer cells rely on them), as one module."""
    body = []
    for cell in nb.cells:
        if cell.cell_type == "code" and not cell.source.lstrip().startswith(("%", "!")):
            body += [n for n in ast.parse(cell.source).body if isinstance(n, (ast.Import, ast.ImportFrom))]
    return compile(ast.Module(body, []), "imports", "exec")


def _shown(ns, source, monkeypatch):
    """What running a cell shows a learner: each verdict, and the error it raised, if any."""
    shown = []
    monkeypatch.setattr(display, "show_verdict", lambda text, colour: shown.append((text, colour)))
    try:
        exec(compile(source, "cell", "exec"), ns)
    except Exception as e:  # in Jupyter, a second (red) box under the verdict
        shown.append((f"{type(e).__name__}: {e}", "error"))
    return shown


def _exercises(nb):
    """[(answer cell, check cell, qN)] in order: the check cell calls qN.check(), the answer cell precedes it."""
    code = [c for c in nb.cells if c.cell_type == "code"]
    return [(code[i - 1], c, _CHECK.search(c.source).group(1)) for i, c in enumerate(code) if _CHECK.search(c.source)]


def _runnable(source, ns):
    """Whether every name a cell reads is defined by the cell itself, the namespace or Python."""
    tree = ast.parse(source)
    read = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
    bound = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
    return not read - bound - set(ns) - set(dir(builtins))


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_every_exercise_says_not_attempted_then_one_verdict_for_a_wrong_answer(learn, name, monkeypatch):
    """Run in order, each answer cell runs blank, its check says "not attempted yet"; then, given the
    exercise's first listed wrong answer, the check shows one verdict, "incorrect", and raises nothing.
    A cell between exercises that reads only what those cells define runs on the blank answers too."""
    nb = nbformat.read(learn[0] / name, as_version=4)
    zh = name.startswith("zh/")
    i18n.set_language("zh" if zh else "en")
    try:
        ns = {}
        exec(_imports(nb), ns)
        colour = {v: k for k, v in base._COLOUR.items()}
        exercises = _exercises(nb)
        cells = [c for c in nb.cells if c.cell_type == "code"]
        between = [c for c in cells[cells.index(exercises[0][0]):] if not any(c in e[:2] for e in exercises)]
        n_ran = 0
        for answer, check, q in exercises:
            assert not _shown(ns, answer.source, monkeypatch), f"{name}: {q}'s blank answer cell raised"
            shown = _shown(ns, check.source, monkeypatch)
            assert [colour.get(c) for _, c in shown] == [base.NOT_ATTEMPTED], f"{name}: {q} showed {shown}"
            assert ("尚未作答" in shown[0][0]) == zh
            ex = ns[q]
            ns[ex.var] = ex.wrong[0]
            shown = _shown(ns, check.source, monkeypatch)
            assert [colour.get(c) for _, c in shown] == [base.WRONG], f"{name}: {q}, a wrong answer showed {shown}"
            assert ("不正确" in shown[0][0]) == zh
            ns[ex.var] = ...  # blank again, as the learner's copy has it
            ran = [c for c in between if _runnable(c.source, ns)]
            for cell in ran:
                between.remove(cell)
                assert not _shown(ns, cell.source, monkeypatch), f"{name}: a cell after {q} stops Run All"
            n_ran += len(ran)
        if name.endswith("03_online_rft.ipynb"):  # Q1's expectation against dp/dtheta, after Q1
            assert n_ran == 1
    finally:
        i18n.set_language("en")


def test_the_source_still_grades_a_wrong_answer(monkeypatch):
    """The control: the instructors' check cell (course/) shows the verdict and raises for nbgrader's points."""
    nb = nbformat.read(COURSE / "02_rft.ipynb", as_version=4)
    ns = {}
    exec(_imports(nb), ns)
    answer, check, q = _exercises(nb)[1]
    exec(answer.source, ns)
    ns[ns[q].var] = ns[q].wrong[0]
    shown = _shown(ns, check.source, monkeypatch)
    assert [c for _, c in shown] == [base._COLOUR[base.WRONG], "error"] and "AnswerNotCorrect" in shown[1][0]


@pytest.mark.slow  # one Jupyter kernel: about 10 s
def test_in_jupyter_a_wrong_answer_shows_one_verdict(learn, tmp_path):
    """As JupyterLab shows it: the learner's check cell has one output; the source's adds the red grading box."""
    from nbclient import NotebookClient
    name = "zh/00_unified_paradigm.ipynb"
    copy_, src = (nbformat.read(d / name, as_version=4) for d in (learn[0], COURSE))
    (answer, check, q), (_, src_check, _) = _exercises(copy_)[0], _exercises(src)[0]
    assert q == "q1" and answer.source.count("grpo_differs_in = ...") == 1
    answer.source = answer.source.replace("grpo_differs_in = ...", 'grpo_differs_in = "reward function"')
    first = next(c for c in copy_.cells if "set_language" in c.source)
    nb = new_notebook(cells=[first, answer, check, src_check], metadata=copy_.metadata)
    NotebookClient(nb, timeout=120, kernel_name="python3", allow_errors=True,
                   resources={"metadata": {"path": str(tmp_path)}}).execute()
    out = nb.cells[2].outputs
    assert [o.output_type for o in out] == ["display_data"] and "不正确" in out[0].data["text/html"]
    assert [o.output_type for o in nb.cells[3].outputs] == ["display_data", "error"]
    assert nb.cells[3].outputs[1].ename == "AnswerNotCorrect"


@pytest.fixture
def small_course(tmp_path):
    src = tmp_path / "course"
    (src / "zh").mkdir(parents=True)
    for name in ("00_unified_paradigm.ipynb", "zh/00_unified_paradigm.ipynb", "zh/GLOSSARY.md", "INSTRUCTORS.md"):
        shutil.copy(COURSE / name, src / name)
    return src


def test_a_second_make_lab_keeps_the_learners_work(small_course, tmp_path, capsys):
    dst = tmp_path / "learn"
    assert student.main([str(small_course), str(dst), "--learner"]) == 0
    made = sorted(p.relative_to(dst).as_posix() for p in dst.rglob("*") if p.is_file())
    assert made == ["00_unified_paradigm.ipynb", "README.md", "zh/00_unified_paradigm.ipynb", "zh/GLOSSARY.md"]
    assert display.solutions_shown(cwd=dst)  # a learner on their own: q.solution() on request
    work = {}
    for name in ("00_unified_paradigm.ipynb", "zh/00_unified_paradigm.ipynb"):  # a learner answers and runs
        nb = nbformat.read(dst / name, as_version=4)
        nb.cells[-1].source += "\n# my note"
        nbformat.write(nb, dst / name)
        work[name] = (dst / name).read_bytes()
    (dst / "README.md").write_text("my own notes")
    capsys.readouterr()
    assert student.main([str(small_course), str(dst), "--learner"]) == 0
    assert "0 new learner notebooks" in capsys.readouterr().out
    assert all((dst / name).read_bytes() == kept for name, kept in work.items())
    assert (dst / "README.md").read_text() == "my own notes"

    (dst / "00_unified_paradigm.ipynb").unlink()  # deleted: the next run makes a fresh copy
    src_nb = nbformat.read(small_course / "zh/00_unified_paradigm.ipynb", as_version=4)
    src_nb.cells[0].source += " (revised)"
    nbformat.write(src_nb, small_course / "zh/00_unified_paradigm.ipynb")
    written, kept, changed = student.make_learner_copies(small_course, dst)
    assert written == [dst / "00_unified_paradigm.ipynb"] and changed == [dst / "zh/00_unified_paradigm.ipynb"]
    assert (dst / "zh/00_unified_paradigm.ipynb").read_bytes() == work["zh/00_unified_paradigm.ipynb"]
    assert "YOUR CODE HERE" in (dst / "00_unified_paradigm.ipynb").read_text()


def test_a_destination_that_overlaps_the_source_is_refused(small_course, capsys):
    for dst in (small_course / "learn", small_course, small_course.parent):
        with pytest.raises(ValueError, match="outside the source folder"):
            student.make_learner_copies(small_course, dst)
    assert student.main([str(small_course), str(small_course / "x"), "--learner"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: destination") and err.count("\n") == 1
    assert not (small_course / "x").exists()


def _generator(text):
    """(src, dst) of the learner-copy command in a Makefile recipe or a shell script."""
    m = re.search(r"-m unified_rl\.course\.student (\S+) (\S+) --learner", text)
    assert m, "no learner-copy command"
    return m.group(1), m.group(2).rstrip("/")


def test_make_lab_makes_the_copies_then_opens_them():
    r = subprocess.run(["make", "-n", "-W", ".venv/.course", "-W", ".venv/.llm", "lab"], cwd=REPO,
                       capture_output=True, text=True, timeout=60)
    lines = r.stdout.splitlines()
    gen = [i for i, line in enumerate(lines) if "--learner" in line]
    lab = [i for i, line in enumerate(lines) if "jupyter lab" in line]
    assert gen and lab and gen[-1] < lab[-1], r.stdout + r.stderr
    src, dst = _generator(lines[gen[-1]])
    assert src == "course" and lines[lab[-1]].rstrip().endswith(f" {dst}/")
    assert f"/{dst}/" in (REPO / ".gitignore").read_text().split()


def test_binder_opens_a_learner_copy(learn):
    src, dst = _generator((REPO / "binder" / "postBuild").read_text())
    badge = re.search(r"mybinder\.org/v2/gh/[^)\s]*urlpath=lab/tree/([^)\s]+)", (REPO / "README.md").read_text())
    assert src == "course" and badge, "the README's Binder badge"
    opened = Path(badge.group(1))
    assert opened.parts[0] == dst and learn[0] / opened.relative_to(dst) in learn[1], opened
