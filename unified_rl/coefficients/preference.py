"""The gradient coefficients of the preference family beside DPO: IPO, SimPO, KTO and ORPO.

GC is |o| times the derivative of the method's objective J (`objectives.preference`) with respect to
log pi_theta(o_t | ...), as for DeepSeekMath's six (`coefficients.paper`). Every function is pure,
returns detached (B, T) tensors that are 0 off the masks, and names the equation it implements.

Length normalisation. DeepSeekMath writes DPO with the length-normalised log-ratio
x = (1/|o|) sum_t log(pi_theta / pi_ref) (eq 12), and SimPO and ORPO normalise by length in their
own papers. IPO and KTO print sequence log-probs (sums); here they use x too, so that the five
methods share one margin scale and differ only in the function of it they maximise (KTO's norm="sum"
takes the sums, as the paper and TRL's KTOTrainer do). With x, each
coefficient is one number per response, the same on all of its tokens: DeepSeekMath's 1/|o| shape.
With sums, |o| dJ/d ell_t would carry a factor |o|: longer responses would be pushed harder.

Papers: IPO, Azar et al. 2023, arXiv 2310.12036 (eq 17); SimPO, Meng et al. 2024, arXiv 2405.14734
(eq 4-6); KTO, Ethayarajh et al. 2024, arXiv 2402.01306 (section 4.1, the KTO loss: eq 8 of the
current version, eq 7 in v2); ORPO, Hong et al. 2024, arXiv 2403.07691 (eq 3-7, gradient eq 8-10).
"""

import torch

from .. import _checks
from .paper import _mask, _seq_mean, sft


def _paired(mask_chosen, mask_rejected):
    """The two masks, checked to hold the same number of responses (pair i = row i of each)."""
    mc, mr = _mask(mask_chosen), _mask(mask_rejected)
    if mc.shape[0] != mr.shape[0]:
        raise ValueError(f"{mc.shape[0]} chosen responses but {mr.shape[0]} rejected ones: pairs are needed")
    return mc, mr


def _mean_logp(logp, name, mask, logp_ref=None, ref_name=None):
    """Detached length-normalised (1/|o|) sum_t (logp - logp_ref) of each response. (B, T) -> (B,)"""
    x = _checks.per_token(logp, name, mask).detach()
    if logp_ref is not None:
        x = x - _checks.per_token(logp_ref, ref_name, mask).detach()
    return _seq_mean(x, mask)


def ipo(logp_chosen, logp_ref_chosen, mask_chosen, logp_rejected, logp_ref_rejected, mask_rejected, tau):
    """IPO (arXiv 2310.12036, eq 17): +c on chosen tokens, -c on rejected ones, c = 1/tau - 2 (x+ - x-).

    J = -(x+ - x- - 1/(2 tau))^2 regresses the margin onto 1/(2 tau). c is linear in the margin and
    never fades: 1/tau at margin 0, 0 only at the target, negative past it (the push reverses and
    pulls the margin back), where DPO's beta*sigmoid(-beta*margin) fades towards 0 but never reverses.

    >>> m = torch.ones(1, 2); z = torch.zeros(1, 2)
    >>> ipo(z, z, m, z, z, m, tau=0.5)[0]      # margin 0: c = 1/tau
    tensor([[2., 2.]])
    """
    mc, mr = _paired(mask_chosen, mask_rejected)
    tau = _checks.scalar(tau, "tau")
    if tau <= 0:
        raise ValueError(f"tau must be > 0 (the target margin is 1/(2 tau)), got {tau}")
    margin = (_mean_logp(logp_chosen, "logp_chosen", mc, logp_ref_chosen, "logp_ref_chosen")
              - _mean_logp(logp_rejected, "logp_rejected", mr, logp_ref_rejected, "logp_ref_rejected"))  # (B,)
    c = 1 / tau - 2 * margin  # (B,) = 2 (1/(2 tau) - margin)
    return c[:, None] * mc, -c[:, None] * mr


def simpo(logp_chosen, mask_chosen, logp_rejected, mask_rejected, beta, gamma):
    """SimPO (arXiv 2405.14734, eq 6): +c on chosen, -c on rejected, c = beta sigmoid(gamma - beta (l+ - l-)).

    l = (1/|o|) sum_t log pi_theta(o_t | ...), the mean log-prob (eq 4's reward over beta): no pi_ref.
    It is DPO's coefficient with the log-ratio replaced by the log-prob and the margin shifted by gamma.

    >>> m = torch.ones(1, 2); z = torch.zeros(1, 2)
    >>> simpo(z, m, z, m, beta=2.0, gamma=0.0)[0]    # equal mean log-probs: c = beta * sigmoid(0)
    tensor([[1., 1.]])
    """
    mc, mr = _paired(mask_chosen, mask_rejected)
    beta, gamma = _checks.scalar(beta, "beta", low=0.0), _checks.scalar(gamma, "gamma")
    margin = _mean_logp(logp_chosen, "logp_chosen", mc) - _mean_logp(logp_rejected, "logp_rejected", mr)  # (B,)
    c = beta * torch.sigmoid(gamma - beta * margin)  # (B,)
    return c[:, None] * mc, -c[:, None] * mr


def _log_ratio(logp, logp_ref, mask, norm):
    """Detached log-ratio of each response: its per-token mean (norm="mean") or its sum ("sum"). (B,)"""
    if norm not in ("mean", "sum"):
        raise ValueError(f"unknown norm {norm!r}; choose 'mean' (per-token mean log-ratio) or 'sum'")
    x = _mean_logp(logp, "logp", mask, logp_ref, "logp_ref")
    return x * mask.sum(-1) if norm == "sum" else x


