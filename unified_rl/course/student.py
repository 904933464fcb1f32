"""Student copies of the course: nbgrader's own `generate_assignment`, or the same transformation without it.

    python -m unified_rl.course.student course build/student      (what `make student` runs)

With nbgrader installed (`pip install -e ".[instructor]"`), the folder is released as an nbgrader
assignment in a temporary course directory, and its release is copied to the destination: exactly
what an instructor's `nbgrader generate_assignment` gives (course/INSTRUCTORS.md). Without nbgrader
(a learner's install), `student_notebook` does the same to each notebook, as nbgrader 0.9 does it:
in a solution cell the lines between `### BEGIN SOLUTION` and `### END SOLUTION` become
`# YOUR CODE HERE` + `raise NotImplementedError()` at the marker's indentation (`YOUR ANSWER HERE`
in markdown); in a test cell the lines between `### BEGIN HIDDEN TESTS` and `### END HIDDEN TESTS`
are deleted; solution and test cells are made undeletable, locked cells read-only; outputs are
cleared. Only nbgrader's checksums are missing (tests/test_nbgrader.py compares the two for every
notebook). Like nbgrader, a marker outside a cell marked for it is refused (scripts/nbgrader_cells.py
marks the course's cells). A subfolder of notebooks (course/zh/, the Chinese edition) is released
the same way into the same subfolder. Other files are copied as they are, except the instructors' own
(`INSTRUCTOR_ONLY`); the source is only read. The copy gets a flag file (`display.STUDENT_FLAG`)
that turns `q.solution()` off there (`UNIFIED_RL_SOLUTIONS=1` turns it back on).
"""

import argparse
import importlib.util
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import nbformat

from .display import STUDENT_FLAG

CODE_STUB = ["# YOUR CODE HERE", "raise NotImplementedError()"]  # nbgrader's ClearSolutions.code_stub["python"]
MARKDOWN_STUB = ["YOUR ANSWER HERE"]  # nbgrader's ClearSolutions.text_stub
_MARKER = re.compile(r"^(\s*)#+\s*(BEGIN|END) (SOLUTION|HIDDEN TESTS)\s*$")
_SKIP = {".ipynb_checkpoints", "__pycache__", ".git"}
INSTRUCTOR_ONLY = {"INSTRUCTORS.md"}  # never copied into a student build
FLAG_TEXT = ("This folder is a student copy of the course: q.solution() is turned off here.\n"
             "Set UNIFIED_RL_SOLUTIONS=1 (or delete this file) to show solutions.\n")


def _nbgrader_meta(cell):
    return cell.get("metadata", {}).get("nbgrader", {})


def strip_cell(source, cell_type, where="cell", solution=True, grade=True):
    """The student version of one cell's source; `solution`/`grade`: whether the cell is marked so."""
    out, region = [], None
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
            if kind == "SOLUTION" and not solution:
                raise ValueError(f"{where}: a solution region in a cell not marked as a solution cell "
                                 "(python scripts/nbgrader_cells.py marks them)")
            if kind == "HIDDEN TESTS" and not grade:
                raise ValueError(f"{where}: a hidden-tests region in a cell not marked as a test cell "
                                 "(python scripts/nbgrader_cells.py marks them)")
            region = kind
            if kind == "SOLUTION":
                out += [indent + s for s in (CODE_STUB if cell_type == "code" else MARKDOWN_STUB)]
        else:
            if region != kind:
                raise ValueError(f"{where}, line {n}: END {kind} without a matching BEGIN {kind}")
            region = None
    if region is not None:
        raise ValueError(f"{where}: BEGIN {region} has no matching END {region}")
    return "\n".join(out)


def student_notebook(nb, name="notebook"):
    """A released copy of a notebook node, as nbgrader's generate_assignment makes it (checksums aside)."""
    nb = nbformat.from_dict(nb)  # a deep copy: the source notebook is left untouched
    nb.metadata.pop("widgets", None)  # saved widget state belongs to outputs
    nb.metadata.pop("celltoolbar", None)
    for i, cell in enumerate(nb.cells):
        meta, had_region = _nbgrader_meta(cell), any(_MARKER.match(l) for l in cell.source.split("\n"))
        cell.source = strip_cell(cell.source, cell.cell_type, where=f"{name}, cell {i}",
                                 solution=bool(meta.get("solution")), grade=bool(meta.get("grade")))
        if meta.get("solution") and not had_region:  # nbgrader: a solution cell without markers is all solution
            cell.source = "\n".join(CODE_STUB if cell.cell_type == "code" else MARKDOWN_STUB)
        if meta.get("solution") or meta.get("grade") or meta.get("locked"):
            cell.metadata["deletable"] = False
        if meta.get("locked") and not meta.get("solution"):
            cell.metadata["editable"] = False
        if cell.cell_type == "code":
            cell.outputs, cell.execution_count = [], None
            cell.metadata.pop("execution", None)
    return nb


def _files(src):
    """Every file of src to copy, relative paths, sorted."""
    for path in sorted(src.rglob("*")):
        rel = path.relative_to(src)
        if path.is_file() and not _SKIP & set(rel.parts) and rel.name not in INSTRUCTOR_ONLY:
            yield rel


