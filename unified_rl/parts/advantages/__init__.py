"""Advantage estimators: where each token's A comes from (one page each, registered where defined)."""

from . import simple, grpo, rloo, reinforce_plus_plus, remax, baselines, gdpo, per_batch, maxrl, reward_norm  # noqa: F401
from . import teacher  # noqa: F401  (on-policy distillation: a teacher's log-ratio)
