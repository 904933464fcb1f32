"""On-policy distillation's advantage: each token's log-ratio of a teacher to the policy, the reverse KL's reward.

    A_{i,t} = sg( log pi_T(o_{i,t}) - log pi_theta(o_{i,t}) )                    (opd_gamma = 0)

The reverse KL to a teacher, KL(pi_theta || pi_T) = E_{o ~ pi_theta} sum_t log (pi_theta / pi_T)(o_t), as a
per-token reward: -log(pi_theta / pi_T) of each sampled token, not summed into returns (a discount of 0), and the
pathwise gradient of the log pi_theta inside dropped (its expectation under pi_theta is 0). With REINFORCE's
policy term GC = A: TRL 1.16's sampled-token distillation (SDFT's `distillation_mode="sampled_token"`, IW-OPD's
loss at gamma 0), Thinking Machines' on-policy distillation, GKD's reverse KL on the sampled tokens (Agarwal et
al., arXiv 2306.13649). The teacher's log-probs come once per batch (`Step.teacher_logp`, data/teachers.py: a
checkpoint, pi_ref, or the policy shown the reference solution: SDFT, arXiv 2601.19897; OPSD, arXiv 2601.18734).

IW-OPD (TRL's `iw_opd`, "On the Position Bias of On-Policy Distillation", arXiv 2606.22600) weighs each token by
how much of the response's |A| is still ahead of it:

    w_{i,t} = 1 + gamma (1 - sum_{s<t} |A_{i,s}| / max(sum_s |A_{i,s}|, 1e-8)),   A_{i,t} -> sg(w_{i,t}) A_{i,t}
"""

from dataclasses import dataclass

import torch

from ... import _checks
from ..registry import ADVANTAGES

EPS = 1e-8  # TRL's iw_opd_epsilon: the floor of a response's total |A|


@dataclass(frozen=True)
class Settings:
    opd_gamma: float = 0.0
    """IW-OPD's gamma: each token weighed 1 + gamma (the share of the response's |A| not yet behind it); 0: OPD"""


def opd(teacher_logp, logp, mask, gamma=0.0):
    """(B, T) the teacher's log-ratio to the policy per response token, IW-OPD's weights for gamma > 0.

    >>> opd(torch.tensor([[-1., -2.]]), torch.tensor([[-2., -1.]]), torch.ones(1, 2))  # +1 up, -1 down
    tensor([[ 1., -1.]])
    >>> opd(torch.tensor([[-1., -2.]]), torch.tensor([[-2., -1.]]), torch.ones(1, 2), gamma=0.5)
    tensor([[ 1.5000, -1.2500]])
    """
    a = (teacher_logp - logp) * mask
    if gamma:
        size = a.abs()
        before = size.cumsum(-1) - size  # (B, T) |A| of the tokens before t
        a = a * (1 + gamma * (1 - before / size.sum(-1, keepdim=True).clamp(min=EPS)))
    return a.detach()


def _teacher(v):
    if v.teacher_logp is None:
        raise ValueError("opd needs a teacher's log-probs (Step.teacher_logp), or pi_ref's as the teacher")
    return v.teacher_logp


def _gc(v):
    gamma = _checks.scalar(v.setting("opd_gamma", 0.0), "opd_gamma", low=0.0)
    return opd(_teacher(v), v.logp, v.full, gamma) * v.full


def objective(v):
    """(B, T) sg(log pi_T - log pi_theta), IW-OPD's position weights written out over each response."""
    log_ratio = ((v.teacher_logp - v.logp) * v.full).detach()
    gamma = v.setting("opd_gamma", 0.0)
    if not gamma:
        return log_ratio
    ahead = torch.flip(torch.cumsum(torch.flip(log_ratio.abs(), [-1]), -1), [-1])  # |A| of token t and after it
    actual = ahead[:, :1]  # the response's whole |A|
    total = torch.maximum(actual, torch.full_like(actual, EPS))
    return log_ratio * (1 + gamma * (total - actual + ahead) / total)  # 1 + gamma (1 - |A| before t / total)


def derive(n):
    """One response of n tokens (gamma 0): J = mean_t sg(ell^T_t - ell_t) ell_t, sg(ell) an ell-bar set to ell after
    differentiating."""
    from ...derivations.core import Derivation
    from ...derivations.core import _ragged, _ragged_gc as gc_of
    from ...text import Text
    l, lt, bar = _ragged("ell", (n,))[0], _ragged("ell^T", (n,))[0], _ragged("ellbar", (n,))[0]
    J = sum((y - b) * x for x, y, b in zip(l, lt, bar)) / n
    derived = tuple(g.subs(dict(zip(bar, l))) for g in gc_of(J, (l,)))
    hand = tuple(y - x for x, y in zip(l, lt))
    claims = tuple((Text("where the teacher gives token {t} the policy's probability its GC is 0", t=t + 1),
                    h.subs(y, x)) for t, (h, x, y) in enumerate(zip(hand, l, lt)))
    notes = (Text("The coefficient is the per-token reward of the reverse KL to the teacher, log pi_T - log "
                  "pi_theta: a token the teacher likes more than the policy is pushed up, one it likes less down."),)
    return Derivation("opd", "arXiv 2306.13649; TRL sampled-token distillation", J, derived, hand, None,
                      {"teacher_logp": lt, "logp": l}, claims, notes=notes)


ADVANTAGES.add("opd", gc=_gc, objective=objective, settings=Settings, derivation=derive, teacher=True,
               summary="log pi_teacher - log pi_theta of each token: the reverse KL to a frozen teacher as a reward",
               cite="On-policy distillation: GKD, Agarwal et al., arXiv 2306.13649; IW-OPD, arXiv 2606.22600",
               aliases=("on_policy_distillation", "iw_opd"), ships_in=("TRL",))
