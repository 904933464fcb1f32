"""The model oracle (verify.model_oracle) for each of GRPO's options and REINFORCE++'s and CISPO's settings:
on a batch the tiny model samples (float64, ragged, rows cut at the budget, the sampler's entropies), the
parameter gradient of the method's objective equals the surrogate's with its coefficient, on-policy and
with logp_old != logp; each setting's coefficient scaled by 1.01 fails it."""

import dataclasses

import pytest
import torch

from unified_rl import verify
from unified_rl.methods import METHODS
from unified_rl.sampling import sample
from unified_rl.trainer import make_lab

SETTINGS = [("grpo", {"scale_rewards": "batch"}), ("grpo", {"scale_rewards": "none", "adv_eps": 1e-4}),
            ("grpo", {"clip_eps_high": 0.28, "delta": 1.05}), ("grpo", {"importance_sampling_level": "sequence"}),
            ("grpo", {"aggregation": "batch-token-mean", "use_bias_correction_kl": True}),
            ("grpo", {"aggregation": "constant", "importance_sampling_level": "sequence",
                      "use_bias_correction_kl": True}),
            ("grpo", {"mask_truncated_completions": True, "aggregation": "token-mean"}),
            ("grpo", {"top_entropy_quantile": 0.3, "off_policy_mask_threshold": 0.01}),
            ("reinforce++", {"kl_in": "loss", "reinforce_baseline": "none"}),
            ("cispo", {"cispo_clip_eps": 0.2, "scale_rewards": "batch"}), ("gpg", {"gpg_count": "nonzero-reward"}),
            ("gdpo", {"multi_objective_aggregation": "sum_then_normalize"})]


@pytest.fixture(scope="module")
def lab():
    lab = make_lab("tiny", seed=0)
    torch.manual_seed(0)
    with torch.no_grad():  # away from the near-uniform start: varied samples, some cut at the budget
        for p in lab.policy.parameters():
            p.add_(0.3 * torch.randn_like(p))
    return lab


def oracle(lab, name, settings, monkeypatch, scale=1.0):
    """The model oracle of METHODS[name] with `settings`, on a batch sampled with a budget of 5 tokens."""
    seen = []

    def short(*args, **kwargs):  # a small budget: rows are cut, so mask_truncated_completions has rows to drop
        seen.append(sample(*args, **{**kwargs, "max_new_tokens": 5}))
        return seen[-1]
    monkeypatch.setattr(verify, "sample", short)
    m = METHODS[name]
    variant = dataclasses.replace(m, hparams=dataclasses.replace(m.hparams, **settings))
    if scale != 1.0:
        variant = dataclasses.replace(variant, coefficient=lambda step: scale * m.coefficient(step))
    monkeypatch.setitem(METHODS, name, variant)
    out = verify.model_oracle(lab.policy, lab.tokenizer, lab.rl_problems, methods=[name, f"{name}-clipped"],
                              relative=True)
    assert seen[0].truncated.any() and seen[0].ended.any()
    return out


@pytest.mark.parametrize("name, settings", SETTINGS, ids=lambda x: x if isinstance(x, str) else "-".join(map(str, x.values())))
def test_each_setting_passes_the_model_oracle(lab, name, settings, monkeypatch):
    diffs = oracle(lab, name, settings, monkeypatch)
    assert max(diffs.values()) < 1e-10, diffs


def test_a_wrong_coefficient_fails_the_model_oracle(lab, monkeypatch):
    diffs = oracle(lab, "grpo", {"mask_truncated_completions": True, "top_entropy_quantile": 0.3}, monkeypatch, 1.01)
    assert min(diffs.values()) > 1e-4, diffs
