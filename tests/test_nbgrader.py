"""The instructors' workflow with the real nbgrader, in a temporary course directory, as INSTRUCTORS.md gives it.

Every English course notebook is one assignment, `course`, and the Chinese edition (course/zh/) its own,
`course-zh` (nbgrader keys a notebook by its name within an assignment, and the twins have the English
names): `nbgrader generate_assignment "course*"` releases both (no solution left, the same copy as the
builtin release, the flag that turns `q.solution()` off); `nbgrader release_assignment` /
`fetch_assignment` / `submit` / `collect` move `course` through an exchange folder; one `nbgrader
autograde "course*"` executes every submission of both (UNIFIED_RL_MAX_STEPS caps every training run)
and the gradebook's totals are read back, per notebook and per test cell, and from `nbgrader export`'s
CSV. Between them the graded copies cover every kind of exercise (choice, value, sign, derive, implement)
in both languages, each notebook execution once: the instructor's 02 (English) gets full marks, the
released stub of 02 gets 0, and a submission holding the pinned wrong answer (`q.wrong[0]`) of some
exercises loses exactly those exercises' points: all of 02's in English (0), 00's odd half in English
and its even half in Chinese (the other half scoring in each, so every exercise of 00 both scores and
fails in one of the languages). `nbgrader generate_feedback` shows the checker's verdict, in Chinese
for the Chinese twin.

Every other notebook (English 00 too, and the Chinese twins `make book` executed, 00's among them) is
graded by nbgrader's own rule (`nbgrader.utils.determine_grade`: a grade cell scores its points unless
it shows an error or writes to stderr) on the copy `make book` executed, so the course is not executed
a second time here; on the English notebook graded above that rule on the book's copy is asserted to
give what autograde gave.
"""

import csv
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import nbformat
import pytest

pytest.importorskip("nbgrader", reason='nbgrader is the instructor extra: pip install -e ".[instructor]"')

from unified_rl.course import display, student  # noqa: E402
from unified_rl.course.exercises import exercises_in  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "scripts"))
import nbgrader_cells  # noqa: E402
from test_zh_edition import assert_twin_copy_is_the_english  # noqa: E402

pytestmark = pytest.mark.slow  # autograding executes 6 notebooks: minutes (measured: course/INSTRUCTORS.md)

COURSE = REPO / "course"
NOTEBOOKS = sorted(p.stem for p in COURSE.glob("*.ipynb"))
EXECUTED = REPO / "build" / "book" / "executed"  # make book's executed copies (tests/test_notebooks_executed.py)
REQUIRE_BOOK = os.environ.get("UNIFIED_RL_REQUIRE_BOOK") == "1"
ASSIGNMENT, ASSIGNMENT_ZH, COURSE_ID = "course", "course-zh", "unified_rl"
SOURCE = {ASSIGNMENT: COURSE, ASSIGNMENT_ZH: COURSE / "zh"}  # each assignment's source notebooks
P00, P02 = (next(n for n in NOTEBOOKS if n.startswith(k)) for k in ("00", "02"))  # between them every kind
ZH_NOTEBOOKS = [P00]  # the twins in course-zh (every twin is released by test_make_student_is_the_same_release)
FULL = [(ASSIGNMENT, P02)]  # the instructor's own notebook, submitted as it is
STUB = [P02]  # the release, fetched and submitted unchanged through the exchange (English)
# the wrong submissions: 00's two halves, one in each language, and every exercise of 02 (one execution, not two)
HALVES = [(ASSIGNMENT, P00, "odd"), (ASSIGNMENT_ZH, P00, "even"), (ASSIGNMENT, P02, "all")]
CONFIG = """c = get_config()
c.CourseDirectory.course_id = "unified_rl"
c.Exchange.root = "{exchange}"
c.Execute.timeout = 600
"""


def _points(name):
    """{qN: points} of a notebook, from its exercise module."""
    return {q: p for q, _, p in nbgrader_cells.points(COURSE / f"{name}.ipynb")}


