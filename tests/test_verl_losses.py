"""verl's advantage estimators, policy losses and aggregations against the package, through `peers.from_verl`.

verl is not installable here. The REFERENCE below is written from verl's published formulas
(verl/trainer/ppo/core_algos.py at commit b178a3cd56f58b2d502255daba591e92833930a7: the estimators grpo,
gpg, opo, grpo_passk, rloo, remax, reinforce_plus_plus(_baseline); the policy losses vanilla with its dual clip,
gspo, sapo, cispo, gpg, geo_mean, clip_cov, kl_cov; agg_loss; kl_penalty in the loss and, through
ray_trainer.apply_kl_penalty, in the reward), not imported from verl: each is a plain loss over the log-probs,
differentiated by autograd, on a ragged float64 batch on- and off-policy. The package's side is the coefficient
of what from_verl returns (a METHODS row, or the composition of parts where no row is that product) with the
settings it maps verl's config to, through eq 5's surrogate. Products no row holds (rloo x cispo, gpg x vanilla,
opo x gspo, ...) are cases like the rows. Where verl's arithmetic differs by a constant of its code the
tolerance says which (1e-8 added to each response's token count in its seq-mean modes and GMPO; REINFORCE++'s
whitening by sqrt(var + 1e-8) where the package divides by std + eps). Each family has a negative control.
"""

import dataclasses
import re

import pytest
import torch

from unified_rl import wiring
from unified_rl.methods import METHODS, get_method
from unified_rl.paradigm import Method, step_from_tensors, surrogate_loss
from unified_rl.parts import AGGREGATIONS, POLICY_TERMS, compose
from unified_rl.peers import from_verl
from unified_rl.presets import get_preset
from unified_rl.trainer import make_lab, train

G, GROUPS, T = 4, 3, 7
EXACT, PLUS_1E8, WHITEN = 1e-10, 1e-6, 1e-4  # relative to the largest gradient entry


def batch(seed=0, off_policy=True):
    g = torch.Generator().manual_seed(seed)
    B = G * GROUPS
    lengths = torch.tensor([2, 7, 1, 5, 4, 7, 3, 6, 7, 2, 5, 4])
    mask = (torch.arange(T)[None] < lengths[:, None]).double()
    logp = -2 * torch.rand(B, T, generator=g, dtype=torch.float64) * mask
    old = logp + (0.3 * torch.randn(B, T, generator=g, dtype=torch.float64) * mask if off_policy else 0)
    if off_policy:  # a few tokens far off: ratios past verl's dual clip at 3
        old[1, 2], old[5, 0], old[8, 4] = logp[1, 2] - 1.5, logp[5, 0] - 1.3, logp[8, 4] + 1.4
        old = old.clamp(max=-1e-3)  # log-probs of a distribution (DPPO reads the probabilities themselves)
    ref = logp - 0.2 * torch.rand(B, T, generator=g, dtype=torch.float64) * mask
    r = torch.tensor([1., 0., 0., 1., 0., 1., 1., 1., 0., 0., 0., 1.], dtype=torch.float64)
    return dict(mask=mask, logp=logp, old=old, ref=ref, r=r)


# ---------------------------------------------------------------- the reference, from verl's formulas

def v_agg(loss_mat, mask, mode, scale=None):
    if mode == "token-mean":
        return (loss_mat * mask).sum() / mask.sum()
    if mode == "seq-mean-token-sum":
        return (loss_mat * mask).sum(-1).mean()
    if mode == "token-sum":  # verl's agg_loss after b178a3cd
        return (loss_mat * mask).sum()
    if mode == "seq-mean-token-sum-norm":  # since b8d91ef8: the batch's sum over B and loss_scale_factor (else T)
        return (loss_mat * mask).sum() / mask.shape[0] / (mask.shape[-1] if scale is None else scale)
    return ((loss_mat * mask).sum(-1) / (mask.sum(-1) + 1e-8)).mean()  # seq-mean-token-mean


def groups(r):
    return r.view(-1, G)


def v_grpo_adv(r, mask, eps=1e-6, norm=True):
    x = groups(r)
    a = x - x.mean(-1, keepdim=True)
    if norm:
        a = a / (x.std(-1, keepdim=True) + eps)
    return a.reshape(-1, 1) * mask


def v_gpg_adv(r, mask):
    alpha = len(r) / max(int(torch.count_nonzero(r)), 1)
    x = groups(r)
    return (alpha * (x - x.mean(-1, keepdim=True))).reshape(-1, 1) * mask


def v_opo_adv(r, mask):
    n, x = groups(mask.sum(-1)), groups(r)
    return (x - (n * x).sum(-1, keepdim=True) / n.sum(-1, keepdim=True)).reshape(-1, 1) * mask


