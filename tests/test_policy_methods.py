"""The policy family's lab parts: DAPO's dynamic sampling and overlong reward, ReMax's greedy pairs,
and the methods' oracle on the SFT-sized model (the tiny-preset runs are in test_train.py)."""
import doctest

import pytest
import torch

from unified_rl.rewards import policy_gradient as rewards_policy
from unified_rl.data import DynamicSampling, GreedyBaselinePairs
from unified_rl.methods import METHODS, gc_of
from unified_rl.methods import POLICY_GRADIENT as POLICY
from unified_rl.parts import Composition
from unified_rl.rewards import rule_reward
from unified_rl.rewards import OverlongReward, overlong_penalty
from unified_rl.sampling import RESPONSE_SLACK, sample
from unified_rl.trainer import make_lab


@pytest.fixture(scope="module")
def lab():
    return make_lab("tiny", seed=0)


class Coin:
    """A reward that is right at random: groups of mixed and of equal answers both occur."""

    def __init__(self, p=0.3):
        self.g, self.p = torch.Generator().manual_seed(0), p

    def __call__(self, rollout):
        return (torch.rand(len(rollout), generator=self.g) < self.p).float()


def test_dynamic_sampling_keeps_only_groups_with_signal(lab):
    src = DynamicSampling(lab, reward=Coin())
    cfg = lab.preset.rl
    batch = src.next_batch()
    G = cfg.group_size
    assert batch.group_size == G and len(batch) == cfg.prompts_per_step * G
    assert all(len(set(batch.problems[g * G:(g + 1) * G])) == 1 for g in range(len(batch) // G))
    assert src.drawn[-1] >= len(batch) and src.drawn[-1] % (cfg.prompts_per_step * G) == 0


def test_dynamic_sampling_drops_all_equal_groups_and_falls_back(lab):
    src = DynamicSampling(lab, reward=Coin(p=0.0))  # every group all wrong: nothing to keep
    batch = src.next_batch()
    assert len(batch) == lab.preset.rl.prompts_per_step * lab.preset.rl.group_size
    assert src.drawn[-1] == DynamicSampling.max_draws * len(batch)  # it tried, then gave the last batch


def test_dynamic_sampling_filter_on_accuracy(lab, monkeypatch):
    """Rewards of a real batch: the kept groups have at least one right and one wrong answer."""
    flips = Coin(0.5)
    src = DynamicSampling(lab, reward=flips)
    seen = []
    monkeypatch.setattr(src, "reward", lambda r: seen.append(flips(r)) or seen[-1])
    batch = src.next_batch()
    assert len(batch) > 0 and seen


def test_greedy_pairs_layout(lab):
    torch.manual_seed(0)
    src = GreedyBaselinePairs(lab)
    batch = src.next_batch()
    cfg = lab.preset.rl
    assert batch.group_size == 2 and len(batch) == cfg.prompts_per_step * cfg.group_size  # equal budget
    assert batch.problems[0::2] == batch.problems[1::2]
    greedy = sample(lab.policy, lab.tokenizer, batch.problems[1::2], greedy=True)
    assert greedy.texts == batch.texts[1::2]  # every odd row is the greedy answer


def test_overlong_penalty_and_reward(lab):
    assert doctest.testmod(rewards_policy).failed == 0
    assert torch.equal(overlong_penalty(torch.tensor([3, 13]), 17, 4), torch.zeros(2))
    batch = sample(lab.policy, lab.tokenizer, lab.rl_problems[:8], group_size=2)
    reward = OverlongReward()
    budget = max(len(p.solution) for p in batch.problems) + 1 + RESPONSE_SLACK
    assert reward.budget(batch) == budget
    lengths = batch.mask.sum(-1)
    want = rule_reward(batch.problems, batch.texts) + overlong_penalty(lengths, budget, RESPONSE_SLACK)
    assert torch.allclose(reward(batch), want)
    with pytest.raises(ValueError, match="cache_len"):
        overlong_penalty(torch.tensor([1]), 4, 4)


def test_policy_methods_are_registered_with_paper_and_objective():
    """Every policy-gradient method cites its paper by arXiv number, declares the objective its coefficient is
    checked against, and is a composition of parts."""
    for m in POLICY:
        assert METHODS[m.name] is m and "arXiv" in m.paper and m.objective is not None, m.name
        assert m.composition is not None and m.composition.settings is m.hparams, m.name


def _reads_logp_old(m, seed=0):
    """Whether the coefficient of Method m changes when logp_old moves away from logp (measured, not declared)."""
    g = torch.Generator().manual_seed(seed)
    B, T = 8, 5
    mask = torch.ones(B, T, dtype=torch.float64)
    mask[1::2, 3:] = 0  # ragged rows
    logp = -torch.rand(B, T, generator=g, dtype=torch.float64)
    scores = torch.tensor([1.0, 0.0, 0.5, 0.25, 0.0, 1.0, 0.75, 0.5], dtype=torch.float64)  # distinct in each group
    if m.composition.advantage == "indicator":
        scores = (scores > 0.4).double()
    if m.composition.advantage == "gdpo":
        scores = torch.stack([scores, torch.rand(B, generator=g, dtype=torch.float64)], -1)
    kw = dict(logp_ref=logp - 0.3, scores=scores, group_size=2 if m.composition.advantage == "remax" else 4,
              adv=torch.randn(B, T, generator=g, dtype=torch.float64) * mask)
    on = gc_of(m, logp, mask, logp_old=logp, **kw)
    off = gc_of(m, logp, mask, logp_old=logp + 0.5 * torch.randn(B, T, generator=g, dtype=torch.float64), **kw)
    assert (on != 0).any(), m.name  # a coefficient of 0 could not show what it reads
    return not torch.equal(on, off)


def test_off_policy_is_whether_the_coefficient_reads_logp_old():
    """`off_policy` declares that some part of the method reads logp_old (its ratio to the sampler), so the model
    oracle also checks it with logp_old != logp under the key NAME-clipped. Measured on every composition: the flag
    is True exactly where moving logp_old moves the coefficient. GPG is REINFORCE (A log pi, no ratio): it reads none,
    is not off-policy, and its one oracle key takes both cases (verify.model_oracle)."""
    declared = {n: m.off_policy for n, m in METHODS.items() if isinstance(m.composition, Composition)}
    measured = {n: _reads_logp_old(METHODS[n]) for n in declared}
    assert declared == measured, {n: (declared[n], measured[n]) for n in declared if declared[n] != measured[n]}
    assert not declared["gpg"] and not declared["sft"] and declared["grpo"] and declared["dro"]


def test_oracle_on_the_sft_model():
    """The policy family's coefficients through the trainer's wiring on the cpu preset's SFT model."""
    from unified_rl.cache import sft_checkpoint
    from unified_rl.presets import get_preset
    from unified_rl.verify import model_oracle
    lab = make_lab("cpu", init=sft_checkpoint(get_preset("cpu"), progress=False))
    names = [m.name for m in POLICY]
    clipped = [n + "-clipped" for n in names if METHODS[n].off_policy]  # GPG's one key holds both cases
    diffs = model_oracle(lab.policy, lab.tokenizer, lab.test_problems, methods=names + clipped)
    assert max(diffs.values()) < 1e-10, diffs