def _module(name):
    return nbgrader_cells.exercise_module(nbformat.read(COURSE / f"{name}.ipynb", as_version=4), name)


def _halves(name):
    """The notebook's exercises in two complementary halves, q1, q3, ... and q2, q4, ..., and all of them."""
    qs = list(_points(name))
    return {"odd": qs[0::2], "even": qs[1::2], "all": qs}


def _wrong_submission(assignment, name, wrong):
    """The instructor's notebook with the answers of `wrong` replaced by their first pinned wrong answers."""
    nb = nbformat.read(SOURCE[assignment] / f"{name}.ipynb", as_version=4)
    module = exercises_in(_module(name))
    for q in wrong:
        cell = next(c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id") == f"{q}_answer")
        cell.source += f"\n{module[q].var} = {q}.wrong[0]  # a plausible wrong answer"
    return nb


def _student(assignment, name, half):
    return f"wrong_{'zh_' if assignment == ASSIGNMENT_ZH else ''}{name[:2]}_{half}"


def _nbgrader(root, *args, env=None):
    r = subprocess.run([sys.executable, "-m", "nbgrader", *args], cwd=root, env=env, capture_output=True, text=True)
    assert r.returncode == 0, f"nbgrader {' '.join(args)} failed:\n{r.stdout[-3000:]}\n{r.stderr[-3000:]}"
    return r


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    """The whole workflow run once: the course directory, its release, the stub student id, the CSV rows, the gradebook."""
    base = tmp_path_factory.mktemp("nbgrader")
    root, exchange = base / "course_dir", base / "exchange"
    for d in (root, exchange):
        d.mkdir()
    env = dict(os.environ, PATH=os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")]),
               PYTHONPATH=os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]),
               UNIFIED_RL_MAX_STEPS="2", OMP_NUM_THREADS="1")
    env.pop("UNIFIED_RL_SOLUTIONS", None)
    (root / "nbgrader_config.py").write_text(CONFIG.format(exchange=exchange))
    for assignment, names in ((ASSIGNMENT, NOTEBOOKS), (ASSIGNMENT_ZH, ZH_NOTEBOOKS)):
        source = root / "source" / assignment
        source.mkdir(parents=True)
        for name in names:
            shutil.copy(SOURCE[assignment] / f"{name}.ipynb", source)
        (source / display.STUDENT_FLAG).touch()  # the release carries it: q.solution() off there
    seconds = {}

    t = time.perf_counter()
    _nbgrader(root, "generate_assignment", "course*", env=env)  # both editions in one call
    _nbgrader(root, "release_assignment", ASSIGNMENT, env=env)
    seconds["generate + release"] = time.perf_counter() - t

    t = time.perf_counter()  # a student fetches the release and submits it unchanged (the stub)
    work = base / "student_home"
    work.mkdir()
    _nbgrader(work, "fetch_assignment", ASSIGNMENT, f"--course={COURSE_ID}", f"--Exchange.root={exchange}", env=env)
    for name in NOTEBOOKS:
        if name not in STUB:
            (work / ASSIGNMENT / f"{name}.ipynb").unlink()  # graded as missing: only STUB's are run
    _nbgrader(work, "submit", ASSIGNMENT, f"--course={COURSE_ID}", f"--Exchange.root={exchange}", env=env)
    _nbgrader(root, "collect", ASSIGNMENT, env=env)
    collected = [p.name for p in (root / "submitted").iterdir()]
    assert len(collected) == 1
    stub_id = collected[0]  # the student's login name
    seconds["fetch + submit + collect"] = time.perf_counter() - t

    for assignment, name in FULL:
        d = root / "submitted" / "instructor" / assignment
        d.mkdir(parents=True, exist_ok=True)
        shutil.copy(SOURCE[assignment] / f"{name}.ipynb", d)
    for assignment, name, half in HALVES:
        d = root / "submitted" / _student(assignment, name, half) / assignment
        d.mkdir(parents=True)
        nbformat.write(_wrong_submission(assignment, name, _halves(name)[half]), d / f"{name}.ipynb")

    t = time.perf_counter()
    _nbgrader(root, "autograde", "course*", env=env)  # every submission of both assignments, one call
    seconds["autograde"] = time.perf_counter() - t
    t = time.perf_counter()
    _nbgrader(root, "generate_feedback", "course*", env=env)
    _nbgrader(root, "release_feedback", ASSIGNMENT, f"--student={stub_id}", env=env)  # exchange submissions only
    _nbgrader(work, "fetch_feedback", ASSIGNMENT, f"--course={COURSE_ID}", f"--Exchange.root={exchange}", env=env)
    _nbgrader(root, "export", "--to=grades.csv", env=env)
    seconds["feedback + export"] = time.perf_counter() - t
    with open(root / "grades.csv") as f:
        rows = {(r["assignment"], r["student_id"]): r for r in csv.DictReader(f)}
    print("nbgrader workflow, seconds:", {k: round(v, 1) for k, v in seconds.items()})
    (base / "seconds.txt").write_text(repr(seconds))
    return {"root": root, "release": {a: root / "release" / a for a in SOURCE}, "stub": stub_id, "csv": rows,
            "work": work, "db": f"sqlite:///{root / 'gradebook.db'}"}


