"""The gradient coefficients of the preference family beside DPO on bare tensors: IPO, SimPO, KTO and ORPO.

GC is |o| times the derivative of the method's objective J (`objectives.preference`) with respect to
log pi_theta(o_t | ...), as for DeepSeekMath's six (`coefficients.paper`). Each function is the method's
composition of the preference parts (parts/pair_scores.py, parts/pair_losses/: the composition its row of
methods/preference.py names) called on the two halves of a batch: the same code the trainer runs, written once. Every function returns detached
(B, T) tensors that are 0 off the masks, the per-pair GC (the trainer's is twice it, over 2B rows).

Length normalisation. DeepSeekMath writes DPO with the length-normalised log-ratio
x = (1/|o|) sum_t log(pi_theta / pi_ref) (eq 12), and SimPO and ORPO normalise by length in their
own papers. IPO and KTO print sequence log-probs (sums); here they use x too, so that the five
methods share one margin scale and differ only in the function of it they maximise (KTO's norm="sum"
takes the sums, as the paper and TRL's KTOTrainer do). With x, each coefficient is one number per
response, the same on all of its tokens: DeepSeekMath's 1/|o| shape.

Papers: IPO, Azar et al. 2023, arXiv 2310.12036 (eq 17); SimPO, Meng et al. 2024, arXiv 2405.14734
(eq 4-6); KTO, Ethayarajh et al. 2024, arXiv 2402.01306 (section 4.1, the KTO loss: eq 8 of the
current version, eq 7 in v2); ORPO, Hong et al. 2024, arXiv 2403.07691 (eq 3-7, gradient eq 8-10).
"""

import torch

from .. import _checks
from ..parts.pair_composition import composed, pair_step
from ..parts.pair_losses.kto import kto_push, reference_point
from ..parts.pair_scores import NORMS, score
from ..parts.pair_view import unstack
from ..parts.view import out


def pair_gc(composition, logp_chosen, logp_ref_chosen, mask_chosen, logp_rejected, logp_ref_rejected, mask_rejected,
            pairs_word="pairs are needed", **settings):
    """(coef_chosen, coef_rejected) of a preference composition on one batch of pairs, each (B, T): its coefficient
    over the 2B rows, halved (per pair); settings by the parts' field names (beta=0.3)."""
    step = pair_step(composition, logp_chosen, logp_ref_chosen, mask_chosen, logp_rejected, logp_ref_rejected,
                     mask_rejected, pairs_word, **settings)
    return unstack(composition.coefficient(step) / 2, mask_chosen, mask_rejected)


def ipo(logp_chosen, logp_ref_chosen, mask_chosen, logp_rejected, logp_ref_rejected, mask_rejected, tau):
    """IPO (arXiv 2310.12036, eq 17): +c on chosen tokens, -c on rejected ones, c = 1/tau - 2 (x+ - x-).

    J = -(x+ - x- - 1/(2 tau))^2 regresses the margin onto 1/(2 tau). c is linear in the margin and
    never fades: 1/tau at margin 0, 0 only at the target, negative past it (the push reverses and
    pulls the margin back), where DPO's beta*sigmoid(-beta*margin) fades towards 0 but never reverses.

    >>> m = torch.ones(1, 2); z = torch.zeros(1, 2)
    >>> ipo(z, z, m, z, z, m, tau=0.5)[0]      # margin 0: c = 1/tau
    tensor([[2., 2.]])
    """
    tau = _checks.scalar(tau, "tau")
    if tau <= 0:
        raise ValueError(f"tau must be > 0 (the target margin is 1/(2 tau)), got {tau}")
    return pair_gc(composed("log_ratio", "ipo"), logp_chosen, logp_ref_chosen, mask_chosen, logp_rejected,
                   logp_ref_rejected, mask_rejected, beta=tau)  # IPO's tau is the ipo loss's beta


def simpo(logp_chosen, mask_chosen, logp_rejected, mask_rejected, beta, gamma):
    """SimPO (arXiv 2405.14734, eq 6): +c on chosen, -c on rejected, c = beta sigmoid(gamma - beta (l+ - l-)).

    l = (1/|o|) sum_t log pi_theta(o_t | ...), the mean log-prob (eq 4's reward over beta): no pi_ref.
    It is DPO's coefficient with the log-ratio replaced by the log-prob and the margin shifted by gamma.

    >>> m = torch.ones(1, 2); z = torch.zeros(1, 2)
    >>> simpo(z, m, z, m, beta=2.0, gamma=0.0)[0]    # equal mean log-probs: c = beta * sigmoid(0)
    tensor([[1., 1.]])
    """
    return pair_gc(composed("logp", "simpo"), logp_chosen, None, mask_chosen, logp_rejected, None, mask_rejected,
                   beta=beta, gamma=gamma)


