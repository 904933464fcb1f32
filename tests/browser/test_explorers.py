"""In a real browser: run a notebook in JupyterLab, move each explorer's main control, see its output change,
and measure every slider's track: a long description once squeezed some tracks to 0 px.

One self-test on a generated notebook that shows every explorer always runs; a sample of the notebooks
under course/ that call an explorer (`_explorer(`; all of them with UNIFIED_RL_BROWSER_ALL=1) is run
the same way, with generous waits since those notebooks train a small model. Skipped when /usr/bin/chromium or playwright is missing
(a failure instead with UNIFIED_RL_REQUIRE_BROWSER=1).
"""

import json
import os
import time
from pathlib import Path

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_notebook

REPO = Path(__file__).resolve().parents[2]
EXPLORERS = ["dpo_explorer()", "ppo_explorer()", "grpo_explorer()", "rft_explorer()", "paradigm_explorer()",
             "pass_maj_explorer()", "noisy_reward_explorer()", "length_explorer()", "policy_explorer()",
             "preference_explorer()", "dpo_loss_explorer()", "loss_explorer()", "compose_explorer()",
             "teacher_explorer()",
             # notebook 13 measures the log-ratios on the lab; here a fixed spread per lag stands in for them
             "sampler_explorer({k: torch.linspace(-0.3 * k, 0.3 * k, 200) for k in (0, 2, 8)})"]
# The course notebooks run here: each explorer of the course is in the self-test notebook (10's and 11's
# included), so the notebooks run are 00 (its explorer built on a live batch rather than defaults) and one
# Chinese twin (same code, Chinese labels: tests/test_zh_edition.py checks the code, the labels come from
# one catalogue). `UNIFIED_RL_BROWSER_ALL=1` runs every notebook with an explorer, each up to its last one.
SAMPLE = ["course/00_unified_paradigm.ipynb", "course/zh/06_grpo.ipynb"]
ALL = sorted(p.relative_to(REPO).as_posix() for p in (REPO / "course").glob("*.ipynb")
             if "_explorer(" in p.read_text(encoding="utf-8")) + ["course/zh/06_grpo.ipynb"]
COURSE = [p for p in (ALL if os.environ.get("UNIFIED_RL_BROWSER_ALL") == "1" else SAMPLE) if (REPO / p).exists()]
MIN_TRACK_PX = 150  # a slider's draggable track, description and readout aside
# Notebooks whose sliders are known to be too narrow still: name -> why (remove once fixed).
NARROW_KNOWN = {}

