"""The real-model experiment end to end on a tiny random Llama chat model (seconds), its arguments,
and on-policy DPO's pair source (pairs of the current policy, not of the frozen start)."""

import dataclasses
import json
import os

import pytest
import torch
from _tiny_llm import save_tiny

from unified_rl import words
from unified_rl.data import PolicyPairs, PreferencePairs, core
from unified_rl.experiments import EXPERIMENTS, real_model as RM
from unified_rl.lab import make_lab


@pytest.fixture(scope="module")
def tiny_folder(tmp_path_factory):
    return str(save_tiny("llama", tmp_path_factory.mktemp("tiny") / "llama"))


@pytest.fixture
def coin_parser(monkeypatch):
    """A random model's replies are never right: call about half of them right by their length's
    parity, so on-policy DPO finds pairs and GRPO a signal (the rule is not under test here)."""
    monkeypatch.setattr(words.WordProblem, "parse", lambda self, text: self.answer if len(text) % 2 else None)


def test_tiny_run_writes_before_and_after_of_each_arm(tmp_path, tiny_folder, coin_parser):
    result = RM.run("tiny", str(tmp_path), seeds=1, progress=False, model=tiny_folder)
    with open(os.path.join(tmp_path, "real-model.json")) as f:
        on_disk = json.load(f)
    assert EXPERIMENTS["real-model"] is RM.run and "provenance" in on_disk
    assert os.path.exists(os.path.join(tmp_path, "real-model.png"))
    assert on_disk["arms"] == result["arms"] == ["grpo", "dpo-on-policy"] and on_disk["k"] == [1, 2]
    seed = on_disk["per_seed"][0]
    for m in [seed["before"], *seed["after"].values()]:
        assert 0 <= m["greedy"] <= 1 and m["reply_chars"] >= 0 and len(m["examples"]) == 2
        shares = m["strict_share"] + m["lenient_only_share"] + m["unparsed_share"]
        assert shares == pytest.approx(1.0)
        assert len(m["pass_at_k"]) == len(m["maj_at_k"]) == 2 and len(m["hits"]) == 2
    for arm in RM.ARMS:
        assert len(seed["curves"][arm]) == 1  # the tiny budget trains one step per arm
        for key in RM.METRICS:
            c = on_disk["change"][arm][key]
            assert c["verdict"].startswith("no verdict from 1 seed")  # one seed decides nothing
            before, after = RM._value(seed["before"], key), RM._value(seed["after"][arm], key)
            assert c["per_seed"] == [pytest.approx(after - before)]
    head, rows = RM.table(on_disk)
    assert head == ["metric", "before", "grpo", "dpo-on-policy"] and rows[0][1] == seed["before"]["greedy"]


@pytest.mark.parametrize("kw, text", [(dict(grpo_steps=0), "grpo_steps"), (dict(k_problems=9), "k_problems"),
                                      (dict(colour="red"), "unknown budget field")])
def test_bad_budgets_fail_before_any_model_loads(tmp_path, kw, text):
    with pytest.raises(ValueError, match=text):
        RM.run("tiny", str(tmp_path), seeds=1, progress=False, model="/no/such/model", **kw)


def test_parse_shares_tell_strict_from_lenient_from_none():
    s = RM.parse_shares(["so #### 7", "it is \\boxed{3}", "the answer is 12", "no idea"])
    assert s == {"strict_share": 0.5, "lenient_only_share": 0.25, "unparsed_share": 0.25}
    with pytest.raises(ValueError):
        RM.parse_shares([])


def _lab(folder):
    p = RM.world(dataclasses.replace(RM.BUDGETS["tiny"], model=folder))
    return make_lab(p.with_(rl={"frozen_samples": 3}), seed=0)


@pytest.mark.parametrize("source, model, samples", [(PolicyPairs, "policy", "group_size"),
                                                    (PreferencePairs, "ref", "frozen_samples")])
def test_pairs_come_from_the_policy_on_policy_and_from_the_start_offline(source, model, samples, tiny_folder,
                                                                         coin_parser, monkeypatch):
    lab = _lab(tiny_folder)
    with torch.no_grad():  # the policy has moved away from its reference
        for p in lab.policy.parameters():
            p.add_(0.05 * torch.randn_like(p))
    seen = []
    real = core.sample

    def spy(m, tokenizer, problems, group_size=1, **kw):
        seen.append((m, group_size))
        return real(m, tokenizer, problems, group_size=group_size, **kw)

    monkeypatch.setattr(core, "sample", spy)
    batch = source(lab).next_batch()
    assert seen and all(m is getattr(lab, model) for m, _ in seen)
    assert all(g == getattr(lab.preset.rl, samples) for _, g in seen)
    B = len(batch) // 2  # B chosen rows, then their B rejected partners: right, then wrong
    assert B >= 1 and all(p.parse(t) == p.answer for p, t in zip(batch.problems[:B], batch.texts[:B]))
    assert all(p.parse(t) != p.answer for p, t in zip(batch.problems[B:], batch.texts[B:]))
    assert [p.prompt for p in batch.problems[:B]] == [p.prompt for p in batch.problems[B:]]