def _scores(graded, student_id, name, assignment=ASSIGNMENT):
    """(notebook score, {grade_id: score}) from nbgrader's Gradebook API."""
    from nbgrader.api import Gradebook
    with Gradebook(graded["db"]) as gb:
        nb = gb.find_submission_notebook(name, assignment, student_id)
        return nb.score, {g.name: g.score for g in nb.grades}


_REGION = r"### BEGIN SOLUTION\n(.*?)\n\s*### END SOLUTION"
RELEASED = [(ASSIGNMENT, n) for n in NOTEBOOKS] + [(ASSIGNMENT_ZH, n) for n in ZH_NOTEBOOKS]


def test_release_has_no_solution_and_turns_solutions_off(graded):
    for assignment, name in RELEASED:
        text = (graded["release"][assignment] / f"{name}.ipynb").read_text()
        for marker in ("BEGIN SOLUTION", "END SOLUTION", "HIDDEN TESTS", ".grade()"):
            assert marker not in text, f"{assignment}/{name}: the release still holds {marker!r}"
        source = nbformat.read(SOURCE[assignment] / f"{name}.ipynb", as_version=4)
        release = nbformat.read(graded["release"][assignment] / f"{name}.ipynb", as_version=4)
        released = {c.source for c in release.cells}
        regions = [r for c in source.cells for r in re.findall(_REGION, c.source, re.S)]
        elsewhere = "\n".join(re.sub(_REGION, "", c.source, flags=re.S) for c in source.cells)
        lines = {l.strip() for r in regions for l in r.split("\n")}
        lines = {l for l in lines if len(l) > 8 and not l.startswith("#") and l not in elsewhere}
        assert lines or not regions, name
        for line in lines:  # a solution line that the notebook shows nowhere else never reaches the release
            assert not any(line in s for s in released), f"{assignment}/{name}: solution line {line!r} released"
    for release in graded["release"].values():
        assert not display.solutions_shown(cwd=release)  # the flag ships with the release


def _same_release(ours, theirs, where):
    """Our release of a notebook is nbgrader's: same cells, sources, locks (checksums aside)."""
    assert len(ours.cells) == len(theirs.cells), where
    for a, b in zip(ours.cells, theirs.cells):
        assert (a.cell_type, a.source) == (b.cell_type, b.source), f"{where}, cell {b.get('id')}"
        for key in ("deletable", "editable"):
            assert a.metadata.get(key, True) == b.metadata.get(key, True), f"{where}, cell {b.get('id')}: {key}"
        meta = {k: v for k, v in b.metadata.get("nbgrader", {}).items() if k not in ("checksum", "cell_type")}
        assert a.metadata.get("nbgrader", {}) == meta