def _log_ratio(logp, logp_ref, mask, norm):
    if norm not in NORMS:
        raise ValueError(f"unknown norm {norm!r}; choose 'mean' (per-token mean log-ratio) or 'sum'")
    return score(_checks.per_token(logp, "logp", mask), mask, norm, _checks.per_token(logp_ref, "logp_ref", mask))


def kto_reference_point(logp, logp_ref, mask, norm="mean", across=None):
    """KTO's z0 (arXiv 2402.01306, section 4.1): max(0, mean_i x_i) on mismatched (x_i, y_j) rows, detached.

    The rows pair each question with another question's response; the paper shifts outputs within a
    batch, (x_1, y_2), ..., (x_m, y_1), clamps at 0 and does not backpropagate through z0. norm: x as
    in `kto` (TRL's KTOTrainer sums). across: the rows are one rank's share and the mean is over every
    rank's (distributed.across). The kto loss's page computes it (parts/pair_losses/kto.py).
    >>> kto_reference_point(torch.tensor([[-1.0], [-2.0]]), torch.tensor([[-2.0], [-2.0]]), torch.ones(2, 1))
    tensor(0.5000)
    """
    mask = _checks.response_mask(mask).detach()
    return reference_point(_log_ratio(logp, logp_ref, mask, norm)[0].s, across)


def kto(logp, logp_ref, mask, desirable, z0, beta, lam_d=1.0, lam_u=1.0, norm="mean"):
    """KTO (arXiv 2402.01306, section 4.1): GC = +-k lambda_y beta sigmoid(z) sigmoid(-z), z = beta (x - z0).

    Unpaired: each response is desirable (1) or undesirable (0) on its own. J = mean_i v(x_i) with
    v = lam_d sigmoid(beta (x - z0)) for desirable and lam_u sigmoid(beta (z0 - x)) for undesirable
    responses, x the log-ratio and z0 the detached reference point. The push is largest at x = z0
    and fades on both sides: KTO stops pushing on responses already far on the right side of z0, and
    also on those far on the wrong side (the paper's eq 9 and its comment). norm="mean": x is the
    per-token mean log-ratio and k = 1; "sum" (the paper's and TRL's): x is the sum and k = |o|.
    With z0 = 0 this is TRL's KTO loss_type "apo_zero_unpaired" (APO-zero, arXiv 2408.06266, unpaired).
    The scores' and the kto loss's pages, with z0 given (the registered method takes it from its batch).

    >>> kto(torch.zeros(2, 1), torch.zeros(2, 1), torch.ones(2, 1), torch.tensor([1., 0.]), 0.0, beta=0.1)
    tensor([[ 0.0250],
            [-0.0250]])
    """
    mask = _checks.response_mask(mask).detach()
    desirable = _checks.per_sequence(desirable, "desirable", mask.shape[0]).to(mask.dtype)
    if not ((desirable == 0) | (desirable == 1)).all():
        raise ValueError("desirable must contain only 0 and 1 (undesirable / desirable)")
    beta = _checks.scalar(beta, "beta", low=0.0)
    lam_d, lam_u = _checks.scalar(lam_d, "lam_d", low=0.0), _checks.scalar(lam_u, "lam_u", low=0.0)
    z0 = _checks.scalar(z0.item() if torch.is_tensor(z0) else z0, "z0")
    sc, k = _log_ratio(logp, logp_ref, mask, norm)
    return out((kto_push(sc.s, desirable, z0, beta, lam_d, lam_u) * k)[:, None] * mask, mask)


def orpo(logp_chosen, mask_chosen, logp_rejected, mask_rejected, lam):
    """ORPO (arXiv 2403.07691, eq 6-7): GC = 1 + lam P-/D on chosen tokens, -lam P- (1-P+) / ((1-P-) D) on rejected.

    P = exp(l), l the mean log-prob (eq 3), D = P-(1-P+) + P+(1-P-). This is eq 8-10's
    delta(d) h(d): sigmoid(-log OR) / (1 - P) on each response, rewritten to stay finite when a chosen
    response has P+ = 1. The chosen tokens also get SFT's GC of 1 (the L_SFT of eq 6); no pi_ref.

    >>> m = torch.ones(1, 1); half = torch.full((1, 1), -0.6931471805599453, dtype=torch.float64)
    >>> [c.item() for c in orpo(half, m.double(), half, m.double(), lam=0.1)]   # P+ = P- = 1/2
    [1.1, -0.1]
    """
    return pair_gc(composed("logp", "odds_ratio", ("sft",)), logp_chosen, None, mask_chosen, logp_rejected, None,
                   mask_rejected, lam=lam)
