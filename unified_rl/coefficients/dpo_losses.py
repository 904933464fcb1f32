"""The pair GC of every loss_type of TRL 1.16's DPOTrainer: one function, one row of hand-derived GCs each.

A pair loss l depends on the chosen and rejected responses through their scores s+ and s- (a
log-ratio to pi_ref; AOT: the policy's and pi_ref's log-probs; sft: the chosen log-probs). With J =
-mean over pairs of l, GC = k * dJ/ds per pair (the same number on every token of a response), where
`norm` sets the score and k:
    mean   s = (1/|o|) sum_t log(pi_theta / pi_ref), k = 1      DeepSeekMath eq 12; TRL's ipo, sigmoid_norm
    sum    s = sum_t log(pi_theta / pi_ref),         k = |o|    the papers' sequence log-probs; TRL's others
so under `sum` a longer response is pushed harder. Write u = beta (s+ - s-), r = beta s, sig = sigmoid,
sig'(z) = sig(z) sig(-z), eps = label_smoothing. The GC on a chosen response is k+ a+, on a rejected
one k- a-, with (a+, a-):

| loss_type    | a+                                             | a-                    | paper              |
|--------------|------------------------------------------------|-----------------------|--------------------|
| sigmoid      | beta sig(-u)                                   | -a+                   | DPO 2305.18290     |
| hinge        | beta [u < 1]                                   | -a+                   | SLiC 2305.10425    |
| ipo          | 1/beta - 2 (s+ - s-)                           | -a+                   | IPO 2310.12036     |
| exo_pair     | beta sig'(u) (log((1-eps)/eps) - u)            | -a+                   | EXO 2402.00856     |
| nca_pair     | beta (sig(-r+) - sig(r+)/2)                    | -beta sig(r-)/2       | NCA 2402.05369     |
| robust       | beta ((1-eps) sig(-u) + eps sig(u)) / (1-2eps) | -a+                   | rDPO 2403.00409    |
| bco_pair     | beta sig(-r+)                                  | -beta sig(r-)         | BCO 2404.04656     |
| sppo_hard    | 1/beta - 2 s+                                  | -(1/beta + 2 s-)      | SPPO 2405.00675    |
| aot          | g(d) at the pair's rank, d = sorted margins    | -a+                   | AOT 2406.05882     |
| aot_unpaired | g(d) at s+'s rank                              | -g(d) at s-'s rank    | AOT 2406.05882     |
| apo_zero     | beta sig'(r+)                                  | -beta sig'(r-)        | APO 2408.06266     |
| apo_down     | beta (sig'(u) - sig'(r+))                      | -beta sig'(u)         | APO 2408.06266     |
| discopop     | beta (the derivative of eq 5's blend)          | -a+                   | DiscoPOP 2406.08414|
| sft          | 1 (mean), or 1 / mean chosen length (sum)      | 0                     | SFT on the chosen  |
| sigmoid_norm | sigmoid under norm="mean": DeepSeekMath's DPO (eq 12-14, `coefficients.dpo`)             |

bco_pair is TRL's: the BCO paper (arXiv 2404.04656) shifts each reward by delta, a running mean of the batch's
rewards, -log sig(r+ - delta) - log sig(-(r- - delta)); TRL 1.16's DPOTrainer (dpo_trainer.py, loss_type
"bco_pair") leaves delta out, and so does this row.
AOT: g(d) = beta ((1-eps) sig(-beta d) - eps sig(beta d)); aot sorts the policy's margins (log-probs,
chosen minus rejected) and pi_ref's over the batch and takes d = sorted minus sorted, aot_unpaired the
chosen and the rejected log-ratios: each response gets the GC of the sorted position it holds. TRL's
sft averages over every chosen token of the batch, which is `sum` with the constant 1/mean length.
"""

import math

import torch
import torch.nn.functional as F

from .. import _checks
from .paper import dpo
from .preference import _paired

LOSS_TYPES = ("sigmoid", "hinge", "ipo", "exo_pair", "nca_pair", "robust", "bco_pair", "sppo_hard", "aot",
              "aot_unpaired", "apo_zero", "apo_down", "discopop", "sft", "sigmoid_norm")
"""TRL 1.16's DPOConfig.loss_type values, in its docstring's order."""
NORMS = ("mean", "sum")
USES_LABEL_SMOOTHING = ("exo_pair", "robust", "aot", "aot_unpaired")


