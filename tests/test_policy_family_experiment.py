"""The policy-family comparison: a tiny run end to end, its arguments, and (once shipped) the numbers
notebook 10 quotes, pinned to the shipped result."""
import json
import math
import os

import pytest

from unified_rl.experiments import EXPERIMENTS, policy_family


def test_tiny_run_writes_every_arm(tmp_path):
    result = policy_family.run("tiny", str(tmp_path), seeds=1, progress=False)
    with open(os.path.join(tmp_path, "policy-family.json")) as f:
        on_disk = json.load(f)
    labels = ["grpo", "dapo", "remax", "dr-grpo (token-mean)"]
    assert on_disk["arms"] == result["arms"] == labels
    assert os.path.exists(os.path.join(tmp_path, "policy-family.png"))
    for label in labels:
        row = result["table"][label]
        assert math.isfinite(row["accuracy"]["mean"]) and len(result["response_len"][label]) == 2
        assert 0 <= row["zero_gc_frac"]["mean"] <= 1
    assert result["table"]["dapo"]["samples_per_step"]["mean"] >= result["rows_per_step"]
    assert "provenance" in on_disk and EXPERIMENTS["policy-family"] is policy_family.run


@pytest.mark.parametrize("kw, words", [(dict(methods=("grpo", "trpo")), "unknown method"),
                                       (dict(rl_steps=0), "rl_steps"), (dict(colour="red"), "unknown budget field")])
def test_bad_budgets_fail_before_training(tmp_path, kw, words):
    with pytest.raises(ValueError, match=words):
        policy_family.run("tiny", str(tmp_path), seeds=1, progress=False, **kw)
