"""GKD's generalized JSD on the sampled token: the divergence of two coins, (o_t, any other token), student vs teacher.

GKD (Agarwal et al., arXiv 2306.13649, eq 2-3) minimises, at each position of a sequence, the generalized
Jensen-Shannon divergence between the student's and the teacher's next-token distributions over the whole
vocabulary:

    JSD_beta(S || T) = beta KL(T || M) + (1 - beta) KL(S || M),   M = (1 - beta) S + beta T
    (TRL: beta = 0 is KL(T || S), beta = 1 is KL(S || T))

That loss is not eq 5's: its gradient is sum_v c_v grad log pi_theta(v | prefix) over every token v of the
vocabulary, not a coefficient on the sampled token's grad log pi_theta(o_t) (and with the full distribution the
sampled token plays no part). What a coefficient on o_t can carry is a divergence that is a function of
pi_theta(o_t) alone. TRL 1.16 has one (IW-OPD's `loss_top_k=1, reverse_kl_top_1_mode="sampled", loss_add_tail=True`):
the support {o_t} plus a tail bucket for everything else, so each distribution is the coin (p, 1 - p), with
p = pi_theta(o_t), q = pi_T(o_t):

    f_{i,t} = -A D_beta((p, 1-p) || (q, 1-q))                      (its gradient is pathwise: no score term)
    GC piece = -A dD/d log p =  A (q - p) / (1 - p)                                       beta = 0
                             = -A p [log(p/q) - log((1-p)/(1-q))]                         beta = 1
                             = -A (1 - beta) p [log(p/m) - log((1-p)/(1-m))],  m = (1-beta) p + beta q

At beta = 1 this is TRL's sparse top-1 loss exactly. For 0 < beta < 1 TRL puts the teacher's top-1 token in the
support as well, whose student log-prob is not the sampled token's: the two agree exactly where the teacher's top
token is o_t and differ elsewhere (tests/test_teachers.py shows both). The tails are TRL's: log(1 - p) computed as
log(-expm1(min(log p, -1e-7))), so a teacher token above 1 - 1e-7 gets TRL's clamped tail (the GC is the exact
derivative of that loss; for a student token that sure, TRL's clamp also stops the tail's gradient, this does not).
GKD's other axis, lambda (the share of on-policy batches), is the data source's: RLConfig.gkd_lambda,
data.OnOrOffPolicy.
"""

import math
from dataclasses import dataclass

import torch

from ... import _checks
from ..registry import POLICY_TERMS

TAIL_CLAMP = -1e-7  # TRL's _add_tail_bucket: a support's log-mass is held below this before the tail is taken


@dataclass(frozen=True)
class Settings:
    gkd_beta: float = 0.5
    """GKD's beta: 0 the forward KL(T || S), 1 the reverse KL(S || T), between them the generalized JSD"""


def _tail(logp):
    """log(1 - p) as TRL's tail bucket computes it."""
    return torch.log(-torch.expm1(logp.clamp(max=TAIL_CLAMP)))


def gkd(adv, logp, teacher_logp, keep, beta):
    """(B, T) -A dD_beta/d log p of the sampled token's coin (p, 1 - p) against the teacher's (q, 1 - q).

    >>> lp, lq = torch.log(torch.tensor([[0.5]])), torch.log(torch.tensor([[0.75]]))
    >>> gkd(torch.ones(1, 1), lp, lq, torch.ones(1, 1), 0.0)  # (q - p) / (1 - p)
    tensor([[0.5000]])
    """
    lp, lq = logp.detach(), teacher_logp.detach()
    p, lp1, lq1 = lp.exp(), _tail(lp), _tail(lq)  # the tails' masses as TRL's: 1 - p, 1 - q but for the clamp
    if beta == 0:
        piece = lq.exp() - lq1.exp() * p / lp1.exp()  # (q - p) / (1 - p)
    elif beta == 1:
        piece = -p * ((lp - lq) - (lp1 - lq1))
    else:
        m = (1 - beta) * p + beta * lq.exp()  # the mixture's mass on o_t, and on the rest
        rest = (1 - beta) * lp1.exp() + beta * lq1.exp()
        piece = -(1 - beta) * p * ((lp - m.log()) - (lp1 - rest.log()))
    return adv * piece * keep