def v_passk_adv(r, mask, eps=1e-6, norm=True):
    out = torch.zeros_like(r)
    for k, x in enumerate(groups(r)):
        top, idx = torch.topk(x, 2)
        gap = top[0] - top[1]
        out[k * G + int(idx[0])] = gap / (x.std() + eps) if norm else gap
    return out[:, None] * mask


def v_rloo_adv(r, mask):
    x = groups(r)
    return (x * G / (G - 1) - x.mean(-1, keepdim=True) * G / (G - 1)).reshape(-1, 1) * mask


def whiten(v, mask):
    n = mask.sum()
    mean = (v * mask).sum() / (n + 1e-8)
    var = (((v - mean) ** 2) * mask).sum() / (n + 1e-8) * n / (n - 1)
    return (v - mean) * torch.rsqrt(var + 1e-8)


def v_kl(lp, ref, kind):
    """verl's kl_penalty_forward(logprob, ref_logprob, kind)."""
    if kind in ("kl", "k1"):
        return lp - ref
    if kind in ("mse", "k2"):
        return 0.5 * (lp - ref) ** 2
    kl = torch.clamp(ref - lp, -20, 20)  # low_var_kl, k3
    return torch.clamp(torch.exp(kl) - kl - 1, -10, 10)


def token_rewards(b, beta=0.0, kind="kl"):
    """verl's token_level_rewards: the score on each response's last token, minus beta times kl_penalty of the
    actor's log-probs before the update (old_log_probs) against pi_ref on every token (apply_kl_penalty)."""
    m = b["mask"]
    scores = torch.zeros_like(m)
    scores[torch.arange(len(m)), m.sum(-1).long() - 1] = b["r"]
    return scores - beta * v_kl(b["old"], b["ref"], kind) * m


def returns(rewards, mask):
    """sum_{t' >= t} of the token-level rewards (gamma 1), as verl's reinforce_plus_plus and remax write it."""
    return (rewards * mask).flip(-1).cumsum(-1).flip(-1)


def v_rpp_adv(b, baseline, beta=0.0):
    m, tl = b["mask"], token_rewards(b, beta)
    if baseline:  # reinforce_plus_plus_baseline: the summed score minus its group's mean, on every token
        x = groups(tl.sum(-1))
        return whiten((x - x.mean(-1, keepdim=True)).reshape(-1, 1) * m, m) * m
    return whiten(returns(tl, m), m) * m


def v_vanilla(b, lp, A, mode, low=0.2, high=0.2, c=3.0, scale=None):
    ratio = torch.exp(torch.clamp(lp - b["old"], -20.0, 20.0))
    l1, l2 = -A * ratio, -A * torch.clamp(ratio, 1 - low, 1 + high)
    clip1 = torch.maximum(l1, l2)
    loss = torch.where(A < 0, torch.minimum(-A * c, clip1), clip1)
    return v_agg(loss, b["mask"], mode, scale)


def v_remax(b, lp, mode, beta=0.0):
    """verl's remax: its batch holds the sampled answers (here the even rows), each with the reward of the greedy
    answer to its question (the odd rows) as reward_baselines; A = returns - baseline (the returns holding the KL in
    the reward from t on where use_kl_in_reward)."""
    s = slice(0, None, 2)
    bs = {"mask": b["mask"][s], "old": b["old"][s]}
    A = returns(token_rewards(b, beta)[s], bs["mask"]) - b["r"][1::2, None] * bs["mask"]
    return v_vanilla(bs, lp[s], A, mode)


def v_values(b):
    """A value model's outputs on the batch's tokens (fixed numbers: only the advantage's arithmetic is compared)."""
    g = torch.Generator().manual_seed(7)
    return torch.randn(b["mask"].shape, generator=g, dtype=torch.float64) * b["mask"]


def v_gae(b, gamma, lam, beta):
    """verl's compute_gae_advantage_return (core_algos.py at b178a3cd) on the token-level rewards, then masked_whiten."""
    tl, m, V = token_rewards(b, beta), b["mask"], v_values(b)
    nextvalues, last, backwards = 0, 0, []
    for t in reversed(range(m.shape[1])):
        delta = tl[:, t] + gamma * nextvalues - V[:, t]
        last_ = delta + gamma * lam * last
        nextvalues = V[:, t] * m[:, t] + (1 - m[:, t]) * nextvalues
        last = last_ * m[:, t] + (1 - m[:, t]) * last
        backwards.append(last)
    return whiten(torch.stack(backwards[::-1], 1), m) * m