def test_builtin_release_is_nbgraders(graded, tmp_path):
    """What students without nbgrader get is nbgrader's release, in both editions (zh/ beside the English)."""
    student.make_student_copies(COURSE, tmp_path, engine="builtin")
    for assignment, name in RELEASED:
        ours = tmp_path / ("zh" if assignment == ASSIGNMENT_ZH else "") / f"{name}.ipynb"
        theirs = nbformat.read(graded["release"][assignment] / f"{name}.ipynb", as_version=4)
        _same_release(nbformat.read(ours, as_version=4), theirs, f"{assignment}/{name}")


def _book_scores(name, assignment=ASSIGNMENT):
    """{grade_id: score} by nbgrader's own grading rule on the copy `make book` executed (None: no book)."""
    from nbgrader.utils import determine_grade, is_grade
    path = EXECUTED / ("zh" if assignment == ASSIGNMENT_ZH else "") / f"{name}.ipynb"
    if not path.exists():
        if REQUIRE_BOOK:
            pytest.fail(f"{path} is missing: run `make book` first")
        return None
    executed = nbformat.read(path, as_version=4)
    source = nbformat.read(SOURCE[assignment] / f"{name}.ipynb", as_version=4)
    assert [c.source for c in executed.cells] == [c.source for c in source.cells], f"{path} is stale: make book"
    return {c.metadata["nbgrader"]["grade_id"]: determine_grade(c)[0] for c in executed.cells if is_grade(c)}


@pytest.mark.parametrize("assignment,name", FULL)
def test_the_instructors_notebook_gets_full_marks(graded, assignment, name):
    points = _points(name)
    total, cells = _scores(graded, "instructor", name, assignment)
    assert cells == {f"{q}_check": float(p) for q, p in points.items()}
    assert total == sum(points.values())


@pytest.mark.book  # make test runs it once the book is built (the autograde runs above do not wait for it)
@pytest.mark.parametrize("name", NOTEBOOKS)
def test_every_notebook_gets_full_marks_on_its_executed_copy(name):
    """nbgrader's own grading rule on each English notebook `make book` executed: full marks (for the
    notebooks autograded above, that is what autograde said: their test asserts full marks too)."""
    book = _book_scores(name)
    if book is None:
        pytest.skip("no executed copy (make book)")
    assert book == {f"{q}_check": float(p) for q, p in _points(name).items()}


@pytest.mark.book
def test_every_executed_chinese_twin_gets_full_marks():
    """The same rule on each Chinese twin `make book` executed (make test executes 00's and 06's): full
    marks, with its English notebook's points (the wrong halves above show 00's cells scoring and failing)."""
    from test_notebooks_executed import not_executed
    twins = [p.stem for p in sorted((COURSE / "zh").glob("[0-9]*.ipynb")) if not not_executed(f"zh/{p.name}")]
    book = {name: scores for name in twins if (scores := _book_scores(name, ASSIGNMENT_ZH)) is not None}
    if not book:
        pytest.skip("no executed Chinese twin (make book)")
    assert P00 in book, "the Chinese 00 (its halves autograded above) was not executed: make book --zh-execute 00"
    for name, scores in book.items():
        assert scores == {f"{q}_check": float(p) for q, p in _points(name).items()}, name


@pytest.mark.parametrize("name", STUB)
def test_the_released_stub_gets_zero(graded, name):
    total, cells = _scores(graded, graded["stub"], name)
    assert set(cells) == {f"{q}_check" for q in _points(name)} and total == 0, cells


@pytest.mark.parametrize("assignment,name,half", HALVES)
def test_wrong_answers_lose_exactly_their_points(graded, assignment, name, half):
    points, wrong = _points(name), _halves(name)[half]
    total, cells = _scores(graded, _student(assignment, name, half), name, assignment)
    assert cells == {f"{k}_check": 0.0 if k in wrong else float(p) for k, p in points.items()}
    assert total == sum(p for k, p in points.items() if k not in wrong)


