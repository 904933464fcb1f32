"""Mark every course notebook's exercises for nbgrader: solution cells, and graded check cells with points.

    python scripts/nbgrader_cells.py [NOTEBOOK ...]      (default: every course/*.ipynb)

A notebook imports its exercises (`from unified_rl.course.ex.nb06_grpo import q1, ...`); each
exercise qN has one answer cell (the cell holding `### BEGIN SOLUTION` / `### END SOLUTION` before
its check) and one check cell (the cell that calls `qN.check()`). This script writes nbgrader's cell
metadata (schema 3) from the exercise module, so the notebooks are never marked by hand:
- the answer cell: a solution cell, grade_id `qN_answer`;
- the check cell: an autograded test cell, locked, grade_id `qN_check`, worth `qN.points`. It ends
  with a hidden-tests region calling `qN.grade()`, which raises (no points) unless the answer is
  correct. nbgrader removes that region from the released copy, where the cell reads as the
  learner's "check your answer" cell, and puts it back when it autogrades a submission.
Every other cell loses any nbgrader metadata, and may hold no solution or hidden-tests marker (what
nbgrader's generate_assignment refuses). Run on the whole course (no arguments), it also rewrites the
points table of course/INSTRUCTORS.md. Idempotent: rerun it after editing or adding a notebook.
Tests: tests/test_nbgrader_cells.py (every notebook is stamped), tests/test_nbgrader.py (the workflow).
"""

import glob
import importlib
import os
import re
import sys

import nbformat

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if REPO not in sys.path:
    sys.path.insert(0, REPO)  # this checkout's unified_rl, whatever is installed

from unified_rl.course.exercises import exercises_in  # noqa: E402

SOLUTION, HIDDEN = "BEGIN SOLUTION", "HIDDEN TESTS"  # nbgrader finds its markers as substrings of a line
_IMPORT = re.compile(r"^\s*from\s+(unified_rl\.course\.ex\.\w+)\s+import\b", re.M)
_CHECK = re.compile(r"^(q\d+)\.check\(\)", re.M)
_GRADE_REGION = re.compile(r"\n?### BEGIN HIDDEN TESTS\n[^\n]*\.grade\(\)[^\n]*\n### END HIDDEN TESTS", re.M)
SCHEMA = 3
GUIDE = os.path.join(REPO, "course", "INSTRUCTORS.md")
TABLE_BEGIN = "<!-- points: written by python scripts/nbgrader_cells.py from the exercise modules -->"
TABLE_END = "<!-- end of points -->"


def grade_region(q):
    """The lines the graded copy of qN's check cell ends with."""
    return (f"### BEGIN HIDDEN TESTS\n{q}.grade()  # for grading: no points unless the check above says Correct\n"
            "### END HIDDEN TESTS")


def solution_meta(grade_id):
    return {"grade": False, "grade_id": grade_id, "locked": False, "schema_version": SCHEMA, "solution": True}


def test_meta(grade_id, points):
    return {"grade": True, "grade_id": grade_id, "locked": True, "points": points, "schema_version": SCHEMA,
            "solution": False}


def exercise_module(nb, where):
    """The one exercise module a notebook imports from, or None for a notebook without exercises."""
    names = sorted({m for c in nb.cells if c.cell_type == "code" for m in _IMPORT.findall(c.source)})
    if len(names) > 1:
        raise ValueError(f"{where} imports exercises from {len(names)} modules ({', '.join(names)}): expected one")
    return importlib.import_module(names[0]) if names else None


def plan(nb, where="notebook"):
    """{cell index: (nbgrader metadata, new source or None)} for the exercise cells; checks the rest.

    Raises ValueError naming the notebook and cell when an exercise has no check or no answer cell,
    a check calls an exercise the module lacks, or a marker sits where nbgrader refuses it."""
    module = exercise_module(nb, where)
    qs = exercises_in(module) if module else {}
    marks, pending, checked = {}, None, set()  # pending: the last answer cell not yet followed by a check
    for i, cell in enumerate(nb.cells):
        src = _GRADE_REGION.sub("", cell.source)
        found = _CHECK.findall(src) if cell.cell_type == "code" else []
        if SOLUTION in src:
            if found:
                raise ValueError(f"{where}, cell {i}: an answer and its check share one cell; split them")
            if pending is not None:
                raise ValueError(f"{where}, cell {pending}: a solution region with no check after it")
            pending = i
            continue
        if not found:
            if HIDDEN in src:  # nbgrader refuses hidden tests outside a test cell (a check cell may hold more)
                raise ValueError(f"{where}, cell {i}: a hidden-tests region outside a check cell")
            continue
        if len(found) > 1:
            raise ValueError(f"{where}, cell {i}: checks {', '.join(found)} in one cell; one check per cell")
        q = found[0]
        if q not in qs:
            raise ValueError(f"{where}, cell {i}: {q}.check() but {module.__name__ if module else 'no module'} "
                             f"has no exercise {q}")
        if q in checked:
            raise ValueError(f"{where}, cell {i}: {q} is checked twice")
        if pending is None:
            raise ValueError(f"{where}, cell {i}: {q}.check() has no answer cell (### BEGIN SOLUTION) before it")
        checked.add(q)
        marks[pending] = (solution_meta(f"{q}_answer"), None)
        marks[i] = (test_meta(f"{q}_check", qs[q].points), f"{src.rstrip()}\n{grade_region(q)}")
        pending = None
    if pending is not None:
        raise ValueError(f"{where}, cell {pending}: a solution region with no check after it")
    missing = [q for q in qs if q not in checked]
    if missing:
        raise ValueError(f"{where}: exercises {', '.join(missing)} of {module.__name__} are never checked")
    return marks