def v_gspo(b, lp, A, low, high):
    m = b["mask"]
    seq = ((lp - b["old"]) * m).sum(-1) / m.sum(-1).clamp(min=1)
    s = torch.exp(torch.clamp(lp - lp.detach() + seq.detach()[:, None], max=10.0))
    loss = torch.maximum(-A * s, -A * torch.clamp(s, 1 - low, 1 + high))
    return v_agg(loss, m, "seq-mean-token-mean")


def v_sapo(b, lp, A, tau_pos=1.0, tau_neg=1.05):
    ratio = torch.exp(torch.clamp(lp - b["old"], -20.0, 20.0))
    tau = torch.where(A > 0, torch.tensor(tau_pos, dtype=A.dtype), torch.tensor(tau_neg, dtype=A.dtype))
    return v_agg(-torch.sigmoid(tau * (ratio - 1.0)) * (4.0 / tau) * A, b["mask"], "seq-mean-token-mean")


def v_cispo(b, lp, A, mode, low, high, scale=None):
    ratio = torch.exp(torch.clamp(lp - b["old"], -20.0, 20.0))
    return v_agg(-torch.clamp(ratio, 1 - low, 1 + high).detach() * A * lp, b["mask"], mode, scale)


def v_gpg(b, lp, A, mode):
    return v_agg(-lp * A, b["mask"], mode)


def v_geo_mean(b, lp, A, low, high):
    m = b["mask"]
    x = lp - b["old"]
    sgn = torch.sign(A)
    c = sgn * torch.min(sgn * x, sgn * torch.clamp(x, -low, high))
    n = m.sum(-1)
    ratio = torch.exp((c * m).sum(-1) / (n + 1e-8))
    return (-((A * m).sum(-1) / (n + 1e-8)) * ratio).mean()


def masked_mean(x, m):
    return (x * m).sum() / (m.sum() + 1e-8)


def v_clip_cov(b, lp, A, mode, low, high, ratio_k, lb, ub):
    m = b["mask"]
    ratio = torch.exp(lp - b["old"])
    l1, l2 = -A * ratio, -A * torch.clamp(ratio, 1 - low, 1 + high)
    clipped = (l2 > l1) & (m > 0)
    cov = (A - masked_mean(A, m)) * (lp - masked_mean(lp.detach(), m))
    cov = cov.masked_fill(m == 0, -torch.inf).masked_fill(clipped, -torch.inf)
    n = max(int(ratio_k * m.sum().item()), 1)
    idx = torch.nonzero((cov < ub) & (cov > lb) & (m > 0))
    idx = idx[torch.randperm(len(idx))[:min(n, len(idx))]]
    corr = torch.ones_like(A)
    corr[idx[:, 0], idx[:, 1]] = 0
    return v_agg(torch.maximum(l1, l2) * corr, m, mode)


def v_kl_cov(b, lp, A, mode, ratio_k, coef, scale=None):
    m = b["mask"]
    x = lp - b["old"]
    loss = -A * torch.exp(x)
    with_kl = -A * torch.exp(x) + coef * x.abs()
    valid = torch.nonzero(m.reshape(-1) > 0, as_tuple=True)[0]
    a, l_ = A[m > 0].detach(), lp[m > 0].detach()
    cov = (a - a.mean()) * (l_ - l_.mean())
    top = valid[torch.topk(cov, max(1, int(len(cov) * ratio_k))).indices]
    loss = loss.clone()
    loss.view(-1)[top] = with_kl.view(-1)[top]
    return v_agg(loss, m, mode, scale)


# ---------------------------------------------------------------- the cases

def grpo_adv(b, **kw):
    return v_grpo_adv(b["r"], b["mask"], **kw)


