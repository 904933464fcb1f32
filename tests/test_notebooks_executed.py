"""The notebook test of `make test`: every course notebook ran top to bottom without an error.

`make book` (scripts/build_book.py) executes each notebook once, in a fresh kernel, past any failing
cell, and keeps the executed copy in build/book/executed/. This module reads those copies, so the
course is executed once for both the site and this test. A copy that is missing, or older than its
notebook's current code cells, fails here (with UNIFIED_RL_REQUIRE_BOOK=1, as `make test` sets) or
is skipped (a plain `pytest tests` without a book). The Chinese twins (course/zh/) are read from
executed/zh/, where `make book` runs them with their training capped (scripts/build_book.py). A
twin the build did not execute (`--zh-execute`, which `make test` passes to keep within its time;
build.json says `"executed": false`) passes only if its code cells are the English notebook's, and the
English notebook is tested here on its own executed copy.
"""

import json
import os
import sys
from pathlib import Path

import nbformat
import pytest

REPO = Path(__file__).resolve().parents[1]
EXECUTED = REPO / "build" / "book" / "executed"
NOTEBOOKS = sorted((REPO / "course").glob("[0-9]*.ipynb"))
NOTEBOOKS += sorted((REPO / "course" / "zh").glob("[0-9]*.ipynb"))  # the Chinese twins: executed/zh/
REQUIRED = os.environ.get("UNIFIED_RL_REQUIRE_BOOK") == "1"
pytestmark = pytest.mark.book


def code(nb):
    return [c.source for c in nb.cells if c.cell_type == "code"]


def problems(source, executed):
    """What is wrong with an executed copy of `source`, as readable lines (empty: it ran cleanly)."""
    out = []
    if code(executed) != code(source):
        return ["the executed copy's code cells are not the notebook's: it is stale (run `make book`)"]
    if executed.metadata.get("execution_failure"):
        out.append(f"execution stopped: {executed.metadata['execution_failure']}")
    n = 0
    for cell in executed.cells:
        if cell.cell_type != "code":
            continue
        first_line = cell.source.strip().splitlines()[0][:80] if cell.source.strip() else ""
        for o in cell.get("outputs", []):
            if o.get("output_type") == "error":
                trace = "\n".join(o.get("traceback", []))[-3000:]
                out.append(f"code cell {n} ({first_line!r}) raised {o.get('ename')}: {o.get('evalue')}\n{trace}")
        if cell.source.strip() and cell.get("execution_count") is None and not out:
            out.append(f"code cell {n} ({first_line!r}) never ran")
        n += 1
    return out


sys.path.insert(0, str(REPO / "scripts"))
from zh_sync import LANG_LINE, code_only  # noqa: E402  the twin's one declared difference (followed by a newline)

LANG_LINE += "\n"


def not_executed(key, report_path=EXECUTED.parent / "build.json"):
    """Whether the last build left notebook `key` (e.g. "zh/06_grpo.ipynb") unexecuted on purpose."""
    try:
        return json.loads(Path(report_path).read_text())["notebooks"][key].get("executed") is False
    except (OSError, ValueError, KeyError):
        return False


def twin_code_differs(zh, en):
    """Code cells where Chinese twin `zh` is not English notebook `en` (the declared set_language line aside)."""
    return [i for i, (a, b) in enumerate(zip(code(zh), code(en)))  # comments aside: a twin translates them
            if code_only(a.replace(LANG_LINE, "", 1)) != code_only(b)] + (
        ["count"] if len(code(zh)) != len(code(en)) else [])


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.relative_to(REPO / "course").as_posix() for p in NOTEBOOKS])
def test_the_notebook_ran_without_errors(path):
    key = path.relative_to(REPO / "course").as_posix()
    if key.startswith("zh/") and not_executed(key):
        english = nbformat.read(REPO / "course" / path.name, as_version=4)
        differs = twin_code_differs(nbformat.read(path, as_version=4), english)
        assert not differs, f"{key} was not executed, and its code cells {differs} are not the English notebook's"
        return
    done = EXECUTED / path.relative_to(REPO / "course")
    if not done.is_file():
        (pytest.fail if REQUIRED else pytest.skip)(f"{done} is missing: `make book` executes the notebooks")
    found = problems(nbformat.read(path, as_version=4), nbformat.read(done, as_version=4))
    assert not found, "\n".join(found)


def test_an_error_a_stale_copy_and_an_unrun_cell_are_each_found():
    src = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("x = 1"), nbformat.v4.new_code_cell("y = x")])
    ran = nbformat.from_dict(nbformat.v4.new_notebook(cells=[dict(c) for c in src.cells]))
    for i, c in enumerate(ran.cells):
        c.execution_count = i + 1
    assert problems(src, ran) == []
    broken = nbformat.from_dict(ran)
    broken.cells[1].outputs = [nbformat.v4.new_output("error", ename="NameError", evalue="x", traceback=["tb"])]
    assert "raised NameError" in problems(src, broken)[0]
    stale = nbformat.from_dict(ran)
    stale.cells[1].source = "y = 2"
    assert "stale" in problems(src, stale)[0]
    unrun = nbformat.from_dict(ran)
    unrun.cells[1].execution_count = None
    assert "never ran" in problems(src, unrun)[0]
    stopped = nbformat.from_dict(ran)
    stopped.metadata["execution_failure"] = "CellTimeoutError: cell 1"
    assert "execution stopped" in problems(src, stopped)[0]


def test_an_unexecuted_twin_passes_only_with_the_english_code(tmp_path):
    report = tmp_path / "build.json"
    report.write_text(json.dumps({"notebooks": {"zh/01_x.ipynb": {"executed": False}, "zh/02_x.ipynb": {"seconds": 3.0}}}))
    assert not_executed("zh/01_x.ipynb", report) and not not_executed("zh/02_x.ipynb", report)
    assert not not_executed("zh/03_x.ipynb", report) and not not_executed("zh/01_x.ipynb", tmp_path / "none.json")
    en = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("import unified_rl"), nbformat.v4.new_code_cell("x = 1")])
    zh = nbformat.from_dict(en)
    zh.cells = [nbformat.v4.new_code_cell(LANG_LINE + "import unified_rl"), nbformat.v4.new_code_cell("x = 1")]
    assert twin_code_differs(zh, en) == []
    zh.cells[1].source = "x = 2"
    assert twin_code_differs(zh, en) == [1]
    zh.cells.append(nbformat.v4.new_code_cell("y = 1"))
    assert "count" in twin_code_differs(zh, en)
