"""The model oracle (verify.model_oracle) for each of GRPO's options and REINFORCE++'s and CISPO's settings,
and for compositions no row holds (REINFORCE++ with its KL as a k3 loss; verl's rloo x cispo x token-mean and
grpo x vanilla with the KL in the reward, as peers.from_verl composes them): on a batch the tiny model samples
(float64, ragged, rows cut at the budget, the sampler's entropies), the parameter gradient of the method's
objective equals the surrogate's with its coefficient, on-policy and with logp_old != logp; each setting's
coefficient scaled by 1.01 fails it."""

import dataclasses

import pytest
import torch

from unified_rl import verify
from unified_rl.methods import METHODS
from unified_rl.parts import compose
from unified_rl.peers import from_verl
from unified_rl.sampling import sample
from unified_rl.trainer import make_lab

SETTINGS = [("grpo", {"scale_rewards": "batch"}), ("grpo", {"scale_rewards": "none", "adv_eps": 1e-4}),
            ("grpo", {"clip_eps_high": 0.28, "delta": 1.05}), ("grpo", {"importance_sampling_level": "sequence"}),
            ("grpo", {"aggregation": "token-mean", "use_bias_correction_kl": True}),
            ("grpo", {"aggregation": "constant", "importance_sampling_level": "sequence",
                      "use_bias_correction_kl": True}),
            ("grpo", {"mask_truncated_completions": True, "aggregation": "group-token-mean"}),
            ("grpo", {"top_entropy_quantile": 0.3, "off_policy_mask_threshold": 0.01}),
            ("reinforce++", {"reinforce_baseline": "none"}), ("grpo", {"aggregation": "seq-mean-token-sum-norm"}),
            ("cispo", {"cispo_clip_eps": 0.2, "scale_rewards": "batch"}), ("gpg", {"gpg_count": "nonzero-reward"}),
            ("gdpo", {"multi_objective_aggregation": "sum_then_normalize"})]
COMPOSED = {  # id: (the registered slot it is checked in, the composition, settings)
    "reinforce++-k3-loss": ("reinforce++", lambda: compose("reinforce_plus_plus", "vanilla", "k3"),
                            {"reinforce_baseline": "none"}),
    "verl-rloo-cispo-token-mean": ("cispo", lambda: from_verl("rloo", "cispo", "token-mean")[0], {}),
    "verl-grpo-kl-in-reward": ("grpo", lambda: from_verl("grpo", "vanilla", use_kl_in_reward=True)[0], {}),
}


@pytest.fixture(scope="module")
def lab():
    lab = make_lab("tiny", seed=0)
    torch.manual_seed(0)
    with torch.no_grad():  # away from the near-uniform start: varied samples, some cut at the budget
        for p in lab.policy.parameters():
            p.add_(0.3 * torch.randn_like(p))
    return lab


def oracle(lab, name, settings, monkeypatch, scale=1.0, method=None):
    """The model oracle of METHODS[name] (or of `method` in its slot) with `settings`, on a batch sampled with a
    budget of 5 tokens."""
    seen = []

    def short(*args, **kwargs):  # a small budget: rows are cut, so mask_truncated_completions has rows to drop
        seen.append(sample(*args, **{**kwargs, "max_new_tokens": 5}))
        return seen[-1]
    monkeypatch.setattr(verify, "sample", short)
    m = METHODS[name] if method is None else method
    variant = dataclasses.replace(m, hparams=dataclasses.replace(m.hparams, **settings))
    if scale != 1.0:
        variant = dataclasses.replace(variant, coefficient=lambda step: scale * m.coefficient(step))
    monkeypatch.setitem(METHODS, name, variant)
    keys = [k for k in (name, f"{name}-clipped") if k in verify.ORACLE_KEYS]  # -clipped: off-policy methods only
    out = verify.model_oracle(lab.policy, lab.tokenizer, lab.rl_problems, methods=keys, relative=True)
    assert seen[0].truncated.any() and seen[0].ended.any()
    return out


@pytest.mark.parametrize("name, settings", SETTINGS, ids=lambda x: x if isinstance(x, str) else "-".join(map(str, x.values())))
def test_each_setting_passes_the_model_oracle(lab, name, settings, monkeypatch):
    diffs = oracle(lab, name, settings, monkeypatch)
    assert max(diffs.values()) < 1e-10, diffs


@pytest.mark.parametrize("case", list(COMPOSED))
def test_each_composition_passes_the_model_oracle(lab, case, monkeypatch):
    slot, made, settings = COMPOSED[case]
    m = made()
    assert m.name != slot and m.composition != METHODS[slot].composition
    diffs = oracle(lab, slot, settings, monkeypatch, method=m)
    assert max(diffs.values()) < 1e-10, diffs


def test_a_wrong_coefficient_fails_the_model_oracle(lab, monkeypatch):
    diffs = oracle(lab, "grpo", {"mask_truncated_completions": True, "top_entropy_quantile": 0.3}, monkeypatch, 1.01)
    assert min(diffs.values()) > 1e-4, diffs


def test_a_wrong_composition_fails_the_model_oracle(lab, monkeypatch):
    """verl's rloo x cispo's objective with the cispo row's coefficient (GRPO's advantage): the parts matter."""
    m = from_verl("rloo", "cispo", "token-mean")[0]
    wrong = dataclasses.replace(m, coefficient=METHODS["cispo"].composition.__class__(
        "grpo", "cispo", settings=m.hparams).coefficient)
    diffs = oracle(lab, "cispo", {}, monkeypatch, method=wrong)
    assert min(diffs.values()) > 1e-4, diffs
