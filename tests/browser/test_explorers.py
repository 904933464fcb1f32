"""In a real browser: run a notebook in JupyterLab, move each explorer's main control, see its output change.

One self-test on a generated notebook that shows every explorer always runs; each notebook under
course/ whose source calls an explorer (`_explorer(`) is run the same way, with generous waits since
those notebooks train a small model. Skipped when /usr/bin/chromium or playwright is missing.
"""

import json
import time
from pathlib import Path

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_notebook

REPO = Path(__file__).resolve().parents[2]
COURSE = sorted(p.relative_to(REPO).as_posix() for p in (REPO / "course").rglob("*.ipynb")
                if ".ipynb_checkpoints" not in p.parts and "_explorer(" in p.read_text(encoding="utf-8"))
EXPLORERS = ["dpo_explorer()", "ppo_explorer()", "grpo_explorer()", "rft_explorer()", "paradigm_explorer()",
             "pass_maj_explorer()", "noisy_reward_explorer()"]

# Per-notebook state read from the page: kernel status, code cells' prompts and error outputs.
STATE_JS = """() => {
  const nb = document.querySelector('.jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook');
  if (!nb) return null;
  const cells = [...nb.querySelectorAll('.jp-CodeCell')].filter(c => {
    const src = c.querySelector('.cm-content'); return src && src.textContent.trim() !== ''; });
  const ind = document.querySelector('.jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook-ExecutionIndicator');
  return {
    status: ind ? ind.getAttribute('data-status') : null,
    prompts: cells.map(c => c.querySelector('.jp-InputPrompt').textContent.trim()),
    errors: [...nb.querySelectorAll("[data-mime-type='application/vnd.jupyter.error']")].map(e => e.innerText),
  };
}"""

# The explorer's output: the .url-explorer-output inside the nearest ancestor of the main control.
OUTPUT_OF_JS = """el => { let a = el.parentElement;
  while (a && !a.querySelector('.url-explorer-output')) a = a.parentElement;
  return a ? a.querySelector('.url-explorer-output') : null; }"""


def _write_selftest(root):
    cells = [new_code_cell("from unified_rl.course.widgets import *\nfrom unified_rl.course.section52_widgets import *")] + [new_code_cell(e) for e in EXPLORERS]
    nb = new_notebook(cells=cells)
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    (root / "selftest").mkdir(exist_ok=True)
    nbformat.write(nb, root / "selftest" / "explorers.ipynb")
    return "selftest/explorers.ipynb"


def _click_run_all(page):
    """Run -> Run All Cells (the kernel is fresh: it was just started for this notebook)."""
    page.click(".lm-MenuBar-itemLabel:text-is('Run')")
    page.click(".lm-Menu-itemLabel:text-is('Run All Cells')")


def _run_all(page, lab, rel, timeout_s):
    """Open the notebook, run all its cells in its fresh kernel, wait until every cell has run."""
    page.goto(lab.url(rel))
    _wait_for_kernel(page, rel)
    _click_run_all(page)
    deadline, started, asked = time.time() + timeout_s, False, time.time()
    while time.time() < deadline:
        s = page.evaluate(STATE_JS)
        if s and s["errors"]:
            pytest.fail(f"{rel}: a cell raised:\n" + "\n---\n".join(s["errors"])[-3000:])
        if s:
            started = started or s["status"] != "idle" or any(p != "[ ]:" and p for p in s["prompts"])
            if not started and time.time() - asked > 60:  # the request was lost (a busy machine): ask again
                _click_run_all(page)
                asked = time.time()
            if started and s["status"] == "idle" and s["prompts"] and all(p[1:-2].isdigit() for p in s["prompts"]):
                return
        time.sleep(0.5)
    pytest.fail(f"{rel}: Run All did not finish within {timeout_s} s (last state {s})")


def _wait_for_kernel(page, rel, timeout_s=120):
    """Wait until the notebook's kernel is started and idle; accept a "Select Kernel" dialog if one shows."""
    deadline = time.time() + timeout_s
    while time.time() < deadline:
        dialog = page.locator(".jp-Dialog:has-text('Select Kernel') .jp-mod-accept")
        if dialog.count():
            dialog.first.click()
        name = page.locator(".jp-NotebookPanel:not(.lm-mod-hidden) .jp-Toolbar-kernelName")
        idle = page.locator(".jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook-ExecutionIndicator[data-status='idle']")
        if name.count() and "No Kernel" not in name.first.inner_text() and idle.count():
            return
        time.sleep(0.5)
    pytest.fail(f"{rel}: the kernel did not start within {timeout_s} s")


def _new_value(handle, readout_text):
    """A value inside the slider's range and different from the current one, as typed text."""
    lo, hi, now = (float(handle.get_attribute(a).replace("\u2212", "-")) for a in ("aria-valuemin", "aria-valuemax", "aria-valuenow"))
    is_int = "." not in readout_text
    for frac in (0.3, 0.7):
        v = lo + frac * (hi - lo)
        v = round(v) if is_int else round(v, 2)
        if abs(v - now) > 1e-9:
            return str(v)
    raise AssertionError(f"slider range [{lo}, {hi}] leaves no other value to try")


def _move_every_main_control(page, rel, expected=1):
    mains = page.locator(".jp-NotebookPanel:not(.lm-mod-hidden) .url-main-control")
    n = mains.count()
    assert n >= expected, f"{rel}: found {n} explorers (.url-main-control), expected at least {expected}"
    for i in range(n):
        main = mains.nth(i)
        main.scroll_into_view_if_needed()
        output = main.evaluate_handle(OUTPUT_OF_JS).as_element()
        assert output is not None, f"{rel}: explorer {i} has no .url-explorer-output next to its main control"
        before = output.inner_html()
        readout = main.locator(".widget-readout")
        new = _new_value(main.locator(".noUi-handle").first, readout.inner_text())
        readout.click()
        page.keyboard.press("Control+A")
        page.keyboard.type(new)
        page.keyboard.press("Enter")
        deadline = time.time() + 30
        while output.inner_html() == before and time.time() < deadline:
            time.sleep(0.2)
        assert output.inner_html() != before, f"{rel}: explorer {i}'s output did not change after typing {new}"
        shown = float(readout.inner_text().replace("\u2212", "-"))  # the readout prints a unicode minus
        assert shown == pytest.approx(float(new)), f"{rel}: explorer {i} shows {shown} after typing {new}"


@pytest.fixture(autouse=True)
def _stop_kernels_after(lab):
    """Each notebook's kernel holds a model in memory: stop it before the next notebook starts."""
    yield
    try:
        for k in json.loads(lab.api("/api/kernels")):
            lab.api(f"/api/kernels/{k['id']}", method="DELETE")
    except Exception:  # the server may already be gone; the session fixture stops it anyway
        pass


def test_explorers_respond_in_jupyterlab(lab, page):
    rel = _write_selftest(lab.root)
    _run_all(page, lab, rel, timeout_s=180)
    _move_every_main_control(page, rel, expected=len(EXPLORERS))


@pytest.mark.parametrize("rel", COURSE or [pytest.param(
    None, marks=pytest.mark.skip(reason="no notebook under course/ calls an explorer yet"))])
def test_course_notebook_explorers(lab, page, rel):
    page.set_default_timeout(60_000)
    _run_all(page, lab, rel, timeout_s=900)  # course notebooks train a small model: minutes on 2 cores
    _move_every_main_control(page, rel)