def nbgrader_available():
    return importlib.util.find_spec("nbgrader") is not None


def _notebook_folders(src):
    """The top-level subfolders of src holding notebooks (course/zh/: the Chinese edition)."""
    return sorted({rel.parts[0] for rel in _files(src) if rel.suffix == ".ipynb" and len(rel.parts) > 1})


def nbgrader_release(src, dst, assignment="course"):
    """Release src with nbgrader's generate_assignment (a temporary course directory); copy it to dst.

    nbgrader releases only the notebooks at an assignment's top level (others it copies as they
    are, solutions and all), so each subfolder holding notebooks is an assignment of its own
    (`assignment-sub`, e.g. course-zh), and one `generate_assignment "assignment*"` releases them all.
    Returns the relative paths written."""
    folders = _notebook_folders(src)
    ids = {sub: f"{assignment}-{sub}" for sub in folders}  # subfolder -> its assignment
    with tempfile.TemporaryDirectory(prefix="unified_rl_release_") as root:
        for rel in _files(src):
            sub = rel.parts[0] if rel.parts[0] in folders else None
            target = Path(root) / "source" / (ids[sub] if sub else assignment) / (rel.relative_to(sub) if sub else rel)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src / rel, target)
        env = dict(os.environ, PATH=os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")]))
        r = subprocess.run([sys.executable, "-m", "nbgrader", "generate_assignment", f"{assignment}*", "--force",
                            f"--CourseDirectory.root={root}"], cwd=root, env=env, capture_output=True, text=True)
        releases = [(Path(root) / "release" / ids[sub], Path(sub)) for sub in folders]
        releases.append((Path(root) / "release" / assignment, Path()))
        if r.returncode != 0 or not all(release.is_dir() for release, _ in releases):
            errors = [l for l in r.stdout.splitlines() + r.stderr.splitlines() if "Error" in l or "ERROR" in l]
            raise ValueError("nbgrader generate_assignment failed: " + (" | ".join(errors[-3:]) or r.stderr[-300:]))
        written = []
        for release, sub in releases:
            for rel in _files(release):
                (dst / sub / rel).parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(release / rel, dst / sub / rel)
                written.append(sub / rel)
        return written


def builtin_release(src, dst):
    """The same release without nbgrader: `student_notebook` on each notebook, other files copied."""
    written = []
    for rel in _files(src):
        target = dst / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        if rel.suffix == ".ipynb":
            nbformat.write(student_notebook(nbformat.read(src / rel, as_version=4), name=str(rel)), target)
        else:
            shutil.copy2(src / rel, target)
        written.append(rel)
    return written


def make_student_copies(src, dst, engine="auto"):
    """Copy the folder src to dst as a student release, plus the flag that turns solutions off.

    engine: "nbgrader", "builtin", or "auto" (nbgrader where installed). Returns the paths written
    (the flag file last)."""
    src, dst = Path(src).resolve(), Path(dst).resolve()
    if engine not in ("auto", "nbgrader", "builtin"):
        raise ValueError(f"engine must be 'auto', 'nbgrader' or 'builtin', not {engine!r}")
    if not src.is_dir():
        raise ValueError(f"source folder {src} does not exist")
    if dst == src or src in dst.parents:
        raise ValueError(f"destination {dst} must lie outside the source folder {src}")
    use_nbgrader = engine == "nbgrader" or (engine == "auto" and nbgrader_available())
    if use_nbgrader and not nbgrader_available():
        raise ValueError('nbgrader is not installed: pip install -e ".[instructor]"')
    for stale in (p for p in dst.rglob("*") if p.name in INSTRUCTOR_ONLY) if dst.is_dir() else ():
        stale.unlink()  # left by an older build: a student copy never holds the instructors' files
    written = (nbgrader_release if use_nbgrader else builtin_release)(src, dst)
    flag = dst / STUDENT_FLAG
    flag.parent.mkdir(parents=True, exist_ok=True)
    flag.write_text(FLAG_TEXT)
    return [dst / rel for rel in written] + [flag]


def main(argv=None):
    """Command line: SRC_DIR DST_DIR [--engine ...]."""
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("src", help="folder of source notebooks, e.g. course")
    p.add_argument("dst", help="output folder, e.g. build/student")
    p.add_argument("--engine", default="auto", choices=["auto", "nbgrader", "builtin"],
                   help="nbgrader's generate_assignment, or the same without nbgrader (default: nbgrader if installed)")
    args = p.parse_args(argv)
    engine = args.engine if args.engine != "auto" else ("nbgrader" if nbgrader_available() else "builtin")
    try:
        written = make_student_copies(args.src, args.dst, engine=engine)
    except ValueError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    n_nb = sum(w.suffix == ".ipynb" for w in written)
    how = "nbgrader generate_assignment" if engine == "nbgrader" else "without nbgrader (not installed)"
    print(f"wrote {n_nb} student notebooks and {len(written) - n_nb - 1} other files to {args.dst} by {how} "
          f"(solutions turned off there by {STUDENT_FLAG})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
