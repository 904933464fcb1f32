"""Student copies without nbgrader (the builtin release): no solution left, nbgrader's stubs in place,
hidden tests gone, marked cells locked, everything else identical; markers outside marked cells are
refused as nbgrader refuses them; and in the real course every exercise's variable and every
function's signature survive the stub. tests/test_nbgrader.py compares this release with nbgrader's."""

import ast
import copy
import importlib
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_output

from unified_rl.course import display, student
from unified_rl.course.exercises import exercises_in

SECRET = "SOLUTION_TEXT_42"


def _source_notebook():
    cells = [
        new_markdown_cell("# A notebook\nSolutions go between `### BEGIN SOLUTION` markers."),
        new_code_cell("import math\nseen = []"),
        new_code_cell(f"answer = None\n### BEGIN SOLUTION\nanswer = 6 * 7  # {SECRET}\n### END SOLUTION\nseen.append('q1')"),
        new_code_cell("assert answer is not None, 'q1 not answered'\n"
                      f"### BEGIN HIDDEN TESTS\nassert answer == 42  # {SECRET}\n### END HIDDEN TESTS"),
        new_code_cell("def double(x):\n    \"\"\"Twice x.\"\"\"\n    ### BEGIN SOLUTION\n"
                      f"    y = 2 * x  # {SECRET}\n    return y\n    ### END SOLUTION\n\nseen.append('q2')"),
        new_code_cell(f"### BEGIN HIDDEN TESTS\nassert double(2) == 4  # {SECRET}\n### END HIDDEN TESTS"),
        new_markdown_cell(f"Why?\n\n### BEGIN SOLUTION\nBecause {SECRET}.\n### END SOLUTION"),
        new_code_cell("print(double(3))"),
    ]
    for i, meta in [(2, {"solution": True, "grade": False, "locked": False, "grade_id": "a"}),
                    (3, {"solution": False, "grade": True, "locked": True, "grade_id": "b", "points": 1}),
                    (4, {"solution": True, "grade": False, "locked": False, "grade_id": "c"}),
                    (5, {"solution": False, "grade": True, "locked": True, "grade_id": "d", "points": 2}),
                    (6, {"solution": True, "grade": False, "locked": False, "grade_id": "e"})]:
        cells[i].metadata["nbgrader"] = dict(meta, schema_version=3)
    cells[1].outputs = [new_output("stream", name="stdout", text="old output\n")]
    cells[1].execution_count = 3
    nb = new_notebook(cells=cells)
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nb.metadata["widgets"] = {"state": {}}
    return nb


@pytest.fixture
def course(tmp_path):
    src = tmp_path / "course"
    src.mkdir()
    nbformat.write(_source_notebook(), src / "01_demo.ipynb")
    (src / "README.md").write_text("# Course\n")
    (src / "data").mkdir()
    (src / "data" / "table.csv").write_text("a,b\n1,2\n")
    (src / ".ipynb_checkpoints").mkdir()
    (src / ".ipynb_checkpoints" / "01_demo-checkpoint.ipynb").write_text("{}")
    (src / "INSTRUCTORS.md").write_text("# For instructors only\n")
    return src


