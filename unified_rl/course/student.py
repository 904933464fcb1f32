"""Student copies of the course: solutions replaced by stubs, hidden tests removed, outputs stripped.

    python -m unified_rl.course.student course build/student      (what `make student` runs)

The markers are nbgrader's, each on a line of its own: in a code cell the lines between
`### BEGIN SOLUTION` and `### END SOLUTION` become the stub `# YOUR CODE HERE` +
`raise NotImplementedError(...)` at the marker's indentation; in a markdown cell they become
`YOUR ANSWER HERE`. Lines between `### BEGIN HIDDEN TESTS` and `### END HIDDEN TESTS` are deleted.
Everything else is copied as is, other files too, except the instructors' own (`INSTRUCTOR_ONLY`);
the source notebooks are only read. The copy gets a flag file (`display.STUDENT_FLAG`) that turns
`q.solution()` off there (`UNIFIED_RL_SOLUTIONS=1` turns it back on; course/INSTRUCTORS.md).
The student copy is generated, never edited by hand (nbgrader, nbgrader.readthedocs.io).
"""

import argparse
import re
import shutil
import sys
from pathlib import Path

import nbformat

from .display import STUDENT_FLAG

CODE_STUB = ["# YOUR CODE HERE", 'raise NotImplementedError("YOUR CODE HERE: replace this line with your solution")']
MARKDOWN_STUB = ["YOUR ANSWER HERE"]
_MARKER = re.compile(r"^(\s*)#+\s*(BEGIN|END) (SOLUTION|HIDDEN TESTS)\s*$")
_SKIP = {".ipynb_checkpoints", "__pycache__", ".git"}
INSTRUCTOR_ONLY = {"INSTRUCTORS.md"}  # never copied into a student build
FLAG_TEXT = ("This folder is a student copy of the course: q.solution() is turned off here.\n"
             "Set UNIFIED_RL_SOLUTIONS=1 (or delete this file) to show solutions.\n")


def strip_cell(source, cell_type, where="cell"):
    """The student version of one cell's source."""
    out, region, hidden = [], None, False
    for n, line in enumerate(source.split("\n"), 1):
        m = _MARKER.match(line)
        if not m:
            if region is None:
                out.append(line)
            continue
        indent, edge, kind = m.groups()
        if edge == "BEGIN":
            if region is not None:
                raise ValueError(f"{where}, line {n}: BEGIN {kind} inside an open {region} region")
            region = kind
            if kind == "SOLUTION":
                out += [indent + s for s in (CODE_STUB if cell_type == "code" else MARKDOWN_STUB)]
            else:
                hidden = True
        else:
            if region != kind:
                raise ValueError(f"{where}, line {n}: END {kind} without a matching BEGIN {kind}")
            region = None
    if region is not None:
        raise ValueError(f"{where}: BEGIN {region} has no matching END {region}")
    if hidden and not "".join(out).strip():
        return ""  # a cell that held nothing but hidden tests
    return "\n".join(out)


def student_notebook(nb, name="notebook"):
    """A stripped copy of a notebook node: stubs for solutions, no hidden tests, no outputs."""
    nb = nbformat.from_dict(nb)  # a deep copy: the source notebook is left untouched
    nb.metadata.pop("widgets", None)  # saved widget state belongs to outputs
    cells = []
    for i, cell in enumerate(nb.cells):
        src = strip_cell(cell.source, cell.cell_type, where=f"{name}, cell {i}")
        if not src and cell.source.strip():
            continue  # drop cells that held only hidden tests
        cell.source = src
        if cell.cell_type == "code":
            cell.outputs, cell.execution_count = [], None
            cell.metadata.pop("execution", None)
        cells.append(cell)
    nb.cells = cells
    return nb


def make_student_copies(src, dst):
    """Copy the folder src to dst, every notebook made a student copy, plus the flag that turns solutions off.

    Returns the paths written (the flag file last)."""
    src, dst = Path(src).resolve(), Path(dst).resolve()
    if not src.is_dir():
        raise ValueError(f"source folder {src} does not exist")
    if dst == src or src in dst.parents:
        raise ValueError(f"destination {dst} must lie outside the source folder {src}")
    written = []
    for stale in (p for p in dst.rglob("*") if p.name in INSTRUCTOR_ONLY) if dst.is_dir() else ():
        stale.unlink()  # left by an older build: a student copy never holds the instructors' files
    for path in sorted(src.rglob("*")):
        rel = path.relative_to(src)
        if path.is_dir() or _SKIP & set(rel.parts) or rel.name in INSTRUCTOR_ONLY:
            continue
        target = dst / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        if path.suffix == ".ipynb":
            nb = student_notebook(nbformat.read(path, as_version=4), name=str(rel))
            nbformat.write(nb, target)
        else:
            shutil.copy2(path, target)
        written.append(target)
    flag = dst / STUDENT_FLAG
    flag.parent.mkdir(parents=True, exist_ok=True)
    flag.write_text(FLAG_TEXT)
    return written + [flag]


def main(argv=None):
    """Command line: SRC_DIR DST_DIR."""
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("src", help="folder of source notebooks, e.g. course")
    p.add_argument("dst", help="output folder, e.g. build/student")
    args = p.parse_args(argv)
    try:
        written = make_student_copies(args.src, args.dst)
    except ValueError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    n_nb = sum(w.suffix == ".ipynb" for w in written)
    print(f"wrote {n_nb} student notebooks and {len(written) - n_nb - 1} other files to {args.dst} "
          f"(solutions turned off there by {STUDENT_FLAG})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
