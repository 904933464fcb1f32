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
    """One run, in the folder of an earlier gpu_check (it carries the marker): what gpu_check writes there
    is replaced, a file of the user's inside it is kept, and the real model is measured."""
    out = tmp_path / "gpu"
    out.mkdir()
    (out / ".unified_rl-gpu-check").touch()
    (out / "mine.txt").write_text("keep me")
    (out / "llm-stale.json").write_text("{}")  # an earlier run's real-model result: gpu_check's own, removed
    (out / "gpu.md").write_text("stale")
    r = _run(out)
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
    assert (out / "mine.txt").read_text() == "keep me" and not (out / "llm-stale.json").exists()
    res = json.loads((out / "gpu_check.json").read_text())
    assert sorted(res["real_models"]) == ["smollm2"] and not res["real_models_skipped"]
    llm = res["real_models"]["smollm2"]
    assert llm["steps"] == 1 and llm["n_test"] == 4 and 0 <= llm["before"]["greedy"] <= 1
    assert (llm["prompts_per_step"], llm["group_size"]) == (2, 2)  # the dry run's small step
    assert llm["seconds_per_step"] > 0 and llm["peak_memory_gb"] > 0.3  # a 135M-parameter model in float32
    assert "| smollm2 | words:1 |" in (out / "gpu.md").read_text()
    dist = res["distributed"]  # the torchrun section's plumbing: 2 gloo ranks, DDP then FSDP2
    assert res["distributed_rc"] == 0 and dist["world_size"] == 2 and sorted(dist["modes"]) == ["ddp", "fsdp"]
    assert dist["modes"]["fsdp"]["fsdp"] and not dist["modes"]["ddp"]["fsdp"]
    for mode in dist["modes"].values():
        assert [r["rank"] for r in mode["ranks"]] == [0, 1]
        assert all(r["seconds_per_step"] > 0 and r["peak_memory_gb"] > 0.3 for r in mode["ranks"])
        assert mode["dtype"] == "torch.float32"  # dtype auto: float32 on the CPU, bf16 on a GPU that has it
    assert "| fsdp | torch.float32 | 1 |" in (out / "gpu.md").read_text()


def _report(tmp_path, monkeypatch, real_models, llm_rc="0"):
    """bench/gpu_report.py's verdict on a folder holding only a speed result (no lab method)."""
    sys.path.insert(0, str(REPO / "bench"))
    import gpu_report

    (tmp_path / "preset_speed.json").write_text("{}")
    monkeypatch.setenv("GPU_CHECK_REAL_MODELS", real_models)
    monkeypatch.setenv("GPU_CHECK_LLM_RC", llm_rc)
    rc = gpu_report.main([str(tmp_path), "0", "1", "0", "1", "scripts/gpu_check.sh --dry-run"])
    return rc, json.loads((tmp_path / "gpu_check.json").read_text())


def test_the_report_fails_when_the_offline_model_left_no_result(tmp_path, monkeypatch):
    rc, res = _report(tmp_path, monkeypatch, real_models="1")
    assert rc == 1 and res["real_models_rc"] == 1 and not res["real_models_skipped"]


def test_the_report_says_the_real_models_were_skipped(tmp_path, monkeypatch):
    rc, res = _report(tmp_path, monkeypatch, real_models="0")
    assert rc == 0 and res["real_models_rc"] == 0 and res["real_models_skipped"]
    (tmp_path / "failed").mkdir()
    rc, res = _report(tmp_path / "failed", monkeypatch, real_models="1", llm_rc="1")  # the model ran and failed
    assert rc == 1 and res["real_models_rc"] == 1


def test_the_report_says_why_the_data_parallel_runs_were_skipped_and_fails_when_they_failed(tmp_path, monkeypatch):
    monkeypatch.setenv("GPU_CHECK_DIST_NOTE", "skipped: 1 GPU visible, a data-parallel run needs 2 or more")
    rc, res = _report(tmp_path, monkeypatch, real_models="0")
    assert rc == 0 and res["distributed"] is None and res["distributed_note"].startswith("skipped: 1 GPU")
    assert "skipped: 1 GPU visible" in (tmp_path / "gpu.md").read_text()
    (tmp_path / "failed").mkdir()
    monkeypatch.setenv("GPU_CHECK_DIST_NOTE", "rc=1 on 4 ranks")
    monkeypatch.setenv("GPU_CHECK_DIST_RC", "1")
    rc, res = _report(tmp_path / "failed", monkeypatch, real_models="0")
    assert rc == 1 and res["distributed_rc"] == 1
