"""Eq 5 of DeepSeekMath as a loss, and a Method as the triple (data source, reward, coefficient).

    grad J(theta) = E[(q, o) ~ D] ( 1/|o| sum_t GC(q, o, t) grad log pi_theta(o_t | q, o_<t) )

`surrogate_loss` is "a loss whose gradient, for the right data, is the policy gradient" (Spinning Up):
its value means nothing, only its gradient does. Reference: arXiv 2402.03300, section 5.2.1.
"""

from dataclasses import dataclass, field
from typing import Any, Callable

from . import _checks


def surrogate_loss(logp, coef, mask):
    """-mean_i 1/|o_i| sum_t coef.detach() * logp: its gradient is minus eq 5's."""
    mask = _checks.response_mask(mask)
    logp = _checks.per_token(logp, "logp", mask)
    coef = _checks.per_token(coef, "coef", mask)
    per_seq = (coef.detach() * logp * mask).sum(-1) / mask.sum(-1)  # (B,)
    return -per_seq.mean()


@dataclass(frozen=True)
class Method:
    """A post-training method is three choices; the trainer knows nothing else about it.

    data_source: where (q, o) come from (a fixed dataset, a frozen policy, the current policy).
    reward:      how good o is (human selection, a rule, a model, per-step process rewards).
    coefficient: GC(q, o, t), how hard to push each token's log-prob up or down.
    """

    name: str
    data_source: Any
    reward: Any
    coefficient: Callable
    notes: dict = field(default_factory=dict)