def test_exported_csv_totals(graded):
    """`nbgrader export`'s CSV: one row per assignment and student, its total the sum of what its notebooks scored."""
    rows = graded["csv"]
    everything = {a: sum(sum(_points(n).values()) for n in names)  # the assignment: every notebook in it
                  for a, names in ((ASSIGNMENT, NOTEBOOKS), (ASSIGNMENT_ZH, ZH_NOTEBOOKS))}
    assert {a for a, _ in rows} == set(everything)
    for (assignment, _), row in rows.items():
        assert float(row["max_score"]) == everything[assignment], row
    assert float(rows[ASSIGNMENT, "instructor"]["score"]) == sum(sum(_points(n).values()) for _, n in FULL)
    assert float(rows[ASSIGNMENT, graded["stub"]]["score"]) == 0
    for assignment, name, half in HALVES:
        points, wrong = _points(name), _halves(name)[half]
        assert float(rows[assignment, _student(assignment, name, half)]["score"]) == \
            sum(p for k, p in points.items() if k not in wrong)


def _feedback(graded, assignment, name, half):
    return (graded["root"] / "feedback" / _student(assignment, name, half) / assignment / f"{name}.html").read_text()


def test_feedback_shows_the_checkers_verdict(graded):
    for assignment, name, half in HALVES:
        html, points = _feedback(graded, assignment, name, half), _points(name)
        assert "AnswerNotCorrect" in html, (assignment, name, half)
        if assignment == ASSIGNMENT:
            assert "Incorrect: " in html, (name, half)
            for q in _halves(name)[half]:
                assert f"(0 of {points[q]} points)" in html, (name, half, q)
    fetched = list((graded["work"] / ASSIGNMENT / "feedback").rglob(f"{STUB[0]}.html"))  # the student's copy
    assert len(fetched) == 1 and "Not attempted yet" in fetched[0].read_text()


def test_chinese_feedback_is_chinese(graded):
    """The Chinese twin's feedback gives the checker's verdict in Chinese, with its Chinese titles and points."""
    from unified_rl.course.i18n import set_language
    for assignment, name, half in HALVES:
        if assignment != ASSIGNMENT_ZH:
            continue
        html, points, qs = _feedback(graded, assignment, name, half), _points(name), exercises_in(_module(name))
        try:
            set_language("zh")
            titles = {q: qs[q].title for q in points}
        finally:
            set_language("en")
        for q in points:
            if q in _halves(name)[half]:
                assert f"{titles[q]}：不正确：" in html and f"（共 {points[q]} 分，得 0 分）" in html, q
            else:
                assert f"{titles[q]}：正确" in html, q
        assert "Incorrect: " not in html and "(0 of " not in html


def test_make_student_is_the_same_release(graded, tmp_path):
    """`make student` (nbgrader in a temporary course directory) writes what the instructor's release holds, zh/ too."""
    written = student.make_student_copies(COURSE, tmp_path, engine="nbgrader")
    top = sorted(p.name for p in written if p.parent == tmp_path)  # the Chinese edition goes to zh/ beside them
    assert top == sorted([display.STUDENT_FLAG] + [f"{n}.ipynb" for n in NOTEBOOKS])
    twins = sorted(p.name for p in SOURCE[ASSIGNMENT_ZH].glob("*.ipynb"))
    assert sorted(p.name for p in (tmp_path / "zh").glob("*.ipynb")) == twins
    assert (tmp_path / "zh" / "GLOSSARY.md").read_text(encoding="utf-8") == \
        (SOURCE[ASSIGNMENT_ZH] / "GLOSSARY.md").read_text(encoding="utf-8")
    for twin in twins:  # every twin's release strips as its English notebook's (test_zh_edition.py's rule)
        assert_twin_copy_is_the_english(nbformat.read(tmp_path / twin, as_version=4),
                                        nbformat.read(tmp_path / "zh" / twin, as_version=4), f"zh/{twin}")
    for assignment, name in RELEASED:
        ours = tmp_path / ("zh" if assignment == ASSIGNMENT_ZH else "") / f"{name}.ipynb"
        assert nbformat.read(ours, as_version=4) == \
            nbformat.read(graded["release"][assignment] / f"{name}.ipynb", as_version=4), f"{assignment}/{name}"
    assert not display.solutions_shown(cwd=tmp_path)