CASES = {  # name: (from_verl arguments, reference loss, tolerance)
    "grpo-vanilla": (("grpo", "vanilla", "token-mean", {}),
                     lambda b, lp: v_vanilla(b, lp, grpo_adv(b), "token-mean"), EXACT),
    "grpo-no-std-seq-mean": (("grpo", "vanilla", "seq-mean-token-mean", {"norm_adv_by_std_in_grpo": False}),
                             lambda b, lp: v_vanilla(b, lp, grpo_adv(b, norm=False), "seq-mean-token-mean"), PLUS_1E8),
    "grpo-clip-higher-token-sum": (("grpo", "vanilla", "seq-mean-token-sum", {"clip_ratio_high": 0.28}),
                                   lambda b, lp: v_vanilla(b, lp, grpo_adv(b), "seq-mean-token-sum", high=0.28), EXACT),
    "grpo-token-sum-norm": (("grpo", "vanilla", "seq-mean-token-sum-norm", {"loss_scale_factor": 5}),
                            lambda b, lp: v_vanilla(b, lp, grpo_adv(b), "seq-mean-token-sum-norm", scale=5), EXACT),
    "grpo-kl-loss": (("grpo", "vanilla", "token-mean", {"use_kl_loss": True, "kl_loss_coef": 0.1}),
                     lambda b, lp: v_vanilla(b, lp, grpo_adv(b), "token-mean")
                     + 0.1 * v_agg(v_kl(lp, b["ref"], "low_var_kl"), b["mask"], "token-mean"), EXACT),
    "grpo-mse-loss": (("grpo", "vanilla", "seq-mean-token-sum",
                       {"use_kl_loss": True, "kl_loss_coef": 0.1, "kl_loss_type": "mse"}),
                      lambda b, lp: v_vanilla(b, lp, grpo_adv(b), "seq-mean-token-sum")
                      + 0.1 * v_agg(v_kl(lp, b["ref"], "mse"), b["mask"], "seq-mean-token-sum"), EXACT),
    "grpo-kl-reward": (("grpo", "vanilla", "token-mean", {"use_kl_in_reward": True, "kl_coef": 0.1}),
                       lambda b, lp: v_vanilla(b, lp, v_grpo_adv(token_rewards(b, 0.1).sum(-1), b["mask"]),
                                               "token-mean"), EXACT),
    "gspo": (("grpo", "gspo", "seq-mean-token-mean", {"clip_ratio_low": 0.05, "clip_ratio_high": 0.08}),
             lambda b, lp: v_gspo(b, lp, grpo_adv(b), 0.05, 0.08), PLUS_1E8),
    "gspo-token-mean-unread": (("grpo", "gspo", "token-mean", {"clip_ratio_low": 0.05, "clip_ratio_high": 0.08}),
                               lambda b, lp: v_gspo(b, lp, grpo_adv(b), 0.05, 0.08), PLUS_1E8),
    "sapo": (("grpo", "sapo", "seq-mean-token-mean", {}), lambda b, lp: v_sapo(b, lp, grpo_adv(b)), PLUS_1E8),
    "cispo": (("grpo", "cispo", "token-mean", {"clip_ratio_high": 0.3}),
              lambda b, lp: v_cispo(b, lp, grpo_adv(b), "token-mean", 0.2, 0.3), EXACT),
    "gpg": (("gpg", "gpg", "token-mean", {}),
            lambda b, lp: v_gpg(b, lp, v_gpg_adv(b["r"], b["mask"]), "token-mean"), EXACT),
    "geo-mean": (("grpo", "geo_mean", "token-mean", {"clip_ratio": 0.4, "clip_ratio_low": None,
                                                      "clip_ratio_high": None}),
                 lambda b, lp: v_geo_mean(b, lp, grpo_adv(b), 0.4, 0.4), PLUS_1E8),
    "clip-cov": (("grpo", "clip_cov", "token-mean", {"clip_cov_ratio": 1.0, "clip_cov_lb": -0.5, "clip_cov_ub": 0.5}),
                 lambda b, lp: v_clip_cov(b, lp, grpo_adv(b), "token-mean", 0.2, 0.2, 1.0, -0.5, 0.5), EXACT),
    "kl-cov": (("grpo", "kl_cov", "token-mean", {"kl_cov_ratio": 0.1, "ppo_kl_coef": 0.7}),
               lambda b, lp: v_kl_cov(b, lp, grpo_adv(b), "token-mean", 0.1, 0.7), EXACT),
    "opo": (("opo", "vanilla", "seq-mean-token-sum", {}),
            lambda b, lp: v_vanilla(b, lp, v_opo_adv(b["r"], b["mask"]), "seq-mean-token-sum"), EXACT),
    "grpo-passk": (("grpo_passk", "vanilla", "token-mean", {}),
                   lambda b, lp: v_vanilla(b, lp, v_passk_adv(b["r"], b["mask"]), "token-mean"), EXACT),
    "rloo": (("rloo", "vanilla", "seq-mean-token-sum", {}),
             lambda b, lp: v_vanilla(b, lp, v_rloo_adv(b["r"], b["mask"]), "seq-mean-token-sum"), EXACT),
    "remax": (("remax", "vanilla", "seq-mean-token-sum", {}), lambda b, lp: v_remax(b, lp, "seq-mean-token-sum"),
              EXACT),
    "remax-kl-reward": (("remax", "vanilla", "seq-mean-token-sum", {"use_kl_in_reward": True, "kl_coef": 0.1}),
                        lambda b, lp: v_remax(b, lp, "seq-mean-token-sum", 0.1), EXACT),
    "reinforce++-baseline-kl-reward": (("reinforce_plus_plus_baseline", "vanilla", "token-mean",
                                        {"use_kl_in_reward": True, "kl_coef": 0.1}),
                                       lambda b, lp: v_vanilla(b, lp, v_rpp_adv(b, True, 0.1), "token-mean"), WHITEN),
    "reinforce++-baseline": (("reinforce_plus_plus_baseline", "vanilla", "token-mean", {}),
                             lambda b, lp: v_vanilla(b, lp, v_rpp_adv(b, True), "token-mean"), WHITEN),
    "reinforce++-kl-loss": (("reinforce_plus_plus", "vanilla", "seq-mean-token-mean",
                             {"use_kl_loss": True, "kl_loss_coef": 0.1}),
                            lambda b, lp: v_vanilla(b, lp, v_rpp_adv(b, False), "seq-mean-token-mean")
                            + 0.1 * v_agg(v_kl(lp, b["ref"], "k3"), b["mask"], "seq-mean-token-mean"), WHITEN),
    "reinforce++-kl-reward": (("reinforce_plus_plus", "vanilla", "token-mean",
                               {"use_kl_in_reward": True, "kl_coef": 0.1}),
                              lambda b, lp: v_vanilla(b, lp, v_rpp_adv(b, False, 0.1), "token-mean"), WHITEN),
    # products no row holds: each a composition of parts
    "rloo-cispo-token-mean": (("rloo", "cispo", "token-mean", {"clip_ratio_high": 0.3}),
                              lambda b, lp: v_cispo(b, lp, v_rloo_adv(b["r"], b["mask"]), "token-mean", 0.2, 0.3),
                              EXACT),
    "gpg-vanilla": (("gpg", "vanilla", "token-mean", {}),
                    lambda b, lp: v_vanilla(b, lp, v_gpg_adv(b["r"], b["mask"]), "token-mean"), EXACT),
    "geo-mean-token-sum-unread": (("grpo", "geo_mean", "seq-mean-token-sum", {"clip_ratio_low": 0.1,
                                                                             "clip_ratio_high": 0.3}),
                                  lambda b, lp: v_geo_mean(b, lp, grpo_adv(b), 0.1, 0.3), PLUS_1E8),
    "opo-gspo": (("opo", "gspo", "seq-mean-token-sum", {"clip_ratio_low": 0.05, "clip_ratio_high": 0.08}),
                 lambda b, lp: v_gspo(b, lp, v_opo_adv(b["r"], b["mask"]), 0.05, 0.08), PLUS_1E8),
    "rloo-kl-cov-token-sum-norm": (("rloo", "kl_cov", "seq-mean-token-sum-norm",
                                    {"kl_cov_ratio": 0.1, "loss_scale_factor": 9}),
                                   lambda b, lp: v_kl_cov(b, lp, v_rloo_adv(b["r"], b["mask"]),
                                                          "seq-mean-token-sum-norm", 0.1, 0.1, scale=9), EXACT),
    "passk-sapo-kl-reward": (("grpo_passk", "sapo", "token-mean", {"use_kl_in_reward": True, "kl_coef": 0.1,
                                                                   "kl_penalty": "low_var_kl"}),
                             lambda b, lp: v_sapo(b, lp, v_passk_adv(token_rewards(b, 0.1, "k3").sum(-1), b["mask"])),
                             PLUS_1E8),
}
# verl's dro (compute_policy_loss_dro, added to core_algos.py after b178a3cd): a part that ships in verl
CASES["rloo-dro-token-mean"] = (("rloo", "dro", "token-mean", {"dro_beta": 0.3}),
                                lambda b, lp: v_agg(-(lp * v_rloo_adv(b["r"], b["mask"]) - 0.15 * (lp - b["old"]) ** 2),
                                                    b["mask"], "token-mean"), EXACT)


