"""kto and apo_zero_unpaired (KTO; TRL's KTOTrainer loss_types): each labelled response on its own, against z0.

    v(x) = lam_D sigma(beta (x - z0)) (desirable),  lam_U sigma(beta (z0 - x)) (undesirable)
    l = lam_y - v(x),  z0 = max(0, mean over the mismatched rows of x), not differentiated
    a = +-lam_y beta sigma(z) sigma(-z), z = beta (x - z0),  on the labelled rows; 0 on the mismatched ones

Unpaired: the batch is LabelledSamples' B labelled responses (their rewards, 1 or 0, are the labels), then B
mismatched rows (question i with response i + 1) that only give the reference point z0, the batch's mean score
(every rank's rows where the Step carries `across`): not a function of a row's own score. apo_zero_unpaired is
KTO with z0 = 0 (APO-zero, arXiv 2408.06266, unpaired). The push is largest at x = z0 and fades on both sides.
KTO, Ethayarajh et al., arXiv 2402.01306 section 4.1 (the loss: eq 8 of the current version, eq 7 in v2).
"""

from dataclasses import dataclass, field

import sympy as sp
import torch

from ...derivations.core import BETA, Derivation, _toks, sigmoid as ssig
from ...text import Text
from ..registry import PAIR_LOSSES
from ._common import NONNEGATIVE, mean, same_on_every_token

LAM_D, LAM_U = sp.Symbol("lambda_D", positive=True), sp.Symbol("lambda_U", positive=True)
Z0 = sp.Symbol("z_0", real=True)


@dataclass(frozen=True)
class Settings:
    beta: float = field(default=0.1, metadata=NONNEGATIVE)
    """beta: how sharply the value sigma(beta (x - z0)) saturates (the paper's risk aversion). The GC is
    lambda beta sigma(z) sigma(-z), z = beta (x - z0): at most lambda beta / 4 (at x = z0), fading once
    |x - z0| passes a few 1/beta"""
    lam_d: float = field(default=1.0, metadata=NONNEGATIVE)
    """lambda_D: weight of desirable responses (TRL's desirable_weight; the paper: lam_d n_d / (lam_u n_u) in
    [1, 4/3])"""
    lam_u: float = field(default=1.0, metadata=NONNEGATIVE)
    """lambda_U: weight of undesirable responses (TRL's undesirable_weight)"""


def reference_point(x, across=None):
    """KTO's z0: max(0, mean_i x_i) over the mismatched rows (every rank's with `across`), detached.

    >>> reference_point(torch.tensor([1.0, 0.0])), reference_point(torch.tensor([-1.0, -2.0]))
    (tensor(0.5000), tensor(0.))
    """
    x = x.detach()
    if across is None:
        return x.mean().clamp(min=0.0)
    n = across.sum(torch.tensor(float(x.shape[0]), dtype=x.dtype))
    return (across.sum(x.sum()) / n).clamp(min=0.0)


def kto_push(x, desirable, z0, beta, lam_d, lam_u):
    """(B,) B dJ/dx of each labelled response: +-lam_y beta sigma(z) sigma(-z), z = beta (x - z0).

    >>> kto_push(torch.tensor([0., 0.]), torch.tensor([1., 0.]), 0.0, 0.1, 1.0, 1.0)
    tensor([ 0.0250, -0.0250])
    """
    z = beta * (x - z0)
    push = beta * torch.sigmoid(z) * torch.sigmoid(-z)  # = d sigma(z) / dx
    return torch.where(desirable > 0, lam_d * push, -lam_u * push)


def _kto_gc(v):
    """The labelled half (scores v.s1, labels v.labels) pushed around z0, the mismatched half's mean score."""
    z0 = reference_point(v.s2, v.across)
    a = kto_push(v.s1, v.labels, z0, v.setting("beta"), v.setting("lam_d"), v.setting("lam_u"))
    return a, torch.zeros_like(v.s2)  # the mismatched rows only give z0


def _apo_gc(v):
    """KTO's push with z0 = 0: no reference point."""
    a = kto_push(v.s1, v.labels, 0.0, v.setting("beta"), v.setting("lam_d"), v.setting("lam_u"))
    return a, torch.zeros_like(v.s2)


# the objective's side

def value_loss(x, desirable, z0, beta, lam_d, lam_u):
    """(B,) lam_y - v(x): KTO's loss of each labelled response, x with its gradient, z0 a number."""
    v = torch.where(desirable > 0, lam_d * torch.sigmoid(beta * (x - z0)), lam_u * torch.sigmoid(beta * (z0 - x)))
    lam_y = torch.where(desirable > 0, torch.full_like(x, lam_d), torch.full_like(x, lam_u))
    return lam_y - v