def test_student_copy(course, tmp_path):
    before = (course / "01_demo.ipynb").read_bytes()
    dst = tmp_path / "build" / "student"
    written = student.make_student_copies(course, dst, engine="builtin")
    assert (course / "01_demo.ipynb").read_bytes() == before  # the source is only read
    assert sorted(p.relative_to(dst).as_posix() for p in written) == [
        display.STUDENT_FLAG, "01_demo.ipynb", "README.md", "data/table.csv"]
    assert (dst / "README.md").read_text() == "# Course\n" and not (dst / "INSTRUCTORS.md").exists()
    assert not display.solutions_shown(cwd=dst)  # the copy turns q.solution() off
    (dst / "INSTRUCTORS.md").write_text("stale")  # left by an older build: removed by the next one
    student.make_student_copies(course, dst, engine="builtin")
    assert not (dst / "INSTRUCTORS.md").exists()

    text = (dst / "01_demo.ipynb").read_text()
    assert SECRET not in text and "BEGIN HIDDEN TESTS" not in text and "END SOLUTION" not in text
    src_nb, nb = _source_notebook(), nbformat.read(dst / "01_demo.ipynb", as_version=4)
    assert "widgets" not in nb.metadata
    assert len(nb.cells) == len(src_nb.cells)  # as nbgrader: a cell that held only hidden tests is left empty
    assert nb.cells[5].source == ""
    assert [c.metadata.get("deletable", True) for c in nb.cells] == [True, True, False, False, False, False, False, True]
    assert [c.metadata.get("editable", True) for c in nb.cells] == [True, True, True, False, True, False, True, True]
    stub = "\n".join(student.CODE_STUB)
    assert nb.cells[2].source == f"answer = None\n{stub}\nseen.append('q1')"
    assert nb.cells[3].source == "assert answer is not None, 'q1 not answered'"
    indented = "\n".join("    " + s for s in student.CODE_STUB)
    assert nb.cells[4].source == f"def double(x):\n    \"\"\"Twice x.\"\"\"\n{indented}\n\nseen.append('q2')"
    assert nb.cells[6].source == "Why?\n\nYOUR ANSWER HERE"
    for i, j in [(0, 0), (1, 1), (7, 7)]:  # untouched cells are identical, outputs aside
        assert nb.cells[j].source == src_nb.cells[i].source and nb.cells[j].cell_type == src_nb.cells[i].cell_type
    for cell in nb.cells:
        if cell.cell_type == "code":
            assert cell.outputs == [] and cell.execution_count is None
            compile(cell.source, "cell", "exec")  # every stub leaves valid Python


@pytest.mark.parametrize("source,message", [
    ("### BEGIN SOLUTION\nx = 1", "no matching END SOLUTION"),
    ("x = 1\n### END SOLUTION", "without a matching BEGIN"),
    ("### BEGIN SOLUTION\n### BEGIN HIDDEN TESTS\n### END HIDDEN TESTS\n### END SOLUTION", "inside an open SOLUTION"),
    ("### BEGIN HIDDEN TESTS\n### END SOLUTION", "without a matching BEGIN"),
])
def test_malformed_regions_name_the_cell(source, message):
    cell = new_code_cell(source)
    cell.metadata["nbgrader"] = {"solution": True, "grade": True, "locked": False, "grade_id": "a", "points": 1}
    nb = new_notebook(cells=[new_code_cell("pass"), cell])
    with pytest.raises(ValueError, match=f"demo.ipynb, cell 1.*{message}"):
        student.student_notebook(nb, name="demo.ipynb")


@pytest.mark.parametrize("cell,message", [
    (new_code_cell("x = None\n### BEGIN SOLUTION\nx = 1\n### END SOLUTION"), "not marked as a solution cell"),
    (new_code_cell("check()\n### BEGIN HIDDEN TESTS\nassert x\n### END HIDDEN TESTS"), "not marked as a test cell"),
])
def test_markers_outside_marked_cells_are_refused(cell, message):
    """nbgrader's generate_assignment refuses both; so does the builtin release."""
    with pytest.raises(ValueError, match=f"demo.ipynb, cell 0.*{message}"):
        student.student_notebook(new_notebook(cells=[cell]), name="demo.ipynb")


def test_a_marked_cell_without_markers_is_all_solution():
    cell = new_code_cell("x = 42")
    cell.metadata["nbgrader"] = {"solution": True, "grade": False, "locked": False, "grade_id": "a"}
    nb = student.student_notebook(new_notebook(cells=[cell]))
    assert nb.cells[0].source == "\n".join(student.CODE_STUB)


def test_student_notebook_leaves_its_input_alone():
    nb = _source_notebook()
    kept = copy.deepcopy(nb)
    student.student_notebook(nb)
    assert nb == kept


def test_destination_inside_source_is_refused(course):
    with pytest.raises(ValueError, match="outside the source"):
        student.make_student_copies(course, course / "student")
    with pytest.raises(ValueError, match="engine must be"):
        student.make_student_copies(course, course.parent / "out", engine="nbconvert")
    with pytest.raises(ValueError, match="does not exist"):
        student.make_student_copies(course / "missing", course.parent / "out")


@pytest.mark.slow  # builds every notebook's student copy
def test_command_line(course, tmp_path, capsys):
    r = subprocess.run([sys.executable, "-m", "unified_rl.course.student", str(course), str(tmp_path / "out"),
                        "--engine", "builtin"], capture_output=True, text=True)
    assert r.returncode == 0 and "wrote 1 student notebooks and 2 other files" in r.stdout, r.stdout
    assert (tmp_path / "out" / "01_demo.ipynb").exists()
    assert student.main([str(course), str(course)]) == 2
    assert "outside the source" in capsys.readouterr().err