def v_dppo(b, lp, A, mode, low, high, c, kind):
    """verl's compute_policy_loss_dppo_tv / _dppo_kl (core_algos.py at 1dda039b): a stop-gradient ratio truncated
    at clip_ratio_c on A log pi, 0 on the tokens whose probability left its trust region in A's direction."""
    ratio = torch.clamp(torch.exp(torch.clamp(lp - b["old"], -20.0, 20.0)), max=c).detach()
    prob, old_prob = torch.exp(lp), torch.exp(b["old"])
    if kind == "tv":
        pos, neg = (prob - old_prob) <= high, (prob - old_prob) >= -low
    else:
        kl = old_prob * (b["old"] - lp) + (1 - old_prob) * torch.log((1.0 - old_prob + 1e-8) / (1.0 - prob + 1e-8))
        pos, neg = (kl <= high) | (prob <= old_prob), (kl <= low) | (prob >= old_prob)
    valid = torch.where(A > 0, pos, neg).detach().double()
    return v_agg(-A * ratio * lp * valid, b["mask"], mode)


# the parts verl added after b178a3cd, where they are registered (every name that composes has a case here:
# test_every_name_verl_registers_composes_or_is_refused)
if "dppo_tv" in POLICY_TERMS:
    CASES["rloo-dppo-tv-token-mean"] = (("rloo", "dppo_tv", "token-mean", {"clip_ratio_low": 0.15,
                                                                            "clip_ratio_high": 0.1, "clip_ratio_c": 1.5}),
                                        lambda b, lp: v_dppo(b, lp, v_rloo_adv(b["r"], b["mask"]), "token-mean", 0.15,
                                                             0.1, 1.5, "tv"), EXACT)
