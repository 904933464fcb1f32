"""One whole update of GRPO with each of its options (and of REINFORCE++ with the KL as a k3 loss, and CISPO,
with theirs) against a plain reference written from the loss TRL and verl compute, through the package's real
training loop.

The machinery is tests/test_reference_step.py's (a fixed batch drawn from the method's data source, the
gradient read just before the loop clips it, the first update on-policy and the second off-policy); the
references here read the settings from `c.hp` and write each option as the peers' loss does: A from the
rewards with the chosen scale, the ratio per token or per sequence, the two-sided clip, the masks, the
KL with or without the ratio, the aggregation (verl's token-mean: the batch's; group-token-mean: each
question's). REINFORCE++ with its KL as a k3 loss is no row: it is composed of its parts (parts.compose) and
trained as a row is. A negative control plants a wrong option mapping.
"""

import copy
from types import SimpleNamespace

import pytest
import torch

from test_reference_step import batch_for, lab_of, logp_of, overrides_for, package_updates, rel_diff, scores_for
from unified_rl import wiring
from unified_rl.methods import METHODS
from unified_rl.parts import compose

TOL = 1e-10


def advantage(c, scale):
    """(B,) r - group mean over the group's std + eps, the batch's, or 1 (TRL's scale_rewards); 0 in an equal group."""
    r, G, eps = c.r, c.G, c.hp.adv_eps
    out = []
    for g in range(len(r) // G):
        x = r[g * G:(g + 1) * G]
        if x.max() == x.min():
            out += [0.0] * G
            continue
        d = x - x.mean()
        out += (d / (x.std() + eps) if scale == "group" else d / (r.std() + eps) if scale == "batch" else d).tolist()
    return torch.tensor(out, dtype=torch.float64)


def aggregate(terms, m, c):
    hp, B = c.hp, len(m)
    if hp.aggregation == "seq-mean-token-mean":
        return ((terms * m).sum(-1) / m.sum(-1).clamp(min=1)).mean()
    if hp.aggregation == "token-mean":  # the batch's (verl's token-mean, TRL's dapo)
        return (terms * m).sum() / m.sum().clamp(min=1)
    if hp.aggregation == "group-token-mean":  # each question's tokens, then the mean over questions (DAPO §3)
        G = c.G
        return torch.stack([(terms[g:g + G] * m[g:g + G]).sum() / m[g:g + G].sum().clamp(min=1)
                            for g in range(0, B, G)]).mean()
    assert hp.aggregation == "seq-mean-token-sum-norm", hp.aggregation  # Dr. GRPO's L (alias constant)
    return (terms * m).sum() / (B * hp.max_len)


def ref_grpo_options(c):
    """TRL's _compute_loss written out: the options of GRPOConfig on eq 19's clipped objective."""
    hp, m = c.hp, c.m.clone()
    if hp.mask_truncated_completions:
        m = m * (~c.batch.truncated).double()[:, None]
    A = advantage(c, hp.scale_rewards)[:, None]
    log_ratio = c.lp - c.old
    if hp.importance_sampling_level == "sequence":
        rho = torch.exp((log_ratio * m).sum(-1, keepdim=True) / m.sum(-1, keepdim=True).clamp(min=1))
    else:
        rho = torch.exp(log_ratio)
    eps = c.cfg.clip_eps
    high = eps if hp.clip_eps_high is None else hp.clip_eps_high
    first = (rho if hp.delta is None else torch.clamp(rho, max=hp.delta)) * A
    terms = torch.min(first, torch.clamp(rho, 1 - eps, 1 + high) * A) * torch.ones_like(m)
    if hp.off_policy_mask_threshold is not None:
        kl = ((c.old - c.lp.detach()) * m).sum(-1, keepdim=True) / m.sum(-1, keepdim=True).clamp(min=1)
        terms = terms * ((A >= 0) | (kl <= hp.off_policy_mask_threshold)).double()
    if hp.top_entropy_quantile < 1:
        ent = c.batch.entropy.double()
        threshold = torch.quantile(ent[m > 0], 1 - hp.top_entropy_quantile)
        terms = terms * ((ent >= threshold) & (m > 0)).double()
    x = c.ref - c.lp
    k3 = torch.exp(x) - x - 1
    terms = terms - c.cfg.beta * (rho * k3 if hp.use_bias_correction_kl else k3)
    return -aggregate(terms, m, c)


def ref_reinforce_pp_options(c):
    """REINFORCE++ with the KL as a k3 loss (verl's use_kl_loss) and with or without the group baseline."""
    hp, m, G = c.hp, c.m, c.G
    r = c.r.clone()
    if hp.reinforce_baseline == "group":
        r = torch.cat([r[g:g + G] - r[g:g + G].mean() for g in range(0, len(r), G)])
    ret = r[:, None] * m
    on = m > 0
    A = (ret - ret[on].mean()) / (ret[on].std() + 1e-6)
    eps = c.cfg.clip_eps
    ratio = torch.exp(c.lp - c.old)
    terms = torch.min(ratio * A, torch.clamp(ratio, 1 - eps, 1 + eps) * A)
    x = c.ref - c.lp
    terms = terms - c.cfg.beta * (torch.exp(x) - x - 1)
    return -((terms * m).sum(-1) / m.sum(-1)).mean()


def ref_cispo_options(c):
    """CISPO with verl's lower bound and a batch-scaled A."""
    hp, m = c.hp, c.m
    A = advantage(c, hp.scale_rewards)[:, None]
    low = -float("inf") if hp.cispo_clip_eps is None else 1 - hp.cispo_clip_eps
    w = torch.clamp(torch.exp(c.lp - c.old), low, 1 + hp.cispo_clip_eps_high).detach()
    return -aggregate(w * A * c.lp, m, c)


CASES = {  # id: (method, settings, reference)
    "scale-batch": ("grpo", {"scale_rewards": "batch"}, ref_grpo_options),
    "scale-none-constant": ("grpo", {"scale_rewards": "none", "aggregation": "constant", "max_len": 9.0},
                            ref_grpo_options),
    "clip-higher-delta": ("grpo", {"clip_eps_high": 0.28, "delta": 1.05}, ref_grpo_options),
    "sequence-kl-ratio": ("grpo", {"importance_sampling_level": "sequence", "use_bias_correction_kl": True},
                          ref_grpo_options),
    "token-mean-kl-ratio": ("grpo", {"aggregation": "token-mean", "use_bias_correction_kl": True},
                            ref_grpo_options),
    "group-token-mean-truncated": ("grpo", {"aggregation": "group-token-mean", "mask_truncated_completions": True},
                                   ref_grpo_options),
    "entropy-off-policy-mask": ("grpo", {"top_entropy_quantile": 0.4, "off_policy_mask_threshold": 1e-3,
                                         "adv_eps": 1e-4}, ref_grpo_options),
    "reinforce++-kl-loss": ("reinforce++-k3-loss", {}, ref_reinforce_pp_options),
    "reinforce++-no-baseline": ("reinforce++-k3-loss", {"reinforce_baseline": "none"}, ref_reinforce_pp_options),
    "cispo-verl": ("cispo", {"cispo_clip_eps": 0.2, "scale_rewards": "batch", "aggregation": "token-mean"},
                   ref_cispo_options),
}
COMPOSED = {"reinforce++-k3-loss": dict(advantage="reinforce_plus_plus", policy="vanilla", kl="k3",
                                        name="reinforce++-k3-loss")}
"""Compositions no row holds, trained under their name for the length of a test."""


def compare(name, settings, reference, monkeypatch, reference_settings=None):
    if name in COMPOSED:  # the reference step's machinery looks a method up by name
        monkeypatch.setitem(METHODS, name, compose(**COMPOSED[name]))
    gen = torch.Generator().manual_seed(0)
    lab = lab_of(0)
    batch = batch_for(name, lab, gen)
    scores = scores_for(len(batch), batch.group_size, name, gen)
    over = {**overrides_for(name), **settings}
    updates, _ = package_updates(name, lab, batch, scores, monkeypatch, overrides=over)
    preset, hp = wiring.configure(METHODS[name], lab.preset, {**over, **(reference_settings or {})})
    first = copy.deepcopy(lab.policy)
    first.load_state_dict(updates[0].policy)
    with torch.no_grad():
        old, ref = logp_of(first, batch), logp_of(lab.ref, batch)
    diffs = []
    for u in updates:
        model = copy.deepcopy(lab.policy)
        model.load_state_dict(u.policy)
        c = SimpleNamespace(lp=logp_of(model, batch), old=old, ref=ref, m=batch.mask, r=scores, cfg=preset.rl,
                            hp=hp, G=batch.group_size, batch=batch)
        names, params = zip(*model.named_parameters())
        want = dict(zip(names, torch.autograd.grad(reference(c), params, allow_unused=True)))
        diffs.append(rel_diff(u.grad, want))
    return diffs, batch


@pytest.mark.parametrize("case", list(CASES))
def test_one_update_with_the_option_equals_the_reference(case, monkeypatch):
    name, settings, reference = CASES[case]
    diffs, batch = compare(name, settings, reference, monkeypatch)
    assert len(diffs) == 2 and max(diffs) < TOL, (case, diffs)
    if settings.get("mask_truncated_completions"):
        assert batch.truncated.any() and batch.ended.any()  # the option had rows to drop


@pytest.mark.parametrize("case, wrong", [("clip-higher-delta", {"delta": None}),
                                         ("group-token-mean-truncated", {"mask_truncated_completions": False}),
                                         ("token-mean-kl-ratio", {"aggregation": "group-token-mean"}),
                                         ("sequence-kl-ratio", {"use_bias_correction_kl": False}),
                                         ("reinforce++-no-baseline", {"reinforce_baseline": "group"})])
def test_a_reference_with_another_setting_differs(case, wrong, monkeypatch):
    name, settings, reference = CASES[case]
    diffs, _ = compare(name, settings, reference, monkeypatch, reference_settings=wrong)
    assert max(diffs) > 1e-6, (case, diffs)
