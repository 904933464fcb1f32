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

    python -m unified_rl.course.student course learn --learner      (what `make lab` runs)

makes learners' copies instead (`make_learner_copies`): the same stubs, except that a top-level answer
is `# YOUR CODE HERE` after its placeholder (`x = ...`), with no `raise`, so Run All reaches every
check, which says "not attempted yet"; the grading line (the hidden tests) goes, so a wrong answer
shows one verdict; nothing is locked or marked for nbgrader; no flag: `q.solution()` stays on for a
learner on their own. Only missing files are written: a learner's copy is never rewritten.
"""

import argparse
import hashlib
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
LEARNER_STUB = ["# YOUR CODE HERE"]  # after the placeholder (`x = ...`) the check reads: "not attempted yet"
MARKDOWN_STUB = ["YOUR ANSWER HERE"]  # nbgrader's ClearSolutions.text_stub
_MARKER = re.compile(r"^(\s*)#+\s*(BEGIN|END) (SOLUTION|HIDDEN TESTS)\s*$")
_SKIP = {".ipynb_checkpoints", "__pycache__", ".git"}
INSTRUCTOR_ONLY = {"INSTRUCTORS.md"}  # never copied into a student build
FLAG_TEXT = ("This folder is a student copy of the course: q.solution() is turned off here.\n"
             "Set UNIFIED_RL_SOLUTIONS=1 (or delete this file) to show solutions.\n")


LEARNER_README = """# Your copy of the course