if "dppo_kl" in POLICY_TERMS and "token-sum" in AGGREGATIONS:
    CASES["grpo-dppo-kl-token-sum"] = (("grpo", "dppo_kl", "token-sum", {"clip_ratio_low": 0.02,
                                                                         "clip_ratio_high": 0.06, "clip_ratio_c": 1.5}),
                                       lambda b, lp: v_dppo(b, lp, grpo_adv(b), "token-sum", 0.02, 0.06, 1.5, "kl"),
                                       EXACT)
GROUP = {"remax": 2, "remax-kl-reward": 2}  # rows in pairs: the sampled answer, then the greedy one


def ours(b, lp, method, overrides, G):
    m = get_method(method)
    preset, hp = wiring.configure(m, get_preset("tiny"), overrides)
    step = step_from_tensors(lp, b["mask"], preset.rl, logp_ref=b["ref"] if m.uses_ref else None,
                             logp_old=b["old"], scores=b["r"], group_size=G, hp=hp)
    return -surrogate_loss(lp, m.coefficient(step), b["mask"])  # J: its gradient is the method's


def gradients(case, off_policy, change=None):
    (est, mode, agg, config), reference, tol = CASES[case]
    b = batch(off_policy=off_policy)
    lp_v = b["logp"].clone().requires_grad_()
    (g_verl,) = torch.autograd.grad(-reference(b, lp_v), lp_v)  # verl minimises the loss: J = -loss
    method, overrides = from_verl(est, mode, agg, **config)
    method, overrides = change(method, overrides) if change else (method, overrides)
    lp_o = b["logp"].clone().requires_grad_()
    (g_ours,) = torch.autograd.grad(ours(b, lp_o, method, overrides, GROUP.get(case, G)), lp_o)
    return g_ours, g_verl, tol


def rel(a, b):
    assert b.abs().max() > 0
    return ((a - b).abs().max() / b.abs().max()).item()


@pytest.mark.parametrize("off_policy", [False, True], ids=["on-policy", "off-policy"])
@pytest.mark.parametrize("case", list(CASES))
def test_verl_formula_equals_the_package_coefficient(case, off_policy):
    g_ours, g_verl, tol = gradients(case, off_policy)
    assert rel(g_ours, g_verl) < tol, case


@pytest.mark.parametrize("off_policy", [False, True], ids=["on-policy", "off-policy"])
@pytest.mark.parametrize("whiten_it", [True, False], ids=["verl", "a GAE left unwhitened (the control)"])
def test_verls_gae_equals_the_ppo_row_from_verl(off_policy, whiten_it):
    """verl's gae (with the KL in the reward, gamma 0.9, lam 0.8) maps to the ppo row with gae_whiten: on the same
    token rewards and values, the package's GAE (advantages.gae, as the per-batch hook calls it) whitened by the part
    and PPO's clip give verl's gradient; without the whitening they do not."""
    from unified_rl import advantages
    b = batch(off_policy=off_policy)
    gamma, lam, beta = 0.9, 0.8, 0.1
    lp_v = b["logp"].clone().requires_grad_()
    (g_verl,) = torch.autograd.grad(-v_vanilla(b, lp_v, v_gae(b, gamma, lam, beta), "token-mean"), lp_v)
    method, over = from_verl("gae", "vanilla", "token-mean", use_kl_in_reward=True, kl_coef=beta, gamma=gamma, lam=lam)
    assert method == "ppo" and over["gae_whiten"] and (over["gamma"], over["lam"]) == (gamma, lam)
    over["gae_whiten"] = whiten_it
    m = get_method(method)
    preset, hp = wiring.configure(m, get_preset("tiny"), over)
    tl = token_rewards(b, beta)  # the score on the last token minus beta k1 of pi_old against pi_ref (the hook's)
    adv, _ = advantages.gae(tl, v_values(b), b["mask"], preset.rl.gamma, preset.rl.lam)
    lp_o = b["logp"].clone().requires_grad_()
    step = step_from_tensors(lp_o, b["mask"], preset.rl, logp_ref=b["ref"], logp_old=b["old"], scores=b["r"],
                             group_size=G, hp=hp, adv=adv)
    (g_ours,) = torch.autograd.grad(-surrogate_loss(lp_o, m.coefficient(step), b["mask"]), lp_o)
    assert (rel(g_ours, g_verl) < WHITEN) == whiten_it, rel(g_ours, g_verl)


