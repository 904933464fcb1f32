"""Every method end to end at a tiny budget (seconds), the model-level oracle on a sampled batch,
checkpoints that reload and resume, and the CLI."""

import dataclasses
import json
import os
import subprocess
import sys

import pytest
import torch

from unified_rl.data import PreferencePairs
from unified_rl.methods import METHODS
from unified_rl.models import load_policy
from unified_rl.trainer import make_lab, train
from unified_rl.verify import METHODS as ORACLE_METHODS, model_oracle


@pytest.fixture(autouse=True)
def private_cache(tmp_path_factory, monkeypatch):
    monkeypatch.setenv("UNIFIED_RL_CACHE", str(tmp_path_factory.getbasetemp() / "cache"))


def tiny_method(name):
    """The method as registered, except that DPO's pairs are built from coin-flip rewards: the tiny
    preset's untrained model answers nothing right, and a pair needs one right and one wrong sample."""
    if name != "dpo":
        return name
    coin = lambda r: torch.randint(0, 2, (len(r),)).float()
    return dataclasses.replace(METHODS["dpo"], data_source=lambda lab: PreferencePairs(lab, coin))


@pytest.mark.parametrize("method", list(METHODS))
def test_every_method_runs_and_logs(method):
    steps = None if method == "sft" else 2  # explicit: DPO's own default budget would override the preset's
    run = train(tiny_method(method), preset="tiny", steps=steps, progress=False)
    assert len(run.metrics) == (3 if method == "sft" else 2)
    last = run.metrics[-1]
    for key in ("coef_mean", "coef_std", "seconds", "eval_accuracy"):
        assert key in last and last[key] == last[key]  # present and not NaN
    if method != "sft":
        assert "kl" in last and "reward" in last and "accuracy" in last
    if method == "ppo":
        assert "value_loss" in last
    assert all(torch.isfinite(p).all() for p in run.policy.parameters())


def test_model_oracle_on_a_sampled_batch():
    lab = make_lab("tiny")
    diffs = model_oracle(lab.policy, lab.tokenizer, lab.rl_problems)
    assert set(diffs) == set(ORACLE_METHODS)
    assert max(diffs.values()) < 1e-10, diffs


def test_model_oracle_catches_a_wrong_coefficient(monkeypatch):
    from unified_rl import verify
    cases = verify._cases
    def scaled(*a, **k):  # every coefficient 1 % too large
        return {n: (J, (lambda c: lambda lp: 1.01 * c(lp))(c)) for n, (J, c) in cases(*a, **k).items()}
    monkeypatch.setattr(verify, "_cases", scaled)
    lab = make_lab("tiny")
    diffs = model_oracle(lab.policy, lab.tokenizer, lab.rl_problems)
    assert min(diffs.values()) > 1e-6, diffs


def test_checkpoint_reloads_and_resumes(tmp_path):
    out = str(tmp_path / "run")
    run = train("grpo", preset="tiny", out=out, progress=False)
    ckpt = os.path.join(out, "checkpoint")
    summary = json.load(open(os.path.join(out, "summary.json")))
    assert summary["method"] == "grpo" and summary["steps"] == 2
    assert len(open(os.path.join(out, "metrics.jsonl")).read().splitlines()) == 2
    reloaded = load_policy(ckpt)
    ids = torch.tensor([[1, 5, 6, 7]])
    with torch.no_grad():
        assert torch.allclose(reloaded(ids).logits, run.policy.cpu()(ids).logits, atol=1e-6)
    more = train("grpo", preset="tiny", steps=4, out=out, resume=True, progress=False)
    assert [m["step"] for m in more.metrics] == [3, 4]


def test_bad_arguments():
    with pytest.raises(ValueError, match="unknown method"):
        train("ppo2", preset="tiny")
    with pytest.raises(ValueError, match="unknown preset"):
        train("sft", preset="tpu")


def cli(*args, env=None):
    return subprocess.run([sys.executable, "-m", "unified_rl", *args], capture_output=True, text=True,
                          env={**os.environ, **(env or {})}, timeout=300)


def test_cli_help_and_one_line_errors():
    assert "python -m unified_rl train" in cli("--help").stdout
    listing = cli("methods").stdout.splitlines()
    assert len(listing) == 7 and "dpo           data=PreferencePairs " in listing[3]
    assert "<lambda>" not in "".join(listing)
    bad = cli("train", "sftt", "--out", "x")
    assert bad.returncode == 2 and len(bad.stderr.strip().splitlines()) == 1 and "invalid choice" in bad.stderr
    bad = cli("evaluate", "no/such/dir", "--out", "x.json")
    assert bad.returncode != 0 and "no checkpoint" in bad.stderr and "Traceback" not in bad.stderr
    bad = cli("evaluate", "x", "--k", "1,a", "--out", "y")
    assert bad.returncode == 2 and len(bad.stderr.strip().splitlines()) == 1


def test_cli_train_and_evaluate(tmp_path):
    out = tmp_path / "sft"
    r = cli("train", "sft", "--preset", "tiny", "--out", str(out), "--quiet")
    assert r.returncode == 0, r.stderr
    summary = json.load(open(out / "summary.json"))
    for key in ("method", "preset", "steps", "seconds", "device", "eval"):
        assert key in summary
    assert set(summary["eval"]) >= {"accuracy", "pass_at_k", "maj_at_k"}
    r = cli("evaluate", str(out / "checkpoint"), "--preset", "tiny", "--k", "1,2,4", "--out", str(tmp_path / "e.json"))
    assert r.returncode == 0, r.stderr
    ev = json.load(open(tmp_path / "e.json"))
    assert list(ev["pass_at_k"]) == ["1", "2", "4"]
    assert all(0 <= v <= 1 for v in ev["maj_at_k"].values())
