"""A run killed after k steps and resumed ends bit for bit where an uninterrupted run ends: the same
policy, reference, critic and metrics (CPU, tiny preset), for online, PPO (with its critic) and the
frozen-sampler methods."""

import dataclasses
import json
import os

import pytest
import torch

from _killed import killed
from unified_rl.data import PreferencePairs
from unified_rl.methods import METHODS
from unified_rl.trainer import train


def coin(rollout):
    """A reward that is right half the time, drawn from torch's global RNG: the tiny preset's model
    answers nothing right, and a resume must restore that RNG for the coins to land the same."""
    return torch.randint(0, 2, (len(rollout),)).float()


def with_coins(name):
    m = dataclasses.replace(METHODS[name], reward=coin)
    if name == "dpo":
        m = dataclasses.replace(m, data_source=lambda lab: PreferencePairs(lab, coin))
    return m


SETTINGS = {"grpo": {}, "ppo": {"epochs": 2}, "dpo": {}, "rft": {}}


def flat(module):
    return torch.cat([p.detach().flatten() for p in module.state_dict().values()])


def rows(metrics):
    return [{k: v for k, v in r.items() if k != "seconds"} for r in metrics]


@pytest.mark.parametrize("name", list(SETTINGS))
def test_resumed_run_is_bit_for_bit_the_uninterrupted_one(name, tmp_path):
    kw = dict(preset="tiny", steps=4, seed=3, progress=False, eval_every=2, save_every=1, **SETTINGS[name])
    full = train(with_coins(name), out=str(tmp_path / "full"), **kw)

    cut = str(tmp_path / "cut")  # a kill right after the save of step 2
    assert isinstance(killed(lambda: train(with_coins(name), out=cut, **kw), after=2), KeyboardInterrupt)
    assert len(open(os.path.join(cut, "metrics.jsonl")).readlines()) == 2
    resumed = train(with_coins(name), out=cut, resume=True, **kw)

    assert (flat(resumed.policy) - flat(full.policy)).abs().max().item() == 0.0
    assert torch.equal(flat(resumed.lab.ref), flat(full.lab.ref))  # pi_ref is still the starting model
    if full.state.extra is not None:  # PPO's critic came back too
        assert torch.equal(flat(resumed.state.extra.model), flat(full.state.extra.model))
    assert rows(resumed.metrics) == rows(full.metrics) and [r["step"] for r in resumed.metrics] == [1, 2, 3, 4]
    saved = [json.loads(line) for line in open(os.path.join(cut, "metrics.jsonl"))]
    assert rows(saved) == rows(full.metrics)
    summary = json.load(open(os.path.join(cut, "summary.json")))
    assert summary["init"] == full.summary["init"] and summary["init"] is not None
    if "kl" in full.metrics[-1]:
        assert resumed.metrics[-1]["kl"] == full.metrics[-1]["kl"]


def test_resume_needs_a_saved_state(tmp_path):
    with pytest.raises(ValueError, match="holds no saved run state"):
        train("sft", preset="tiny", out=str(tmp_path / "never-ran"), resume=True, progress=False)
    with pytest.raises(ValueError, match="give out, and no lab"):
        train("sft", preset="tiny", resume=True, progress=False)


def test_resume_refuses_other_settings(tmp_path):
    out = str(tmp_path / "run")
    train("sft", preset="tiny", steps=1, out=out, progress=False)
    with pytest.raises(ValueError, match="seed"):
        train("sft", preset="tiny", steps=2, seed=1, out=out, resume=True, progress=False)
    with pytest.raises(ValueError, match="lr"):
        train("sft", preset="tiny", steps=2, out=out, resume=True, progress=False, lr=1.0)
    more = train("sft", preset="tiny", steps=2, out=out, resume=True, progress=False)
    assert [r["step"] for r in more.metrics] == [1, 2]