def test_the_off_policy_batch_reaches_the_dual_clip():
    b = batch()
    A = v_grpo_adv(b["r"], b["mask"])
    r = torch.exp(b["logp"] - b["old"])
    assert ((A < 0) & (r > 3) & (b["mask"] > 0)).any() and ((r - 1).abs() > 0.2)[b["mask"] > 0].any()


def settings(**changed):
    return lambda m, o: (m, {**o, **changed})


def method(m):
    return lambda _, o: (m, o)


def row(name):  # a registered row, with the mapped settings it has
    known = {f.name for f in dataclasses.fields(METHODS[name].hparams)} | {"clip_eps", "beta"}
    return lambda _, o: (name, {k: v for k, v in o.items() if k in known})


SLIPS = {  # a slip in the mapping, and the case that must catch it
    "no-dual-clip": ("grpo-vanilla", settings(delta=None)),
    "token-mean-per-group": ("grpo-vanilla", settings(aggregation="group-token-mean")),
    "std-kept": ("grpo-no-std-seq-mean", settings(scale_rewards="group")),
    "norm-over-sequences-lost": ("grpo-token-sum-norm", settings(aggregation="token-sum", max_len=5.0)),  # no 1/(B L)
    "norm-default-L": ("grpo-token-sum-norm", settings(max_len=17.0)),
    "kl-reward-dropped": ("grpo-kl-reward", settings(beta=0.0)),
    "kl-reward-in-the-loss": ("grpo-kl-reward", method(compose("grpo", "vanilla", "k1", "token-mean"))),
    "mse-as-k3": ("grpo-mse-loss", method(compose("grpo", "vanilla", "k3", "seq-mean-token-sum"))),
    "gspo-reads-token-mean": ("gspo-token-mean-unread", settings(aggregation="token-mean")),
    "cispo-without-lower-bound": ("cispo", settings(cispo_clip_eps=None)),
    "gpg-paper-count": ("gpg", settings(gpg_count="nonzero-advantage")),
    "gmpo-symmetric-pessimism": ("geo-mean", settings(gmpo_clip_eps_high=0.05)),
    "gmpo-reads-token-sum": ("geo-mean-token-sum-unread", settings(aggregation="seq-mean-token-sum")),
    "kl-cov-coef": ("kl-cov", settings(kl_cov_coef=0.0)),
    "reinforce++-no-baseline": ("reinforce++-baseline", settings(reinforce_baseline="none")),
    "opo-token-mean": ("opo", settings(aggregation="token-mean")),
    "rloo-cispo-as-the-cispo-row": ("rloo-cispo-token-mean", row("cispo")),
    "gpg-vanilla-as-the-gpg-row": ("gpg-vanilla", row("gpg")),
}
SLIPS["dro-beta-unread"] = ("rloo-dro-token-mean", settings(dro_beta=0.1))
if "rloo-dppo-tv-token-mean" in CASES:
    SLIPS["dppo-tv-uncapped"] = ("rloo-dppo-tv-token-mean", settings(dppo_tv_ratio_cap=None))
    SLIPS["dppo-tv-bounds-swapped"] = ("rloo-dppo-tv-token-mean", settings(dppo_tv_delta_low=0.1,
                                                                           dppo_tv_delta_high=0.15))
if "grpo-dppo-kl-token-sum" in CASES:
    SLIPS["token-sum-as-token-mean"] = ("grpo-dppo-kl-token-sum", settings(aggregation="token-mean"))
    SLIPS["dppo-kl-bounds-swapped"] = ("grpo-dppo-kl-token-sum", settings(dppo_kl_delta_low=0.06,
                                                                          dppo_kl_delta_high=0.02))


@pytest.mark.parametrize("slip", list(SLIPS))
def test_a_mapping_slip_is_caught(slip):
    case, change = SLIPS[slip]
    g_ours, g_verl, tol = gradients(case, True, change)
    assert rel(g_ours, g_verl) > 1e3 * tol, slip