def _score(logp, name, mask, norm, logp_ref=None):
    """Detached score of each response: its (log-prob or log-ratio) sum, or mean under norm="mean". (B,)"""
    x = _checks.per_token(logp, name, mask).detach()
    if logp_ref is not None:
        x = x - _checks.per_token(logp_ref, f"{name} reference", mask).detach()
    s = (x * mask).sum(-1)  # (B,)
    return s / mask.sum(-1) if norm == "mean" else s


def _factor(mask, norm):
    """k: |o| under norm="sum", 1 under "mean". (B,)"""
    return mask.sum(-1) if norm == "sum" else torch.ones_like(mask[:, 0])


def _dsig(z):
    return torch.sigmoid(z) * torch.sigmoid(-z)  # sigmoid'(z)


def _placed(values, order):
    """values[k] moved to the row that holds sorted position k (order = argsort of the sorted scores)."""
    out = torch.empty_like(values)
    out[order] = values
    return out


def check_settings(loss_type, norm, beta, label_smoothing, discopop_tau):
    """ValueError naming the setting if a loss_type, norm or number is out of its range."""
    if loss_type not in LOSS_TYPES:
        raise ValueError(f"unknown DPO loss_type {loss_type!r}; choose one of {', '.join(LOSS_TYPES)}")
    if norm not in NORMS:
        raise ValueError(f"unknown norm {norm!r}; choose 'mean' (eq 12's per-token mean) or 'sum' (sequence sums)")
    beta = _checks.scalar(beta, "beta", low=0.0)
    if beta == 0 and loss_type in ("ipo", "sppo_hard"):
        raise ValueError(f"{loss_type} needs beta > 0: its target is 1/(2 beta)")
    eps = _checks.scalar(label_smoothing, "label_smoothing", low=0.0)
    if loss_type == "robust" and not eps < 0.5:
        raise ValueError(f"robust needs label_smoothing in [0, 0.5) (a flip probability), got {eps}")
    if loss_type == "exo_pair" and not 0 < eps < 1:
        raise ValueError(f"exo_pair needs label_smoothing in (0, 1) (its target (1 - eps, eps)), got {eps}")
    tau = _checks.scalar(discopop_tau, "discopop_tau", low=0.0)
    if tau == 0:
        raise ValueError("discopop_tau must be > 0")
    return beta, eps, tau