def _run(nb, cwd):
    NotebookClient(nb, timeout=60, kernel_name="python3", resources={"metadata": {"path": str(cwd)}}).execute()


@pytest.mark.slow  # two Jupyter kernels: about 5 s
def test_source_runs_and_student_copy_stops_at_the_first_exercise(course, tmp_path):
    src_nb = nbformat.read(course / "01_demo.ipynb", as_version=4)
    _run(src_nb, tmp_path)  # with solutions, every cell (hidden tests included) passes
    assert src_nb.cells[7].outputs[0]["text"] == "6\n"

    student.make_student_copies(course, tmp_path / "out", engine="builtin")
    nb = nbformat.read(tmp_path / "out" / "01_demo.ipynb", as_version=4)
    with pytest.raises(CellExecutionError) as err:
        _run(nb, tmp_path)
    msg = str(err.value)
    assert "NotImplementedError" in msg and "# YOUR CODE HERE" in msg
    assert "answer = None" in msg  # the failing cell is the first exercise, shown in the error
    assert nb.cells[1].execution_count is not None and nb.cells[3].execution_count is None


COURSE = Path(__file__).resolve().parents[1] / "course"
# Notebooks whose solution markers still swallow a variable or a signature: (notebook, what) -> why.
# Remove an entry as soon as its notebook is fixed (the test then passes).
KNOWN_BROKEN = {
}


def _code_cells(nb):
    for cell in nb.cells:
        if cell.cell_type == "code":
            lines = [l for l in cell.source.split("\n") if not l.lstrip().startswith(("%", "!"))]
            yield ast.parse("\n".join(lines))


def _defined(nb):
    """{name: ast.arguments or None}: what the notebook's cells define at top level (defs keep their args)."""
    out = {}
    for tree in _code_cells(nb):
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                out[node.name] = ast.dump(node.args)
            elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
                for target in node.targets if isinstance(node, ast.Assign) else [node.target]:
                    for n in ast.walk(target):
                        if isinstance(n, ast.Name):
                            out.setdefault(n.id, None)
    return out


def _exercise_vars(nb):
    """{var: exercise} of every exercise the notebook imports from unified_rl.course.ex."""
    found = {}
    for tree in _code_cells(nb):
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("unified_rl.course.ex."):
                exs = exercises_in(importlib.import_module(node.module))
                for alias in node.names:
                    if alias.name in exs and exs[alias.name].var:
                        found[exs[alias.name].var] = exs[alias.name]
    return found


@pytest.fixture(scope="module")
def student_course(tmp_path_factory):
    dst = tmp_path_factory.mktemp("student")
    student.make_student_copies(COURSE, dst, engine="builtin")
    return dst


CASES = [(p.name, what) for p in sorted(COURSE.glob("*.ipynb")) for what in ("variables", "signatures")]


@pytest.mark.parametrize("notebook,what", [
    pytest.param(n, w, marks=pytest.mark.xfail(reason=KNOWN_BROKEN[(n, w)], strict=False))
    if (n, w) in KNOWN_BROKEN else (n, w) for n, w in CASES], ids=[f"{n}-{w}" for n, w in CASES])
def test_student_copy_keeps_every_exercise_variable_and_signature(student_course, notebook, what):
    """What a check() reads is still defined in the student copy, and each function keeps its signature."""
    src = nbformat.read(COURSE / notebook, as_version=4)
    copy_ = nbformat.read(student_course / notebook, as_version=4)
    assert "### BEGIN SOLUTION" not in nbformat.writes(copy_)
    before, after = _defined(src), _defined(copy_)
    if what == "variables":
        exercise_vars = _exercise_vars(src)
        missing = sorted(v for v in exercise_vars if v not in after)
        assert not missing, f"{notebook}: the student copy never defines {missing}, which check() reads"
    else:
        lost = sorted(name for name, args in before.items() if args is not None and after.get(name) != args)
        assert not lost, f"{notebook}: the student copy lost the signature of {lost}"


def test_student_copy_has_no_instructor_guide(student_course):
    assert not (student_course / "INSTRUCTORS.md").exists() and (COURSE / "INSTRUCTORS.md").exists()
    assert not display.solutions_shown(cwd=student_course)
