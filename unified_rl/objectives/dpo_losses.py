"""The objective of every loss_type of TRL 1.16's DPOTrainer, as each paper writes its loss: J = -mean l.

Differentiable and written without the coefficients (`coefficients.dpo_losses` derives those by hand),
so autograd of J is the oracle for each GC. The scores are log-ratio sums (norm="sum": the papers'
sequence log-probs) or per-token means (norm="mean": DeepSeekMath's eq 12). Sources (arXiv): DPO
2305.18290 eq 7; hinge: SLiC 2305.10425 as RSO 2309.06657 uses it; IPO 2310.12036 eq 17; EXO 2402.00856
eq 16 (two responses); NCA 2402.05369; robust DPO 2403.00409; BCO 2404.04656 (its
pairwise form as TRL's DPOTrainer has it: without the paper's running shift delta); SPPO
2405.00675 eq 4.7 with hard probabilities; AOT 2406.05882 (sorted margins); APO 2408.06266 eq 7 (zero)
and 8 (down); DiscoPOP 2406.08414 eq 5 (its log-ratio modulated loss); sft: the chosen responses' NLL.
"""

import math

import torch
import torch.nn.functional as F

from .. import _checks
from ..coefficients.dpo_losses import check_settings
from .preference import _pair_masks


def _sum(logp, name, mask, logp_ref=None):
    x = _checks.per_token(logp, name, mask)
    if logp_ref is not None:
        x = x - _checks.per_token(logp_ref, f"{name} reference", mask)
    return (x * mask).sum(-1)  # (B,) with grad


def _log_sigmoid_ls(d, beta, eps):
    """AOT's per-pair loss on a (sorted) margin d, with label smoothing eps."""
    return -(1 - eps) * F.logsigmoid(beta * d) - eps * F.logsigmoid(-beta * d)


def dpo_loss(loss_type, logp_chosen, logp_ref_chosen, mask_chosen, logp_rejected, logp_ref_rejected,
             mask_rejected, beta, norm="mean", label_smoothing=0.0, discopop_tau=0.05):
    """J = -(1/B) sum over pairs of TRL's `loss_type` loss (module docstring), scalar, differentiable."""
    mc, mr = _pair_masks(mask_chosen, mask_rejected)
    beta, eps, tau = check_settings(loss_type, norm, beta, label_smoothing, discopop_tau)
    if loss_type == "sigmoid_norm":
        loss_type, norm = "sigmoid", "mean"
    n_c, n_r = (mc.sum(-1), mr.sum(-1)) if norm == "mean" else (1.0, 1.0)  # (B,) divisors of the sums
    if loss_type == "sft":  # the chosen responses' negative log-likelihood
        lp = _checks.per_token(logp_chosen, "logp_chosen", mc)
        if norm == "sum":  # every chosen token of the batch alike
            return (lp * mc).sum() / mc.sum()
        return ((lp * mc).sum(-1) / mc.sum(-1)).mean()
    s_c = _sum(logp_chosen, "logp_chosen", mc, logp_ref_chosen) / n_c  # (B,) chosen score (log-ratio)
    s_r = _sum(logp_rejected, "logp_rejected", mr, logp_ref_rejected) / n_r  # (B,)
    u = beta * (s_c - s_r)  # (B,) the implicit reward margin
    if loss_type == "sigmoid":  # DPO eq 7
        loss = -F.logsigmoid(u)
    elif loss_type == "hinge":  # SLiC
        loss = torch.relu(1 - u)
    elif loss_type == "ipo":  # eq 17, beta in the role of tau
        loss = (s_c - s_r - 1 / (2 * beta)) ** 2
    elif loss_type == "exo_pair":  # KL(softmax over the pair || (1 - eps, eps))
        q_w, q_l = torch.sigmoid(u), torch.sigmoid(-u)
        loss = q_w * (F.logsigmoid(u) - math.log(1 - eps)) + q_l * (F.logsigmoid(-u) - math.log(eps))
    elif loss_type == "nca_pair":
        loss = -F.logsigmoid(beta * s_c) - 0.5 * F.logsigmoid(-beta * s_c) - 0.5 * F.logsigmoid(-beta * s_r)
    elif loss_type == "robust":  # the unbiased loss under labels flipped with probability eps
        loss = ((1 - eps) * -F.logsigmoid(u) - eps * -F.logsigmoid(-u)) / (1 - 2 * eps)
    elif loss_type == "bco_pair":
        loss = -F.logsigmoid(beta * s_c) - F.logsigmoid(-beta * s_r)
    elif loss_type == "sppo_hard":  # P(winner) = 1, P(loser) = 0: both regressed onto +-1/(2 beta)
        loss = (s_c - 1 / (2 * beta)) ** 2 + (s_r + 1 / (2 * beta)) ** 2
    elif loss_type == "aot":  # policy margins and reference margins, each sorted over the batch
        pol = _sum(logp_chosen, "logp_chosen", mc) / n_c - _sum(logp_rejected, "logp_rejected", mr) / n_r
        ref = (_sum(logp_ref_chosen, "logp_ref_chosen", mc) / n_c
               - _sum(logp_ref_rejected, "logp_ref_rejected", mr) / n_r)
        loss = _log_sigmoid_ls(torch.sort(pol)[0] - torch.sort(ref)[0], beta, eps)
    elif loss_type == "aot_unpaired":  # chosen and rejected log-ratios, each sorted over the batch
        loss = _log_sigmoid_ls(torch.sort(s_c)[0] - torch.sort(s_r)[0], beta, eps)
    elif loss_type == "apo_zero":  # raise the chosen, lower the rejected, each against pi_ref
        loss = 1 - torch.sigmoid(beta * s_c) + torch.sigmoid(beta * s_r)
    elif loss_type == "apo_down":  # lower the chosen, the rejected more
        loss = torch.sigmoid(beta * s_c) + 1 - torch.sigmoid(u)
    else:  # discopop: a blend of the logistic and exponential losses, its weight sigmoid(u / tau)
        m = torch.sigmoid(u / tau)
        loss = -F.logsigmoid(u) * (1 - m) + torch.exp(F.logsigmoid(u / tau) - u)  # e^-u m, with no inf * 0
    return -loss.mean()


def dpo_weighted(terms, logp_chosen, logp_ref_chosen, mask_chosen, logp_rejected, logp_ref_rejected, mask_rejected,
                 beta, label_smoothing=0.0, discopop_tau=0.05):
    """J = sum_k w_k J_k, terms ((loss_type, norm, weight), ...): TRL's loss_type list with loss_weights."""
    if not terms:
        raise ValueError("terms is empty: give at least one (loss_type, norm, weight)")
    args = (logp_chosen, logp_ref_chosen, mask_chosen, logp_rejected, logp_ref_rejected, mask_rejected, beta)
    return sum(w * dpo_loss(t, *args, norm=n, label_smoothing=label_smoothing, discopop_tau=discopop_tau)
               for t, n, w in terms)