# Every slider of the visible notebook: its description (or the label line above it) and its track width.
TRACKS_JS = """() => {
  const nb = document.querySelector('.jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook');
  return [...nb.querySelectorAll('.widget-slider')].map(s => {
    const track = s.querySelector('.slider-container') || s.querySelector('.noUi-target');
    const desc = (s.querySelector('.widget-label') || {}).innerText || '';
    const above = s.previousElementSibling ? s.previousElementSibling.innerText : '';
    return {label: (desc.trim() || above || '?').trim(), width: track ? track.getBoundingClientRect().width : 0,
            shown: s.getBoundingClientRect().width > 0, squeezed: s.classList.contains('url-squeezed')};
  });
}"""

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
    stderr: [...nb.querySelectorAll("[data-mime-type='application/vnd.jupyter.stderr']")].map(e => e.innerText),
  };
}"""

# The explorer's output: the .url-explorer-output inside the nearest ancestor of the main control.
OUTPUT_OF_JS = """el => { let a = el.parentElement;
  while (a && !a.querySelector('.url-explorer-output')) a = a.parentElement;
  return a ? a.querySelector('.url-explorer-output') : null; }"""


def _write_selftest(root):
    imports = ("from unified_rl.course.widgets import *\nfrom unified_rl.course.section52_widgets import *\n"
               "from unified_rl.course.nb_basics import length_explorer\n"
               "from unified_rl.course.widgets_policy_gradient import policy_explorer\n"
               "from unified_rl.course.widgets_preference import preference_explorer, dpo_loss_explorer\n"
               "from unified_rl.course.widgets_peers import loss_explorer\n"
               "from unified_rl.course.widgets_compose import compose_explorer\n"
               "from unified_rl.course.widgets_teachers import teacher_explorer, sampler_explorer\nimport torch")
    # a negative control: how a long description with description_width "initial" squeezed a track
    squeezed = ('import ipywidgets as W\ns = W.FloatSlider(description="share of the wrong mass on one wrong answer", '
                'style={"description_width": "initial"}, layout=W.Layout(width="420px"))\n'
                's.add_class("url-squeezed")\ns')
    cells = [new_code_cell(imports)] + [new_code_cell(e) for e in EXPLORERS] + [new_code_cell(squeezed)]
    nb = new_notebook(cells=cells)
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    (root / "selftest").mkdir(exist_ok=True)
    nbformat.write(nb, root / "selftest" / "explorers.ipynb")
    return "selftest/explorers.ipynb"


def _click_run_all(page, upto=None):
    """Run -> Run All Cells (the kernel is fresh: it was just started for this notebook); with `upto`
    (an index among the non-empty code cells), select the cell after that one and Run -> Run All Above
    Selected Cell."""
    after = None
    if upto is not None:
        cells = page.locator(".jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook .jp-Cell")
        code = [i for i in range(cells.count()) if "jp-CodeCell" in (cells.nth(i).get_attribute("class") or "")
                and cells.nth(i).locator(".cm-content").first.text_content().strip() != ""]
        if code[upto] + 1 < cells.count():
            after = cells.nth(code[upto] + 1).locator(".jp-InputPrompt").first
            after.scroll_into_view_if_needed()
            after.click()
    page.click(".lm-MenuBar-itemLabel:text-is('Run')")
    page.click(".lm-Menu-itemLabel:text-is('Run All Above Selected Cell')" if after is not None
               else ".lm-Menu-itemLabel:text-is('Run All Cells')")


def last_explorer_cell(path):
    """The index, among the notebook's non-empty code cells, of the last one that shows an explorer
    (what the browser checks: nothing after it needs running here; `make book` runs the whole notebook)."""
    sources = [c.source for c in nbformat.read(path, as_version=4).cells if c.cell_type == "code" and c.source.strip()]
    hits = [i for i, src in enumerate(sources) if "_explorer(" in src]
    if not hits:
        raise ValueError(f"{path}: no code cell calls an explorer")
    return hits[-1]


def _run_all(page, lab, rel, timeout_s, upto=None):
    """Open the notebook, run its cells (all, or up to `upto`) in its fresh kernel, wait until they have run.
    A run that stops early (a cell raised: JupyterLab leaves the cells after it unrun) fails at once."""
    page.goto(lab.url(rel))
    _wait_for_kernel(page, rel)
    _click_run_all(page, upto)
    deadline, started, asked, stopped = time.time() + timeout_s, False, time.time(), None
    while time.time() < deadline:
        s = page.evaluate(STATE_JS)
        if s and s["errors"]:
            pytest.fail(f"{rel}: a cell raised:\n" + "\n---\n".join(s["errors"])[-3000:])
        if s:
            wanted = s["prompts"] if upto is None else s["prompts"][: upto + 1]
            # a prompt other than "[ ]:" ("[*]:" queued or running, "[3]:" done) shows Run All reached the kernel;
            # the status alone can read busy while the kernel merely connects
            started = started or any(p != "[ ]:" and p for p in wanted)
            if not started and time.time() - asked > 60:  # the request was lost (a busy machine): ask again
                _click_run_all(page, upto)
                asked = time.time()
            done = bool(wanted) and all(p[1:-2].isdigit() for p in wanted)
            if started and s["status"] == "idle" and done:
                return
            if started and s["status"] == "idle" and not done and "[*]:" not in wanted:
                stopped = stopped or time.time()  # idle, nothing queued, cells unrun: the run stopped
                if time.time() - stopped > 10:
                    pytest.fail(f"{rel}: the run stopped before its end (a cell raised); stderr shown:\n"
                                + "\n---\n".join(s["stderr"])[-3000:])
            else:
                stopped = None
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


def _assert_usable_tracks(page, rel, expected=1):
    """Every slider shown has a track of at least MIN_TRACK_PX; returns the widths measured."""
    tracks = [t for t in page.evaluate(TRACKS_JS) if t["shown"] and not t["squeezed"]]
    assert len(tracks) >= expected, f"{rel}: found {len(tracks)} sliders, expected at least {expected}"
    narrow = [f"{t['label']!r}: {t['width']:.0f} px" for t in tracks if t["width"] < MIN_TRACK_PX]
    assert not narrow, f"{rel}: slider tracks narrower than {MIN_TRACK_PX} px: {narrow}"
    print(f"{rel}: {len(tracks)} sliders, tracks {min(t['width'] for t in tracks):.0f}-"
          f"{max(t['width'] for t in tracks):.0f} px")
    return tracks


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
    _assert_usable_tracks(page, rel, expected=2 * len(EXPLORERS))
    (control,) = [t for t in page.evaluate(TRACKS_JS) if t["squeezed"]]
    assert control["width"] < MIN_TRACK_PX, f"the measurement misses a squeezed track: {control}"
    print(f"negative control (long description, width 'initial'): track {control['width']:.0f} px")
    _move_every_main_control(page, rel, expected=len(EXPLORERS))


def _course_params():
    if not COURSE:
        return [pytest.param(None, marks=pytest.mark.skip(reason="no notebook under course/ calls an explorer yet"))]
    return [pytest.param(rel, marks=pytest.mark.xfail(reason=NARROW_KNOWN[Path(rel).stem], strict=False))
            if Path(rel).stem in NARROW_KNOWN else rel for rel in COURSE]


@pytest.mark.parametrize("rel", _course_params())
def test_course_notebook_explorers(lab, page, rel):
    page.set_default_timeout(60_000)
    # up to its last explorer: the training after it is make book's to run (tests/test_notebooks_executed.py)
    _run_all(page, lab, rel, timeout_s=900, upto=last_explorer_cell(REPO / rel))
    _assert_usable_tracks(page, rel)
    _move_every_main_control(page, rel)


def test_a_cell_that_raises_fails_the_run_at_once_and_upto_stops_before_the_rest(lab, page):
    """Negative control of _run_all: an AssertionError mid-notebook fails it in seconds, not at the timeout;
    and a run up to a cell leaves the cells after it (here one that would raise) unrun."""
    cells = [new_code_cell("x = 1"), new_code_cell("assert x == 2, 'planted'"), new_code_cell("y = 3")]
    nb = new_notebook(cells=cells)
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    (lab.root / "selftest").mkdir(exist_ok=True)
    nbformat.write(nb, lab.root / "selftest" / "raises.ipynb")
    t = time.time()
    with pytest.raises(pytest.fail.Exception, match="raised"):
        _run_all(page, lab, "selftest/raises.ipynb", timeout_s=300)
    assert time.time() - t < 120, "the failing cell was noticed only at the timeout"
    for k in json.loads(lab.api("/api/kernels")):  # a fresh kernel for the second half
        lab.api(f"/api/kernels/{k['id']}", method="DELETE")
    _run_all(page, lab, "selftest/raises.ipynb", timeout_s=300, upto=0)  # the raising cell stays unrun
    assert page.evaluate(STATE_JS)["prompts"][1:] == ["[ ]:", "[ ]:"]


def test_the_self_test_shows_every_explorer_the_course_calls():
    """What lets the sample stay small: an explorer a notebook calls is rendered and moved by the self-test."""
    import re
    called = {m for p in (REPO / "course").glob("*.ipynb") for m in re.findall(r"\b(\w+_explorer)\(", p.read_text())}
    shown = {e.split("(", 1)[0] for e in EXPLORERS}
    assert called and called <= shown, called - shown