These notebooks are copies of `{src}/`'s with every exercise's answer left blank (`# YOUR CODE HERE`);
the Chinese edition is in `zh/`. They were made once (by `make lab`, or by Binder's build) and are
never rewritten: your edits stay.
Delete or rename a notebook and the next `make lab` makes a fresh copy of it (it also names the copies
whose notebook in `{src}/` has changed since).

Under each exercise, `q1.check()` says whether your answer is right, `q1.hint()` (then `q1.hint(2)`)
gives a hint and `q1.solution()` the worked answer. `{src}/` in the repository holds the notebooks
with every answer filled in (the instructors' source).

# 你的课程副本

这些笔记本是 `{src}/` 中笔记本的副本，每道练习的答案都留空（`# YOUR CODE HERE`）；中文版在 `zh/`。
它们只生成一次（由 `make lab` 或 Binder 的构建生成），之后从不覆盖：你的修改会保留。删除或重命名一个笔记本，下次
`make lab` 会重新生成它（若 `{src}/` 中的笔记本在副本生成后有改动，它也会列出）。

每道练习下面，`q1.check()` 判断答案是否正确，`q1.hint()`（再 `q1.hint(2)`）给出提示，`q1.solution()`
给出参考解答。仓库中的 `{src}/` 是填好全部答案的笔记本（教师用的源文件）。
"""


def _nbgrader_meta(cell):
    return cell.get("metadata", {}).get("nbgrader", {})


def _stub(cell_type, indent, learner):
    """What replaces a solution region: nbgrader's stub, or in a learner's copy, at top level, a comment only."""
    if cell_type != "code":
        return MARKDOWN_STUB
    return LEARNER_STUB if learner and not indent else CODE_STUB


def strip_cell(source, cell_type, where="cell", solution=True, grade=True, learner=False):
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
                out += [indent + s for s in _stub(cell_type, indent, learner)]
        else:
            if region != kind:
                raise ValueError(f"{where}, line {n}: END {kind} without a matching BEGIN {kind}")
            region = None
    if region is not None:
        raise ValueError(f"{where}: BEGIN {region} has no matching END {region}")
    return "\n".join(out)


def student_notebook(nb, name="notebook", learner=False):
    """A released copy of a notebook node, as nbgrader's generate_assignment makes it (checksums aside).

    learner=True: a learner's copy (`learner_notebook`): no cell is locked, and a top-level answer is
    a comment instead of `raise NotImplementedError()`, so Run All reaches every check."""
    nb = nbformat.from_dict(nb)  # a deep copy: the source notebook is left untouched
    nb.metadata.pop("widgets", None)  # saved widget state belongs to outputs
    nb.metadata.pop("celltoolbar", None)
    for i, cell in enumerate(nb.cells):
        meta, had_region = _nbgrader_meta(cell), any(_MARKER.match(l) for l in cell.source.split("\n"))
        cell.source = strip_cell(cell.source, cell.cell_type, where=f"{name}, cell {i}",
                                 solution=bool(meta.get("solution")), grade=bool(meta.get("grade")), learner=learner)
        if meta.get("solution") and not had_region:  # nbgrader: a solution cell without markers is all solution
            cell.source = "\n".join(_stub(cell.cell_type, "", learner))
        if learner:
            cell.metadata.pop("nbgrader", None)  # a plain notebook: nothing to grade, nothing locked
        elif meta.get("solution") or meta.get("grade") or meta.get("locked"):
            cell.metadata["deletable"] = False
        if meta.get("locked") and not meta.get("solution") and not learner:
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


def learner_notebook(nb, name="notebook"):
    """A learner's copy of a notebook node: answers blank, no grading line, stamped with the digest of what it was made as."""
    nb = student_notebook(nb, name, learner=True)
    digest = hashlib.sha256(nbformat.writes(nb).encode()).hexdigest()[:16]
    nb.metadata.setdefault("unified_rl", {})["learner_copy"] = {"of": name, "digest": digest}
    return nb


def _made_from(path):
    """The digest a learner's notebook was made with, or None (edited out, or not one of ours)."""
    try:
        return nbformat.read(path, as_version=4).metadata["unified_rl"]["learner_copy"]["digest"]
    except Exception:  # any file a learner left there: it is kept, whatever it holds
        return None


def make_learner_copies(src, dst):
    """Learners' copies of the folder src in dst; a file already in dst is kept as it is, never rewritten.

    Returns (written, kept, changed): the paths written, those kept, and of those kept the notebooks
    whose source has changed since they were made."""
    src, dst = Path(src).resolve(), Path(dst).resolve()
    if not src.is_dir():
        raise ValueError(f"source folder {src} does not exist")
    if dst == src or src in dst.parents or dst in src.parents:
        raise ValueError(f"destination {dst} must lie outside the source folder {src}, and not hold it")
    written, kept, changed = [], [], []
    for rel in (r for r in _files(src) if r.name != STUDENT_FLAG):
        target = dst / rel
        new = learner_notebook(nbformat.read(src / rel, as_version=4), rel.as_posix()) if rel.suffix == ".ipynb" else None
        if target.exists() or target.is_symlink():
            kept.append(target)
            made = _made_from(target) if new is not None else None
            if made is not None and made != new.metadata["unified_rl"]["learner_copy"]["digest"]:
                changed.append(target)
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        if new is not None:
            nbformat.write(new, target)
        else:
            shutil.copy2(src / rel, target)
        written.append(target)
    readme = dst / "README.md"
    if not (readme.exists() or readme.is_symlink()):
        readme.parent.mkdir(parents=True, exist_ok=True)
        readme.write_text(LEARNER_README.format(src=src.name))
        written.append(readme)
    return written, kept, changed


def _learner_main(src, dst):
    try:
        written, kept, changed = make_learner_copies(src, dst)
    except ValueError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    n_nb = sum(p.suffix == ".ipynb" for p in written)
    print(f"{dst}: {n_nb} new learner notebooks (answers blank; q.hint() and q.solution() under each exercise; "
          f"the worked notebooks: {src}/), {len(kept)} files already there kept as they are")
    for path in changed:
        print(f"  {path}: its source in {src}/ has changed since this copy was made; rename or delete it "
              "and run this again for the new version")
    return 0


def main(argv=None):
    """Command line: SRC_DIR DST_DIR [--engine ...]."""
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("src", help="folder of source notebooks, e.g. course")
    p.add_argument("dst", help="output folder, e.g. build/student")
    p.add_argument("--engine", default="auto", choices=["auto", "nbgrader", "builtin"],
                   help="nbgrader's generate_assignment, or the same without nbgrader (default: nbgrader if installed)")
    p.add_argument("--learner", action="store_true",
                   help="learners' copies instead (what make lab opens): only missing files are written, solutions stay on")
    args = p.parse_args(argv)
    if args.learner:
        return _learner_main(args.src, args.dst)
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
