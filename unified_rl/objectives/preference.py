"""The objectives J of IPO, SimPO, KTO and ORPO, differentiable: the oracle for their coefficients.

Each is minus the paper's loss (to be maximised), written on the parts' objective side: the scores'
page (parts/pair_scores.py) and the loss's (parts/pair_losses/), with no reference to gradient
coefficients; the pair methods go through their composition's objective (parts/pair_composition.py). All average
over the batch: over pairs (IPO, SimPO, ORPO) or over responses (KTO). The one departure, shared with
`coefficients.preference`: IPO's h and KTO's r use the length-normalised log-ratio x = (1/|o|) sum_t
log(pi_theta / pi_ref), as DeepSeekMath's DPO (eq 12) does, where the papers sum over tokens; SimPO
(eq 4) and ORPO (eq 3) normalise by length themselves. KTO's reference point z0 is an input: the paper
estimates it on mismatched pairs and does not backpropagate through it (`coefficients.kto_reference_point`).
"""

import torch

from .. import _checks
from ..parts.pair_composition import composed, pair_step
from ..parts.pair_losses.kto import value_loss
from ..parts.pair_scores import NORMS, written


def pair_objective(composition, logp_chosen, logp_ref_chosen, mask_chosen, logp_rejected, logp_ref_rejected,
                   mask_rejected, **settings):
    """J of a preference composition on one batch of pairs; settings by the parts' field names (beta=0.3)."""
    return composition.objective(pair_step(composition, logp_chosen, logp_ref_chosen, mask_chosen, logp_rejected,
                                           logp_ref_rejected, mask_rejected, **settings))


def ipo(logp_chosen, logp_ref_chosen, mask_chosen, logp_rejected, logp_ref_rejected, mask_rejected, tau):
    """IPO, arXiv 2310.12036 eq 17: J = -E[(h - 1/(2 tau))^2], h = x+ - x- (the paper's h_pi, per token)."""
    tau = _checks.scalar(tau, "tau")
    if tau <= 0:
        raise ValueError(f"tau must be > 0 (the target margin is 1/(2 tau)), got {tau}")
    return pair_objective(composed("log_ratio", "ipo"), logp_chosen, logp_ref_chosen, mask_chosen, logp_rejected,
                          logp_ref_rejected, mask_rejected, beta=tau)


def simpo(logp_chosen, mask_chosen, logp_rejected, mask_rejected, beta, gamma):
    """SimPO, arXiv 2405.14734 eq 6: J = E[log sigmoid(beta/|y+| log pi(y+) - beta/|y-| log pi(y-) - gamma)]."""
    return pair_objective(composed("logp", "simpo"), logp_chosen, None, mask_chosen, logp_rejected, None,
                          mask_rejected, beta=beta, gamma=gamma)


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
    if norm not in NORMS:
        raise ValueError(f"unknown norm {norm!r}; choose 'mean' (per-token mean log-ratio) or 'sum'")
    r = written(_checks.per_token(logp, "logp", mask), mask, norm, _checks.per_token(logp_ref, "logp_ref", mask)).s
    return -value_loss(r, desirable, z0, beta, lam_d, lam_u).mean()


def orpo(logp_chosen, mask_chosen, logp_rejected, mask_rejected, lam):
    """ORPO, arXiv 2403.07691 eq 6-7: J = -E[L_SFT + lam L_OR], L_OR = -log sigmoid(log odds(y+) / odds(y-)).

    P(y|x) = exp((1/m) sum_t log P(y_t | x, y_<t)) (eq 3), odds = P / (1 - P) (eq 4); L_SFT is the
    mean negative log-likelihood of the chosen response's tokens (the paper's code can add the prompt's).
    """
    return pair_objective(composed("logp", "odds_ratio", ("sft",)), logp_chosen, None, mask_chosen, logp_rejected,
                          None, mask_rejected, lam=lam)