def test_a_row_is_named_and_another_product_is_a_composition_train_takes():
    assert from_verl("grpo", "vanilla")[0] == "grpo" and from_verl("grpo", "geo_mean")[0] == "gmpo"
    assert from_verl("reinforce_plus_plus", "vanilla", use_kl_in_reward=True)[0] == "reinforce++"
    assert from_verl("reinforce_plus_plus_baseline", "vanilla")[1]["beta"] == 0.0  # the row's KL, switched off
    made, overrides = from_verl("rloo", "cispo", "token-mean")
    assert isinstance(made, Method) and made.name not in METHODS
    c = made.composition
    assert (c.advantage, c.policy, c.kl, made.hparams.aggregation) == ("rloo", "cispo", None, "token-mean")
    assert from_verl("grpo", "vanilla", clip_ratio=0.4)[1]["clip_eps"] == 0.2  # verl's clip_ratio_low is 0.2 itself
    lab = make_lab("tiny", 0)
    before = {k: v.clone() for k, v in lab.policy.state_dict().items()}
    parity = dataclasses.replace(made, reward=lambda rollout: torch.tensor([len(t) % 2 * 1.0 for t in rollout.texts]))
    run = train(parity, lab=lab, steps=1, epochs=2, progress=False, eval_every=0, **overrides)
    assert run.method == "rloo+cispo"
    assert any((before[k] - v).abs().max() > 0 for k, v in run.policy.state_dict().items())


@pytest.mark.parametrize("config, words", [
    (("grpo", "vespo"), "no policy part here computes verl's 'vespo'"),  # a part, TRL's, not verl's
    (("grpo", "bypass_mode"), "the policy parts: cispo, clip_cov"),
    (("optimal_token_baseline", "vanilla"), "no advantage part here"),
    (("grpo", "vanilla", "group-token-mean"), "no aggregation part here computes verl's 'group-token-mean'"),
    (("grpo", "vanilla", "token-mean-unbiased"), "no aggregation part here"),
    (("grpo", "vanilla", "token-mean", {"clip_ratioo": 0.1}), "does not read"),
    (("grpo", "vanilla", "token-mean", {"use_kl_loss": True, "kl_loss_type": "abs"}), "kl_loss_type='abs'"),
    (("grpo", "vanilla", "token-mean", {"use_kl_loss": True, "kl_loss_type": "entropy_bonus"}), "no kl part"),
    (("grpo", "vanilla", "token-mean", {"use_kl_loss": True, "use_kl_in_reward": True}), "two KL terms"),
    (("grpo", "vanilla", "token-mean", {"use_kl_in_reward": True, "kl_ctrl_type": "adaptive"}), "fixed"),
    (("grpo", "gspo", "token-mean", {"use_kl_loss": True}), "one aggregation"),
    (("reinforce_plus_plus", "vanilla", "token-mean", {"gamma": 0.99}), "undiscounted"),
    (("grpo", "vanilla", "token-mean", {"clip_ratio_c": 1.1}), "dual clip"),
    (("grpo", "clip_cov", "token-mean", {"clip_ratio_high": 0.28}), "symmetric"),
])
def test_from_verl_names_what_it_cannot_map(config, words):
    est, mode, agg, kw = (*config, "token-mean", {})[:4] if len(config) == 2 else (*config, {})[:4]
    with pytest.raises(ValueError, match=re.escape(words)) as e:
        from_verl(est, mode, agg, **kw)
    assert "\n" not in str(e.value)


VERL_NAMES = {  # every name verl registers (core_algos.py at 1dda039b), by axis
    "adv_estimator": ("gae", "grpo", "reinforce_plus_plus", "reinforce_plus_plus_baseline", "remax", "rloo", "opo",
                      "grpo_passk", "gpg", "rloo_vectorized", "grpo_vectorized", "optimal_token_baseline",
                      "tir_optimal_token_baseline", "gdpo"),
    "loss_mode": ("vanilla", "dppo_tv", "dppo_kl", "gspo", "sapo", "gpg", "clip_cov", "kl_cov", "geo_mean", "dro",
                  "cispo", "bypass_mode"),
    "loss_agg_mode": ("token-mean", "token-sum", "seq-mean-token-sum", "seq-mean-token-sum-norm",
                      "seq-mean-token-mean"),
}


def test_every_name_verl_registers_composes_or_is_refused():
    """Each of verl's names composes (and then a case above checks it against verl's formula) or is refused in one
    line that names the registry's parts of its axis."""
    covered = {k: {CASES[c][0][i] for c in CASES} for i, k in enumerate(VERL_NAMES)}
    covered["adv_estimator"].add("gae")  # test_verls_gae_equals_the_ppo_row_from_verl
    for i, (key, names) in enumerate(VERL_NAMES.items()):
        for name in names:
            args = ["grpo", "vanilla", "token-mean"]
            args[i] = name
            try:
                from_verl(*args)
            except ValueError as e:
                assert "\n" not in str(e) and f"{key}={name!r}" in str(e), e
                continue
            assert name in covered[key], f"verl's {key}={name!r} composes but no case checks it against verl"
