"""Shipped and cached results say where they came from, a cached result of other code is never read,
a damaged one falls back to the shipped run, and the current code reproduces one shipped arm."""

import json
import os
import subprocess
import sys

import pytest

from unified_rl import cache
from unified_rl.evaluation import greedy_accuracy
from unified_rl.experiments import common, noisy_reward
from unified_rl.presets import get_preset
from unified_rl.trainer import train

from _rounding import kernel_fingerprint, skip_where_rounding_differs

KEYS = {"commit", "uncommitted_changes", "package", "code", "torch", "transformers", "python", "date",
        "machine", "command"}


@pytest.fixture
def private_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("UNIFIED_RL_CACHE", str(tmp_path / "cache"))


def test_a_provenance_record_names_code_versions_machine_and_command():
    p = common.provenance()
    assert set(p) == KEYS
    assert p["package"] and p["torch"] and p["transformers"] and p["date"][:2] == "20" and p["command"]
    assert p["code"] == cache.code_version() and p["code"].startswith(p["package"])
    if p["commit"] is not None:  # inside a git checkout
        assert len(p["commit"]) == 40 and isinstance(p["uncommitted_changes"], bool)


def test_every_written_result_carries_its_provenance(tmp_path, private_cache):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    common.write_result("demo", str(tmp_path / "out"), {"headline": {"x": 1}, "seeds": 3}, lambda r: plt.subplots()[0],
                        cache_key="cpu")
    assert (tmp_path / "out" / "demo.png").stat().st_size > 0
    written = json.load(open(tmp_path / "out" / "demo.json"))
    assert set(written["provenance"]) == KEYS
    assert json.load(open(common.cached_result_path("demo", "cpu")))["provenance"] == written["provenance"]


def test_cached_results_are_keyed_by_code_version(monkeypatch, private_cache):
    path = common.cached_result_path("figure7", "cpu")
    assert cache.code_version() in os.path.basename(path)
    monkeypatch.setattr(cache, "__version__", "99.0")
    assert common.cached_result_path("figure7", "cpu") != path


def test_a_damaged_cached_result_falls_back_to_the_shipped_one(private_cache, capsys):
    path = common.cached_result_path("figure7", "cpu")
    os.makedirs(os.path.dirname(path), exist_ok=True)
    text = json.dumps(common.load_shipped("figure7"))
    with open(path, "w") as f:
        f.write(text[: len(text) // 2])  # a write cut short
    result = common.load_full("figure7", "cpu")
    assert result["loaded_from"].startswith("the full run shipped")
    assert f"the cached result {path} is damaged" in capsys.readouterr().err


def test_the_shipped_results_carry_provenance():
    for name in ("figure7", "data-source", "noisy-reward", "reward-function"):
        shipped = common.load_shipped(name)
        assert "provenance" in shipped, f"{name}'s shipped result has no provenance record"
        assert set(shipped["provenance"]) >= KEYS - {"uncommitted_changes"}


@pytest.mark.slow
def test_one_seed_of_one_shipped_arm_reproduces():
    """noisy-reward, seed 0, online RFT at 0 % flips: SFT, 30 RL steps, held-out greedy accuracy.

    Exactly; on a machine measured to round differently from the shipped run's the test skips and says so
    (tests/_rounding.py)."""
    skip_where_rounding_differs("noisy-reward")
    shipped = common.load_shipped("noisy-reward")
    b, seed, arm = shipped["budget"], 0, "online-rft@0.0"
    want = next(s for s in shipped["per_seed"] if s["seed"] == seed)
    sp = common.sft_preset(get_preset(shipped["preset"]), b["sft_steps"])
    lab = common.lab_on(sp, seed, common.sft_model(sp, seed))
    test = lab.test_problems[: b["n_test"]]
    assert greedy_accuracy(lab.policy, lab.tokenizer, test) == want["sft"]
    r = train(noisy_reward.noisy_method("online-rft", 0.0, seed), lab=lab, steps=b["rl_steps"], seed=seed,
              progress=False, eval_every=0)
    got = {"accuracy": greedy_accuracy(r.policy, r.tokenizer, test),
           "seen_reward": sum(m["reward"] for m in r.metrics[-5:]) / 5, "kl_last": r.metrics[-1]["kl"]}
    for key, value in got.items():
        assert value == pytest.approx(want["runs"][arm][key], rel=1e-6, abs=1e-9), key


def test_without_matplotlib_the_result_is_written_and_the_figure_skipped(tmp_path, monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "matplotlib.pyplot", None)  # import fails, as on a core-only install
    common.write_result("demo", str(tmp_path / "out"), {"headline": {"x": 1}}, lambda r: 1 / 0)
    assert json.load(open(tmp_path / "out" / "demo.json"))["headline"] == {"x": 1}
    assert not (tmp_path / "out" / "demo.png").exists()
    assert "matplotlib is not installed" in capsys.readouterr().err


def test_the_rounding_fingerprint_is_repeatable_and_tells_kernels_apart():
    """tests/_rounding.py's fingerprint: the same in a second process here, another with MKL on another code path."""
    import torch

    here = kernel_fingerprint()
    code = "import sys; sys.path.insert(0, 'tests'); from _rounding import kernel_fingerprint; print(kernel_fingerprint())"
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

    def elsewhere(**env):
        out = subprocess.run([sys.executable, "-c", code], cwd=root, capture_output=True, text=True, check=True,
                             env=dict(os.environ, OMP_NUM_THREADS=str(torch.get_num_threads()), **env))
        return out.stdout.strip()

    assert elsewhere() == here and len(here) == 16
    if torch.backends.mkl.is_available():  # MKL's SSE2-only path rounds matrix products differently
        assert elsewhere(MKL_CBWR="COMPATIBLE") != here