def _gc(v, adv, keep):
    beta = _checks.scalar(v.setting("gkd_beta", 0.5), "gkd_beta", low=0.0, high=1.0)
    if v.teacher_logp is None:
        raise ValueError("gkd needs a teacher's log-probs (Step.teacher_logp), or pi_ref's as the teacher")
    return gkd(adv, v.logp, v.teacher_logp, keep, beta)


def objective(v, adv):
    """-A JSD_beta of the two coins, written as TRL's _jsd_divergence writes the divergence of two supports."""
    beta = v.setting("gkd_beta", 0.5)
    s = torch.stack([v.logp, torch.log(-torch.expm1(v.logp.clamp(max=TAIL_CLAMP)))], -1)  # (B, T, 2) log-probs
    t = torch.stack([v.teacher_logp, torch.log(-torch.expm1(v.teacher_logp.clamp(max=TAIL_CLAMP)))], -1).detach()
    if beta == 0:
        d = (t.exp() * (t - s)).sum(-1)
    elif beta == 1:
        d = (s.exp() * (s - t)).sum(-1)
    else:
        mix = torch.logsumexp(torch.stack([s + math.log1p(-beta), t + math.log(beta)]), 0)  # log M
        d = beta * (t.exp() * (t - mix)).sum(-1) + (1 - beta) * (s.exp() * (s - mix)).sum(-1)
    return -adv * d


def derive(n):
    """One response of n tokens, 0 < beta < 1: J = -mean_t JSD_beta((p, 1-p) || (q, 1-q)), p = e^ell, q = e^ell^T."""
    import sympy as sp

    from ...derivations.core import Derivation
    from ...derivations.core import _ragged, _ragged_gc as gc_of
    from ...text import Text
    l, lt = _ragged("ell", (n,))[0], _ragged("ell^T", (n,))[0]
    beta = sp.Symbol("beta_GKD", positive=True)

    def kl(a, b):  # KL of the coin (a, 1 - a) from (b, 1 - b)
        return a * sp.log(a / b) + (1 - a) * sp.log((1 - a) / (1 - b))

    def jsd(p, q):
        m = (1 - beta) * p + beta * q
        return beta * kl(q, m) + (1 - beta) * kl(p, m)
    J = -sum(jsd(sp.exp(x), sp.exp(y)) for x, y in zip(l, lt)) / n
    hand = []
    for x, y in zip(l, lt):
        p, m = sp.exp(x), (1 - beta) * sp.exp(x) + beta * sp.exp(y)
        hand.append(-(1 - beta) * p * (sp.log(p / m) - sp.log((1 - p) / (1 - m))))
    claims = tuple((Text("where the teacher gives token {t} the policy's probability its GC is 0", t=t + 1),
                    h.subs(y, x)) for t, (h, x, y) in enumerate(zip(hand, l, lt)))
    notes = (Text("The divergence of two coins (the sampled token, any other) depends on the sampled token's "
                  "probability alone, so its gradient is a coefficient on that token; GKD's divergence over the "
                  "whole vocabulary is not."),)
    return Derivation("gkd", "arXiv 2306.13649, eq 2-3; TRL IW-OPD top-1", J, gc_of(J, (l,)), tuple(hand), None,
                      {"logp": l, "teacher_logp": lt, "gkd_beta": beta}, claims, notes=notes)


POLICY_TERMS.add("gkd", gc=_gc, objective=objective, settings=Settings, derivation=derive, reads_old=False,
                 teacher=True, summary="the generalized JSD between the student's and the teacher's coin (the "
                                       "sampled token, the rest): GKD on the sampled token",
                 cite="GKD, Agarwal et al., arXiv 2306.13649 eq 2-3; TRL IW-OPD's sparse top-1 divergence",
                 ships_in=("TRL",))