def _kto_objective(v):
    """z0 from the mismatched rows, held fixed (the paper does not backpropagate through it)."""
    x_kl = v.score.s[v.B:]
    counts = torch.stack([torch.tensor(float(x_kl.shape[0]), dtype=x_kl.dtype), x_kl.sum()])
    counts = counts if v.across is None else v.across.sum(counts)
    z0 = (counts[1] / counts[0]).clamp(min=0.0).detach()
    return value_loss(v.s1, v.labels, z0, v.setting("beta"), v.setting("lam_d"), v.setting("lam_u"))


def _apo_objective(v):
    return value_loss(v.s1, v.labels, 0.0, v.setting("beta"), v.setting("lam_d"), v.setting("lam_u"))


def derive_kto(n, norm="mean"):
    """One desirable and one undesirable response of n tokens each, z0 a symbol."""
    ld, rd, lu, ru = _toks("ell^D", n), _toks("ell^refD", n), _toks("ell^U", n), _toks("ell^refU", n)
    agg = mean if norm == "mean" else sum  # norm="sum": the paper's and TRL's sequence log-ratio
    x_d, x_u = agg([a - b for a, b in zip(ld, rd)]), agg([a - b for a, b in zip(lu, ru)])
    v_d, v_u = LAM_D * ssig(BETA * (x_d - Z0)), LAM_U * ssig(BETA * (Z0 - x_u))
    J = -((LAM_D - v_d) + (LAM_U - v_u)) / 2  # minus the KTO loss over a batch of two responses
    gc = tuple(2 * n * sp.diff(J, x) for x in ld + lu)  # the 1/2 is eq 5's batch mean
    z_d, z_u = BETA * (x_d - Z0), BETA * (x_u - Z0)
    k = n if norm == "sum" else 1  # d x / d ell_t = 1 for a sum: the GC carries |o|
    hand = ((k * LAM_D * BETA * ssig(z_d) * ssig(-z_d),) * n
            + (-k * LAM_U * BETA * ssig(z_u) * ssig(-z_u),) * n)
    at_z0 = {ld[0]: sp.solve(x_d - Z0, ld[0])[0]}
    apo = -(LAM_D * (1 - ssig(BETA * x_d)) + LAM_U * ssig(BETA * x_u)) / 2  # APO-zero, unpaired (TRL)
    claims = ((Text("the desirable push is largest where x = z0 (its slope in x vanishes there)"),
               sp.diff(gc[0], ld[0]).subs(at_z0)),
              ) + same_on_every_token(gc, n, "desirable") + (
              (Text("with z0 = 0, J is TRL's apo_zero_unpaired loss (APO-zero, arXiv 2408.06266, unpaired)"),
               J.subs(Z0, 0) - apo),)
    notes = (Text("The GC is lambda_D beta sigmoid(z) sigmoid(-z) on a desirable response's tokens and "
             "-lambda_U beta sigmoid(z) sigmoid(-z) on an undesirable one's, z = beta (x - z0): the "
             "paper's gradient (eq 9) with the length-normalised log-ratio x."),
             Text("z0 is a symbol here, a constant of theta: the paper estimates it on mismatched pairs and "
             "does not backpropagate through it."),
             Text("sigmoid(z) sigmoid(-z) fades on both sides of z = 0: responses far on the right side of "
             "z0 are left alone, and so are those far on the wrong side."))
    if norm == "sum":
        notes += (Text("norm = sum: x is the sequence log-ratio, as the paper and TRL's KTOTrainer take it, so "
                       "the GC carries a factor |o|."),)
    symbols = {"logp": ld + lu, "logp_ref": rd + ru, "z0": Z0, "beta": BETA, "lam_d": LAM_D, "lam_u": LAM_U}
    return Derivation("kto", "KTO section 4.1 (v2 eq 7, 9)", J, gc, hand, None, symbols, claims, notes=notes,
                      scale=r"2\,|o_i|")


def derive_kto_sum(n):
    """KTO on summed log-ratios: the paper's and TRL's."""
    return derive_kto(n, "sum")


PAIR_LOSSES.add("kto", gc=_kto_gc, objective=_kto_objective, settings=Settings, data="labelled",
                derivation=derive_kto, derivations={"kto": derive_kto, "kto_sum": derive_kto_sum},
                summary="unpaired: raise desirable, lower undesirable responses around z0, the batch's mean score",
                cite="KTO, Ethayarajh et al., arXiv 2402.01306 section 4.1", ships_in=("TRL",))
PAIR_LOSSES.add("apo_zero_unpaired", gc=_apo_gc, objective=_apo_objective, settings=Settings, data="labelled",
                derivation=derive_kto,
                summary="KTO with z0 = 0: raise desirable and lower undesirable responses, each against pi_ref",
                cite="APO, D'Oosterlinck et al., arXiv 2408.06266 (unpaired); TRL KTOTrainer", ships_in=("TRL",))
