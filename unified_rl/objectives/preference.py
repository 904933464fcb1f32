"""The objectives J of IPO, SimPO, KTO and ORPO, differentiable: the oracle for their coefficients.

Written as the papers print them, with no reference to gradient coefficients, and to be maximised
(minus each paper's loss). All average over the batch: over pairs (IPO, SimPO, ORPO) or over
responses (KTO). The one departure, shared with `coefficients.preference`: IPO's h and KTO's r use
the length-normalised log-ratio x = (1/|o|) sum_t log(pi_theta / pi_ref), as DeepSeekMath's DPO
(eq 12) does, where the papers sum over tokens; SimPO (eq 4) and ORPO (eq 3) normalise by length
themselves. KTO's reference point z0 is an input: the paper estimates it on mismatched pairs and
does not backpropagate through it (`coefficients.kto_reference_point`).
"""

import torch
import torch.nn.functional as F

from .. import _checks


def _pair_masks(mask_chosen, mask_rejected):
    mc = _checks.response_mask(mask_chosen, "mask_chosen")
    mr = _checks.response_mask(mask_rejected, "mask_rejected")
    if mc.shape[0] != mr.shape[0]:
        raise ValueError(f"{mc.shape[0]} chosen responses but {mr.shape[0]} rejected ones: pairs are needed")
    return mc, mr


def _mean(logp, name, mask, logp_ref=None, ref_name=None):
    """(1/|o|) sum_t (logp - logp_ref) per response, with grad. (B, T) -> (B,)"""
    x = _checks.per_token(logp, name, mask)
    if logp_ref is not None:
        x = x - _checks.per_token(logp_ref, ref_name, mask)
    return (x * mask).sum(-1) / mask.sum(-1)


def ipo(logp_chosen, logp_ref_chosen, mask_chosen, logp_rejected, logp_ref_rejected, mask_rejected, tau):
    """IPO, arXiv 2310.12036 eq 17: J = -E[(h - 1/(2 tau))^2], h = x+ - x- (the paper's h_pi, per token)."""
    mc, mr = _pair_masks(mask_chosen, mask_rejected)
    tau = _checks.scalar(tau, "tau")
    if tau <= 0:
        raise ValueError(f"tau must be > 0 (the target margin is 1/(2 tau)), got {tau}")
    h = (_mean(logp_chosen, "logp_chosen", mc, logp_ref_chosen, "logp_ref_chosen")
         - _mean(logp_rejected, "logp_rejected", mr, logp_ref_rejected, "logp_ref_rejected"))  # (B,)
    return -((h - 1 / (2 * tau)) ** 2).mean()


def simpo(logp_chosen, mask_chosen, logp_rejected, mask_rejected, beta, gamma):
    """SimPO, arXiv 2405.14734 eq 6: J = E[log sigmoid(beta/|y+| log pi(y+) - beta/|y-| log pi(y-) - gamma)]."""
    mc, mr = _pair_masks(mask_chosen, mask_rejected)
    beta, gamma = _checks.scalar(beta, "beta", low=0.0), _checks.scalar(gamma, "gamma")
    reward_c = beta * _mean(logp_chosen, "logp_chosen", mc)  # (B,) eq 4's r_SimPO
    reward_r = beta * _mean(logp_rejected, "logp_rejected", mr)  # (B,)
    return F.logsigmoid(reward_c - reward_r - gamma).mean()


def kto(logp, logp_ref, mask, desirable, z0, beta, lam_d=1.0, lam_u=1.0, norm="mean"):
    """KTO, arXiv 2402.01306 section 4.1: J = -E[lambda_y - v(x, y)], v = lam_d sigmoid(beta (r - z0)) for
    desirable y, lam_u sigmoid(beta (z0 - r)) for undesirable y; r the log-ratio (its per-token mean,
    or under norm="sum" its sum, as printed), z0 held fixed."""
    mask = _checks.response_mask(mask)
    desirable = _checks.per_sequence(desirable, "desirable", mask.shape[0]).to(mask.dtype)
    if not ((desirable == 0) | (desirable == 1)).all():
        raise ValueError("desirable must contain only 0 and 1 (undesirable / desirable)")
    beta = _checks.scalar(beta, "beta", low=0.0)
    lam_d, lam_u = _checks.scalar(lam_d, "lam_d", low=0.0), _checks.scalar(lam_u, "lam_u", low=0.0)
    z0 = _checks.scalar(z0.item() if torch.is_tensor(z0) else z0, "z0")
    if norm not in ("mean", "sum"):
        raise ValueError(f"unknown norm {norm!r}; choose 'mean' (per-token mean log-ratio) or 'sum'")
    r = _mean(logp, "logp", mask, logp_ref, "logp_ref")  # (B,)
    if norm == "sum":
        r = r * mask.sum(-1)  # (B,) the sequence log-ratio
    v = torch.where(desirable > 0, lam_d * torch.sigmoid(beta * (r - z0)), lam_u * torch.sigmoid(beta * (z0 - r)))
    lam_y = torch.where(desirable > 0, torch.full_like(r, lam_d), torch.full_like(r, lam_u))  # (B,)
    return -(lam_y - v).mean()


def orpo(logp_chosen, mask_chosen, logp_rejected, mask_rejected, lam):
    """ORPO, arXiv 2403.07691 eq 6-7: J = -E[L_SFT + lam L_OR], L_OR = -log sigmoid(log odds(y+) / odds(y-)).

    P(y|x) = exp((1/m) sum_t log P(y_t | x, y_<t)) (eq 3), odds = P / (1 - P) (eq 4); L_SFT is the
    mean negative log-likelihood of the chosen response's tokens (the paper's code can add the prompt's).
    """
    mc, mr = _pair_masks(mask_chosen, mask_rejected)
    lam = _checks.scalar(lam, "lam", low=0.0)
    l_c, l_r = _mean(logp_chosen, "logp_chosen", mc), _mean(logp_rejected, "logp_rejected", mr)  # (B,)
    if (l_c >= 0).any() or (l_r >= 0).any():
        raise ValueError("ORPO's odds need P(y|x) < 1: every response needs a negative mean log-prob")
    log_odds_c = l_c - torch.log(-torch.expm1(l_c))  # (B,) log P - log(1 - P)
    log_odds_r = l_r - torch.log(-torch.expm1(l_r))  # (B,)
    sft_loss = -l_c  # (B,) L_SFT on the chosen response
    or_loss = -F.logsigmoid(log_odds_c - log_odds_r)  # (B,) eq 7
    return -(sft_loss + lam * or_loss).mean()