def dpo_loss(loss_type, logp_chosen, logp_ref_chosen, mask_chosen, logp_rejected, logp_ref_rejected,
             mask_rejected, beta, norm="mean", label_smoothing=0.0, discopop_tau=0.05):
    """The GC of TRL's DPO `loss_type` (module table): (coef_chosen, coef_rejected), each (B, T), detached.

    norm="mean" with "sigmoid" (or "sigmoid_norm") is DeepSeekMath's DPO, `coefficients.dpo`.
    >>> m = torch.ones(1, 2); z = torch.zeros(1, 2)
    >>> dpo_loss("hinge", z, z, m, z, z, m, beta=0.5)[0]          # u = 0 < 1: beta
    tensor([[0.5000, 0.5000]])
    >>> dpo_loss("hinge", z, z, m, z, z, m, beta=0.5, norm="sum")[0]   # |o| = 2 tokens: 2 beta
    tensor([[1., 1.]])
    """
    mc, mr = _paired(mask_chosen, mask_rejected)
    beta, eps, tau = check_settings(loss_type, norm, beta, label_smoothing, discopop_tau)
    if loss_type == "sigmoid_norm":
        loss_type, norm = "sigmoid", "mean"
    if loss_type == "sigmoid" and norm == "mean":
        return dpo(logp_chosen, logp_ref_chosen, mc, logp_rejected, logp_ref_rejected, mr, beta)
    k_c, k_r = _factor(mc, norm), _factor(mr, norm)  # (B,)
    if loss_type == "sft":
        _checks.per_token(logp_chosen, "logp_chosen", mc)  # checked, though the GC does not read it
        a_c = torch.ones_like(k_c) / (mc.sum(-1).mean() if norm == "sum" else 1)  # (B,)
        return (k_c * a_c)[:, None] * mc, torch.zeros_like(mr)
    s_c = _score(logp_chosen, "logp_chosen", mc, norm, logp_ref_chosen)  # (B,)
    s_r = _score(logp_rejected, "logp_rejected", mr, norm, logp_ref_rejected)  # (B,)
    u, r_c, r_r = beta * (s_c - s_r), beta * s_c, beta * s_r  # (B,)
    sig = torch.sigmoid
    if loss_type == "sigmoid":
        a_c = beta * sig(-u)
    elif loss_type == "hinge":
        a_c = beta * (u < 1).to(u.dtype)
    elif loss_type == "ipo":
        a_c = 1 / beta - 2 * (s_c - s_r)
    elif loss_type == "exo_pair":
        a_c = beta * _dsig(u) * (math.log((1 - eps) / eps) - u)  # 0 at u = logit(1 - eps), reversed past it
    elif loss_type == "robust":
        a_c = beta * ((1 - eps) * sig(-u) + eps * sig(u)) / (1 - 2 * eps)
    elif loss_type == "discopop":
        m = sig(u / tau)  # (B,) the blend's weight, itself a function of u
        log_m, log_1m = F.logsigmoid(u / tau), F.logsigmoid(-u / tau)  # e^-u m as exp(-u + log m): no inf * 0
        dm_blend = m * (1 - m) * F.logsigmoid(u) + torch.exp(log_m + log_1m - u)  # (B,) m' tau (log sig(u) + e^-u)
        a_c = beta * (sig(-u) * (1 - m) + torch.exp(log_m - u) - dm_blend / tau)
    elif loss_type in ("aot", "aot_unpaired"):
        g = lambda d: beta * ((1 - eps) * sig(-beta * d) - eps * sig(beta * d))  # noqa: E731  (B,) -> (B,)
        if loss_type == "aot":  # the policy's and pi_ref's margins, each sorted over the batch
            pol = _score(logp_chosen, "logp_chosen", mc, norm) - _score(logp_rejected, "logp_rejected", mr, norm)
            ref = (_score(logp_ref_chosen, "logp_ref_chosen", mc, norm)
                   - _score(logp_ref_rejected, "logp_ref_rejected", mr, norm))
            (pol_sorted, order), ref_sorted = torch.sort(pol), torch.sort(ref)[0]
            a_c = _placed(g(pol_sorted - ref_sorted), order)
        else:
            (c_sorted, order_c), (r_sorted, order_r) = torch.sort(s_c), torch.sort(s_r)
            a = g(c_sorted - r_sorted)  # (B,) by sorted position
            return (k_c * _placed(a, order_c))[:, None] * mc, -(k_r * _placed(a, order_r))[:, None] * mr
    else:  # the losses whose two responses are pushed by different amounts
        a_c, a_r = {"nca_pair": lambda: (beta * (sig(-r_c) - sig(r_c) / 2), -beta * sig(r_r) / 2),
                    "bco_pair": lambda: (beta * sig(-r_c), -beta * sig(r_r)),
                    "sppo_hard": lambda: (1 / beta - 2 * s_c, -(1 / beta + 2 * s_r)),
                    "apo_zero": lambda: (beta * _dsig(r_c), -beta * _dsig(r_r)),
                    "apo_down": lambda: (beta * (_dsig(u) - _dsig(r_c)), -beta * _dsig(u))}[loss_type]()
        return (k_c * a_c)[:, None] * mc, (k_r * a_r)[:, None] * mr
    return (k_c * a_c)[:, None] * mc, -(k_r * a_c)[:, None] * mr


def dpo_weighted(terms, logp_chosen, logp_ref_chosen, mask_chosen, logp_rejected, logp_ref_rejected, mask_rejected,
                 beta, label_smoothing=0.0, discopop_tau=0.05):
    """GC of sum_k w_k l_k (TRL's loss_type list with loss_weights, e.g. MPO arXiv 2411.10442): sum_k w_k GC_k.

    terms: ((loss_type, norm, weight), ...). J is linear in the losses, so its GC is too.
    """
    if not terms:
        raise ValueError("terms is empty: give at least one (loss_type, norm, weight)")
    args = (logp_chosen, logp_ref_chosen, mask_chosen, logp_rejected, logp_ref_rejected, mask_rejected, beta)
    parts = [(w, dpo_loss(t, *args, norm=n, label_smoothing=label_smoothing, discopop_tau=discopop_tau))
             for t, n, w in terms]
    return (sum(w * c for w, (c, _) in parts), sum(w * r for w, (_, r) in parts))