def stamp_notebook(nb, where="notebook"):
    """Write the nbgrader metadata into a notebook node, in place; True if anything changed."""
    marks, changed = plan(nb, where), False
    for i, cell in enumerate(nb.cells):
        meta, source = marks.get(i, (None, None))
        if source is not None and cell.source != source:
            cell.source, changed = source, True
        if meta is None and "nbgrader" in cell.metadata:
            del cell.metadata["nbgrader"]
            changed = True
        elif meta is not None and cell.metadata.get("nbgrader") != meta:
            cell.metadata["nbgrader"], changed = meta, True
    return changed


def stamp(path):
    """Stamp one notebook file; True if it changed (the file is rewritten only then)."""
    nb = nbformat.read(path, as_version=4)
    changed = stamp_notebook(nb, os.path.basename(path))
    if changed:
        nbformat.write(nb, path)
    return changed


KINDS = {"expression": "derive", "function": "implement", "value": "value", "choice": "choice"}
_TITLE_SEP = re.compile("[:\uff1a]")  # an exercise title's label ends at ":" (English) or "：" (Chinese, full width)


def label(title):
    """The label of an exercise title, e.g. "Q3" of "Q3: implement ..." or of "Q3：实现 ..."."""
    return _TITLE_SEP.split(title, maxsplit=1)[0].strip()


def points(path):
    """[(exercise, label, points)] of a notebook, in the order it checks them; label e.g. "Q3 implement"."""
    nb = nbformat.read(path, as_version=4)
    module = exercise_module(nb, os.path.basename(path))
    if module is None:
        return []
    qs = exercises_in(module)
    order = [q for c in nb.cells if c.cell_type == "code" for q in _CHECK.findall(c.source)]
    return [(q, f"{label(qs[q].title) or q} {KINDS.get(qs[q].kind, qs[q].kind)}", qs[q].points) for q in order]


def points_table(paths):
    """The instructor guide's table: each notebook's exercises, their points, the notebook's total."""
    rows = ["| notebook | exercises: points | total |", "|---|---|---:|"]
    for path in paths:
        qs = points(path)
        if qs:
            each = " · ".join(f"{label}: {p}" for _, label, p in qs)
            rows.append(f"| {os.path.basename(path)[:-len('.ipynb')]} | {each} | {sum(p for *_, p in qs)} |")
    rows.append(f"| all | | {sum(p for path in paths for *_, p in points(path))} |")
    return "\n".join(rows)


def write_table(paths, guide=GUIDE):
    """Replace the table between TABLE_BEGIN and TABLE_END in the guide; True if it changed."""
    with open(guide) as f:
        text = f.read()
    head, sep, rest = text.partition(TABLE_BEGIN)
    _, sep2, tail = rest.partition(TABLE_END)
    if not sep or not sep2:
        raise ValueError(f"{os.path.relpath(guide, REPO)} has no {TABLE_BEGIN} ... {TABLE_END} block for the points")
    new = f"{head}{TABLE_BEGIN}\n{points_table(paths)}\n{TABLE_END}{tail}"
    if new != text:
        with open(guide, "w") as f:
            f.write(new)
    return new != text


def main(paths=None):
    every = sorted(glob.glob(os.path.join(REPO, "course", "*.ipynb")))
    try:
        for path in paths or every:
            print(f"{'updated' if stamp(path) else 'unchanged'}  {os.path.relpath(path, REPO)}")
        if not paths:  # the whole course: its points table too
            print(f"{'updated' if write_table(every) else 'unchanged'}  {os.path.relpath(GUIDE, REPO)} (points)")
    except ValueError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
