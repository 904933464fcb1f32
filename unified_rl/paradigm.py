"""Eq 5 of DeepSeekMath as a loss, and a Method as the triple (data source, reward, coefficient).

    grad J(theta) = E[(q, o) ~ D] ( 1/|o| sum_t GC(q, o, t) grad log pi_theta(o_t | q, o_<t) )

`surrogate_loss` is "a loss whose gradient, for the right data, is the policy gradient" (Spinning Up):
its value means nothing, only its gradient does. Reference: arXiv 2402.03300, section 5.2.1.
"""

from dataclasses import dataclass, field
from typing import Any, Callable, Optional

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

    data_source: Lab -> an object whose next_batch() gives a Rollout (where (q, o) come from).
    reward:      Rollout -> scores (how good o is); None for SFT, whose data is human-selected.
    coefficient: Step -> (B, T) GC(q, o, t), how hard to push each token's log-prob.
    advantage:   optional (lab, batch, scores, logp_ref, critic) -> (B, T) advantages, computed
                 once per batch before the updates (PPO's GAE, GRPO's process supervision).
    critic:      optional Lab -> a value model with its own loss (PPO only: the one extra loss).
    defaults:    hyper-parameters (RLConfig fields) this method needs changed from the shared ones.
    """

    name: str
    data_source: Callable
    reward: Optional[Callable]
    coefficient: Callable
    advantage: Optional[Callable] = None
    critic: Optional[Callable] = None
    summary: str = ""
    defaults: dict = field(default_factory=dict)


@dataclass
class Step:
    """What a coefficient may look at: the batch, its scores and the per-token log-probs."""

    batch: Any  # Rollout
    scores: Any  # the reward's output (B,), or None
    logp: Any  # (B, T) log pi_theta, with grad
    logp_old: Any  # (B, T) log pi of the sampling policy (detached)
    logp_ref: Any  # (B, T) log pi_ref, or None
    adv: Any  # (B, T) from Method.advantage, or None
    cfg: Any  # the run's RLConfig
