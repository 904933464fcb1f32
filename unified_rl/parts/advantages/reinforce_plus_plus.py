"""REINFORCE++'s advantage (verl's `reinforce_plus_plus`, `reinforce_plus_plus_baseline`): the return, whitened
over the whole batch's tokens.

    A_t = R - sum_{t' >= t} beta k_t'   (the KL in the reward, from the sampler's log-probs)   then (A - mean) / (std + eps)

With reinforce_baseline="group" (and G > 1) each group's mean reward is subtracted first (the paper's "with
baseline", verl's reinforce_plus_plus_baseline). reinforce_kl_span="response" puts the whole response's KL into its
score before the group's mean is taken, on every token alike, as verl's reinforce_plus_plus_baseline sums its
token-level rewards. The batch's statistics are every rank's (`across`).
REINFORCE++: Hu et al., arXiv 2501.03262.
"""

from dataclasses import dataclass, field

import sympy as sp
import torch

from ... import _checks, advantages
from ...derivations.core import BETA, Derivation, _one, _ragged_gc
from ...text import Text
from ..registry import ADVANTAGES


@dataclass(frozen=True)
class Settings:
    reinforce_baseline: str = field(default="group", metadata={"choices": ("group", "none")})
    """subtract each group's mean reward before the batch normalisation (the paper's "with baseline", verl's
    reinforce_plus_plus_baseline), or not (verl's reinforce_plus_plus)"""
    reinforce_kl_span: str = field(default="to_go", metadata={"choices": ("to_go", "response")})
    """with the KL in the reward: token t's return holds the KL of t and later tokens (the paper's; verl's
    reinforce_plus_plus), or every token holds the whole response's (verl's reinforce_plus_plus_baseline)"""


def _returns(v, r):
    m = v.full.double()
    if v.kl_reward is None:
        return r[:, None] * m
    beta = _checks.scalar(v.cfg.beta, "beta", low=0.0)
    return r[:, None] * m - beta * advantages.returns_to_go(v.kl_reward.double() * m, m)


def _gc(v):
    if v.scores is None:
        raise ValueError("reinforce_plus_plus needs rewards")
    r = _checks.per_sequence(v.scores, "rewards", v.full.shape[0]).double()
    _checks.groups(v.full.shape[0], v.group_size)
    baseline = v.setting("reinforce_baseline", "group")
    if baseline not in ("group", "none"):
        raise ValueError(f"unknown REINFORCE++ baseline {baseline!r}; choose group or none")
    span = v.setting("reinforce_kl_span", "to_go")
    if span not in ("to_go", "response"):
        raise ValueError(f"unknown reinforce_kl_span {span!r}; choose to_go or response")
    whole = span == "response" and v.kl_reward is not None
    if whole:  # the response's KL joins its score before the group's mean
        r = r - _checks.scalar(v.cfg.beta, "beta", low=0.0) * (v.kl_reward.double() * v.full.double()).sum(-1)
    if v.group_size > 1 and baseline == "group":
        r = r - r.view(-1, v.group_size).mean(-1).repeat_interleave(v.group_size)
    adv = r[:, None] * v.full.double() if whole else _returns(v, r)
    return advantages.batch_normalised(adv, v.full.double(), 1e-6, v.across).to(v.full.dtype).detach()


def objective(v):
    """R (minus the group mean) minus the KL summed from t on, normalised over the batch's tokens, written out."""
    r = torch.as_tensor(v.scores).double().view(-1, v.group_size)
    T = v.full.shape[1]
    kl = torch.zeros_like(v.full).double() if v.kl_reward is None else (v.kl_reward * v.full).double()
    whole = v.setting("reinforce_kl_span", "to_go") == "response"
    if whole:
        r = r - v.cfg.beta * kl.sum(-1).view_as(r)
    if v.group_size > 1 and v.setting("reinforce_baseline", "group") == "group":
        r = r - r.mean(-1, keepdim=True)
    later = torch.stack([kl[:, t:].sum(-1) for t in range(T)], 1)  # sum_{t' >= t}
    A = r.view(-1, 1) * torch.ones_like(kl) if whole else r.view(-1, 1) - v.cfg.beta * later
    on = v.full.bool()
    return ((A - A[on].mean()) / (A[on].std() + 1e-6)).to(v.mask.dtype)


def derive_reinforce_pp(n):
    """One response: the return R - beta sum_{t' >= t} k1 (the KL in the reward), normalised by the batch."""
    l, lo, lref = _one(n, "ell", "ell^old", "ell^ref")
    R, mu, sigma = sp.Symbol("R", real=True), sp.Symbol("mu", real=True), sp.Symbol("sigma", positive=True)
    A = [R - BETA * sum(y - z for y, z in zip(lo[t:], lref[t:])) for t in range(n)]  # KL(i) = log pi_old/pi_ref
    An = [(a - mu) / sigma for a in A]  # batch mean and std: constants of theta
    J = sum(sp.exp(x - y) * a for x, y, a in zip(l, lo, An)) / n
    gc = _ragged_gc(J, (l,))
    hand = tuple(sp.exp(x - y) * a for x, y, a in zip(l, lo, An))
    claims = tuple((Text("at pi_old = pi_theta token {t}'s GC is the normalised return A_t", t=t + 1),
                    (g - a).subs(dict(zip(lo, l))))
                   for t, (g, a) in enumerate(zip(gc, An)))
    notes = (Text("The KL sits in the return: token t's advantage holds -beta times the k1 of itself and every "
                  "later token (kl.gc.kl_in_reward), then the batch's mean and std normalise it."),)
    symbols = {"rewards": R, "logp": l, "logp_old": lo, "logp_ref": lref, "beta": BETA, "mu": mu, "sigma": sigma}
    return Derivation("reinforce_pp", "arXiv 2501.03262", J, gc, hand, tuple(An), symbols, claims, notes=notes)


ADVANTAGES.add("reinforce_plus_plus", gc=_gc, objective=objective, settings=Settings,
               summary="returns with the KL in them, normalised over the whole batch's tokens",
               cite="REINFORCE++, Hu et al., arXiv 2501.03262", aliases=("reinforce++",), ships_in=("verl",),
               derivation=derive_reinforce_pp, derivations={"reinforce_pp": derive_reinforce_pp})
