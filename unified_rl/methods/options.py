"""GRPO's settings: DeepSeekMath's eq 19-21 by default, and each option TRL's GRPOConfig (1.16) and verl expose.

`GRPOConfig` is GRPO's `Method.hparams`: train("grpo", scale_rewards="batch", delta=1.5). Each field is one
change to the GC (coefficients/options.py); `options_of(step)` hands a step's settings, and what the
sampler recorded (rows cut at their budget, each token's entropy), to `coefficients.grpo_options` and
`objectives.grpo_options`. peers.py maps these fields to TRL's and verl's names and back.
"""

from dataclasses import dataclass, field
from typing import Optional

from ..advantages import SCALES
from ..coefficients import AGGREGATIONS, LEVELS


@dataclass(frozen=True)
class GRPOConfig:
    """GRPO (DeepSeekMath eq 19-21) and the options its implementations add; the defaults are the paper's."""

    scale_rewards: str = field(default="group", metadata={"choices": SCALES})
    """A = (r - group mean) / (std + adv_eps) with the group's std (eq 21), the batch's (PPO Lite, arXiv
    2508.08221) or none (Dr. GRPO); TRL's scale_rewards"""
    adv_eps: float = 1e-6
    """eps of A's denominator (TRL's is fixed at 1e-4, verl's epsilon is 1e-6)"""
    clip_eps_high: Optional[float] = field(default=None, metadata={"choices": (None, 0.28)})
    """upper clip: the ratio's push stops above 1 + clip_eps_high (None: RLConfig.clip_eps); TRL's epsilon_high,
    verl's clip_ratio_high"""
    delta: Optional[float] = field(default=None, metadata={"choices": (None, 1.05)})
    """two-sided clip: a token with A < 0 and ratio > delta gets GC 0 (INTELLECT-2, arXiv 2505.07291; TRL's
    delta, verl's dual-clip clip_ratio_c); None: off"""
    importance_sampling_level: str = field(default="token", metadata={"choices": LEVELS})
    """the ratio: per token, or per sequence, exp(mean_t log ratio) on every token (GSPO); TRL's name"""
    aggregation: str = field(default="seq-mean-token-mean", metadata={"choices": AGGREGATIONS})
    """the row factor: seq-mean-token-mean (eq 19; TRL's loss_type grpo), token-mean per group,
    batch-token-mean (TRL's dapo), constant (TRL's dr_grpo with L = max_len, luspo with L = 1)"""
    max_len: float = 17.0
    """L of the constant aggregation (TRL's dr_grpo: max_completion_length; here the cpu preset's budget)"""
    use_bias_correction_kl: bool = False
    """the KL penalty r k3 instead of k3: its gradient follows KL(pi || pi_ref) (TRL's default: True)"""
    mask_truncated_completions: bool = False
    """rows the sampler cut at their budget get GC 0 and leave every normaliser (DAPO §3.4; TRL's name)"""
    top_entropy_quantile: float = field(default=1.0, metadata={"choices": (1.0, 0.5)})
    """keep the GC of the tokens whose entropy is in the top fraction (arXiv 2506.01939: 0.2); 1 keeps all.
    The entropies are the sampler's (pi_old), TRL's pi_theta's: they agree on a batch's first update"""
    off_policy_mask_threshold: Optional[float] = field(default=None, metadata={"choices": (None, 1e-3)})
    """a row with A < 0 whose mean log(pi_old / pi_theta) exceeds it gets GC 0 (DeepSeek-V3.2, arXiv
    2512.02556 eq 9); None: off"""


def sampler_record(step, hp):
    """What the options read from the sampler: the truncated rows and the token entropies (None where unused)."""
    truncated = entropy = None
    if getattr(hp, "mask_truncated_completions", False):
        truncated = getattr(step.batch, "truncated", None)
        if truncated is None:
            raise ValueError("mask_truncated_completions needs the sampler's record of the rows it cut "
                             "(a sampled Rollout, or step_from_tensors(..., truncated=...))")
    if getattr(hp, "top_entropy_quantile", 1.0) < 1.0:
        entropy = getattr(step.batch, "entropy", None)
    return dict(truncated=truncated, entropy=entropy)


def options_of(step):
    """The keyword arguments of objectives.grpo_options for `step`'s settings (`gc_options_of`: the coefficient's)."""
    hp = step.hp
    return dict(clip_eps_high=hp.clip_eps_high, delta=hp.delta, scale_rewards=hp.scale_rewards, eps=hp.adv_eps,
                level=hp.importance_sampling_level, aggregation=hp.aggregation, max_len=hp.max_len,
                kl_ratio=hp.use_bias_correction_kl, top_entropy_quantile=hp.top_entropy_quantile,
                off_policy_mask_threshold=hp.off_policy_mask_threshold, **sampler_record(step, hp))


def gc_options_of(step):
    """The keyword arguments of coefficients.grpo_options: options_of's, and in a distributed run the
    reductions over every rank's rows (distributed.across) for the batch's statistics."""
    from .. import distributed
    return dict(options_of(step), across=distributed.across())
