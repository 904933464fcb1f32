"""scripts/gpu_check.sh's plumbing on the CPU (--dry-run): the folder it writes into, and the real-model path.

A GPU run itself happens only on a GPU machine; here the same script runs with the cpu presets.
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SCRIPT = REPO / "scripts" / "gpu_check.sh"


def _run(out, **env):
    e = dict(os.environ, PY=sys.executable, PYTHONPATH=str(REPO), GPU_CHECK_METHODS="none", **env)
    return subprocess.run(["bash", str(SCRIPT), "--dry-run", str(out)], cwd=REPO, env=e, capture_output=True,
                          text=True, timeout=1800)


def test_a_folder_of_other_files_is_refused_and_kept(tmp_path):
    out = tmp_path / "mine"
    out.mkdir()
    (out / "notes.txt").write_text("keep me")
    r = _run(out)
    assert r.returncode == 2 and "did not write" in r.stderr and len(r.stderr.strip().splitlines()) == 1
    assert (out / "notes.txt").read_text() == "keep me" and sorted(os.listdir(out)) == ["notes.txt"]


def test_a_file_is_not_a_folder(tmp_path):
    f = tmp_path / "results.txt"
    f.write_text("x")
    r = _run(f)
    assert r.returncode == 2 and "not a folder" in r.stderr and f.read_text() == "x"


@pytest.mark.slow
def test_the_dry_run_measures_the_real_model_and_keeps_other_files(tmp_path):
    out = tmp_path / "gpu"
    r = _run(out)
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
    res = json.loads((out / "gpu_check.json").read_text())
    llm = res["real_models"]["smollm2"]
    assert llm["steps"] == 1 and llm["n_test"] == 4 and 0 <= llm["before"]["greedy"] <= 1
    assert llm["seconds_per_step"] > 0 and llm["peak_memory_gb"] > 0.3  # a 135M-parameter model in float32
    assert "| smollm2 | words:1 |" in (out / "gpu.md").read_text()
    (out / "mine.txt").write_text("keep me")  # a file of the user's, inside a gpu_check folder
    r = _run(out, GPU_CHECK_REAL_MODELS="0")  # the folder's handling again; the real model ran above
    assert r.returncode == 0 and (out / "mine.txt").read_text() == "keep me", r.stderr[-2000:]
    assert json.loads((out / "gpu_check.json").read_text())["real_models_skipped"]