def kto_reference_point(logp, logp_ref, mask, norm="mean", across=None):
    """KTO's z0 (arXiv 2402.01306, section 4.1): max(0, mean_i x_i) on mismatched (x_i, y_j) rows, detached.

    The rows pair each question with another question's response; the paper shifts outputs within a
    batch, (x_1, y_2), ..., (x_m, y_1), clamps at 0 and does not backpropagate through z0. norm: x as
    in `kto` (TRL's KTOTrainer sums). across: the rows are one rank's share and the mean is over every
    rank's (distributed.across).
    >>> kto_reference_point(torch.tensor([[-1.0], [-2.0]]), torch.tensor([[-2.0], [-2.0]]), torch.ones(2, 1))
    tensor(0.5000)
    """
    mask = _mask(mask)
    x = _log_ratio(logp, logp_ref, mask, norm)  # (B,)
    if across is None:
        return x.mean().clamp(min=0.0)
    n = across.sum(torch.tensor(float(x.shape[0]), dtype=x.dtype))
    return (across.sum(x.sum()) / n).clamp(min=0.0)


def kto(logp, logp_ref, mask, desirable, z0, beta, lam_d=1.0, lam_u=1.0, norm="mean"):
    """KTO (arXiv 2402.01306, section 4.1): GC = +-k lambda_y beta sigmoid(z) sigmoid(-z), z = beta (x - z0).

    Unpaired: each response is desirable (1) or undesirable (0) on its own. J = mean_i v(x_i) with
    v = lam_d sigmoid(beta (x - z0)) for desirable and lam_u sigmoid(beta (z0 - x)) for undesirable
    responses, x the log-ratio and z0 the detached reference point. The push is largest at x = z0
    and fades on both sides: KTO stops pushing on responses already far on the right side of z0, and
    also on those far on the wrong side (the paper's eq 9 and its comment). norm="mean": x is the
    per-token mean log-ratio and k = 1; "sum" (the paper's and TRL's): x is the sum and k = |o|.
    With z0 = 0 this is TRL's KTO loss_type "apo_zero_unpaired" (APO-zero, arXiv 2408.06266, unpaired).

    >>> kto(torch.zeros(2, 1), torch.zeros(2, 1), torch.ones(2, 1), torch.tensor([1., 0.]), 0.0, beta=0.1)
    tensor([[ 0.0250],
            [-0.0250]])
    """
    mask = _mask(mask)
    desirable = _checks.per_sequence(desirable, "desirable", mask.shape[0]).to(mask.dtype)
    if not ((desirable == 0) | (desirable == 1)).all():
        raise ValueError("desirable must contain only 0 and 1 (undesirable / desirable)")
    beta = _checks.scalar(beta, "beta", low=0.0)
    lam_d, lam_u = _checks.scalar(lam_d, "lam_d", low=0.0), _checks.scalar(lam_u, "lam_u", low=0.0)
    z0 = _checks.scalar(z0.item() if torch.is_tensor(z0) else z0, "z0")
    z = beta * (_log_ratio(logp, logp_ref, mask, norm) - z0)  # (B,)
    push = beta * torch.sigmoid(z) * torch.sigmoid(-z)  # (B,) = d sigmoid(z) / dx
    if norm == "sum":
        push = push * mask.sum(-1)  # (B,) k = |o|: d x / d ell_t = 1, not 1/|o|
    c = torch.where(desirable > 0, lam_d * push, -lam_u * push)  # (B,)
    return c[:, None] * mask


def orpo(logp_chosen, mask_chosen, logp_rejected, mask_rejected, lam):
    """ORPO (arXiv 2403.07691, eq 6-7): GC = 1 + lam P-/D on chosen tokens, -lam P- (1-P+) / ((1-P-) D) on rejected.

    P = exp(l), l the mean log-prob (eq 3), D = P-(1-P+) + P+(1-P-). This is eq 8-10's
    delta(d) h(d): sigmoid(-log OR) / (1 - P) on each response, rewritten to stay finite when a chosen
    response has P+ = 1. The chosen tokens also get SFT's GC of 1 (the L_SFT of eq 6); no pi_ref.

    >>> m = torch.ones(1, 1); half = torch.full((1, 1), -0.6931471805599453, dtype=torch.float64)
    >>> [c.item() for c in orpo(half, m.double(), half, m.double(), lam=0.1)]   # P+ = P- = 1/2
    [1.1, -0.1]
    """
    mc, mr = _paired(mask_chosen, mask_rejected)
    lam = _checks.scalar(lam, "lam", low=0.0)
    l_c, l_r = _mean_logp(logp_chosen, "logp_chosen", mc), _mean_logp(logp_rejected, "logp_rejected", mr)  # (B,)
    for name, l in (("chosen", l_c), ("rejected", l_r)):
        if (l > 0).any():
            raise ValueError(f"a {name} response has a positive mean log-prob: ORPO needs log-probabilities")
    if (l_r == 0).any():
        raise ValueError("a rejected response has probability 1 (mean log-prob 0): ORPO's gradient is infinite")
    p_c, p_r = l_c.exp(), l_r.exp()  # (B,) eq 3's P
    q_c, q_r = -torch.expm1(l_c), -torch.expm1(l_r)  # (B,) 1 - P, accurate near P = 1
    d = p_r * q_c + p_c * q_r  # (B,)
    c_chosen = lam * p_r / d  # (B,) sigmoid(-log OR) / (1 - P+)
    c_rejected = lam * p_r * q_c / (q_r * d)  # (B,) sigmoid(-log OR) / (1 - P-)
    return sft(mc) + c_chosen[:, None] * mc, -c_rejected[:, None] * mr
