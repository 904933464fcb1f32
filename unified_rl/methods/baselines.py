"""Methods that change the advantage, as Method values: GPG, OPO, Pass@k training (grpo-passk), GDPO.

| method     | where it ships                              | advantage (advantages.py)                        | GC |
|------------|---------------------------------------------|--------------------------------------------------|----|
| gpg        | verl adv_estimator/loss_mode "gpg"          | alpha (r - mean): alpha = B / (samples counted)  | A, no ratio, no clip |
| opo        | verl adv_estimator="opo"                    | r - sum |o| r / sum |o|, the length-weighted mean | (r - b) on each token, a token sum |
| grpo-passk | verl adv_estimator="grpo_passk"             | r_max - r_second on the group's best, else 0     | GRPO's (eq 21, clip, k3) |
| gdpo       | TRL multi_objective_aggregation="normalize_then_sum" | each reward normalised in its group, summed, normalised over the batch | GRPO's |

GDPO's reward is two columns (`rewards.RewardColumns`): the rule's 0/1 and DAPO's overlong penalty, the
two rewards this lab has; with multi_objective_aggregation="sum_then_normalize" it is GRPO on their sum.
"""

from dataclasses import dataclass, field

from .. import advantages, coefficients as C, distributed, objectives as O
from ..coefficients import AGGREGATIONS
from ..data import PolicySamples
from ..paradigm import Method
from ..rewards import OverlongPenalty, RewardColumns, RuleReward

rule = RuleReward()


@dataclass(frozen=True)
class GPGConfig:
    """GPG (arXiv 2504.02546)."""

    gpg_count: str = field(default="nonzero-advantage", metadata={"choices": ("nonzero-advantage", "nonzero-reward")})
    """alpha = B / the samples whose advantage is not 0 (the paper's B / (B - M)), or whose reward is not 0 (verl)"""
    aggregation: str = "batch-token-mean"
    """verl's token-mean"""
    max_len: float = 17.0
    """L, used only by the constant aggregation"""


@dataclass(frozen=True)
class OPOConfig:
    """OPO (arXiv 2505.23585)."""

    aggregation: str = "constant"
    """the token sum log pi(o | q) the optimal baseline is derived for (the constant normaliser, L = 1)"""
    max_len: float = 1.0
    """L of the constant normaliser"""


@dataclass(frozen=True)
class PassKConfig:
    """Pass@k training (arXiv 2503.19595) as verl's grpo_passk estimator, in GRPO's loss."""

    passk_std: bool = True
    """divide r_max - r_second by the group's std + adv_eps (verl's norm_adv_by_std_in_grpo)"""
    adv_eps: float = 1e-6
    """eps of that denominator (verl's epsilon)"""
    aggregation: str = field(default="seq-mean-token-mean", metadata={"choices": AGGREGATIONS})
    """GRPO's row factor (verl's default loss_agg_mode is batch-token-mean)"""
    max_len: float = 17.0
    """L, used only by the constant aggregation"""


@dataclass(frozen=True)
class GDPOConfig:
    """GDPO (arXiv 2601.05242) as TRL's multi_objective_aggregation, in GRPO's loss."""

    multi_objective_aggregation: str = field(default="normalize_then_sum",
                                             metadata={"choices": ("normalize_then_sum", "sum_then_normalize")})
    """normalise each reward in its group, sum, normalise over the batch (GDPO); or sum, then GRPO's A-hat"""
    adv_eps: float = 1e-6
    """eps of every std's denominator (TRL's: 1e-4)"""
    aggregation: str = field(default="seq-mean-token-mean", metadata={"choices": AGGREGATIONS})
    """GRPO's row factor"""
    max_len: float = 17.0
    """L, used only by the constant aggregation"""


def _g(step):
    return step.batch.group_size


def gpg_gc(step):
    return C.gpg(step.scores, _g(step), step.batch.mask, count=step.hp.gpg_count, aggregation=step.hp.aggregation,
                 max_len=step.hp.max_len, across=distributed.across())


def gpg_objective(step):
    return O.gpg(step.logp, step.scores, _g(step), step.batch.mask, step.hp.gpg_count, step.hp.aggregation,
                 step.hp.max_len)


def _clip(step):
    return dict(logp_old=step.logp_old, clip_eps=step.cfg.clip_eps)


def opo_gc(step):
    return C.opo(step.scores, _g(step), step.batch.mask, logp=step.logp, aggregation=step.hp.aggregation,
                 max_len=step.hp.max_len, across=distributed.across(), **_clip(step))


def opo_objective(step):
    return O.opo(step.logp, step.scores, _g(step), step.batch.mask, step.hp.aggregation, step.hp.max_len,
                 **_clip(step))


def passk_advantage(step):
    """(B, T) Pass@k training's advantage: the group's best answer gets r_max - r_second (over the std)."""
    a = advantages.best_of_group(step.scores, _g(step), step.hp.adv_eps, std=step.hp.passk_std)
    return a.to(step.batch.mask.dtype)[:, None] * step.batch.mask


def gdpo_advantage(step):
    """(B, T) GDPO's advantage of the (B, K) reward columns (or GRPO's of their sum, sum_then_normalize)."""
    hp = step.hp
    if hp.multi_objective_aggregation not in ("normalize_then_sum", "sum_then_normalize"):
        raise ValueError(f"unknown multi_objective_aggregation {hp.multi_objective_aggregation!r}")
    if hp.multi_objective_aggregation == "normalize_then_sum":
        a = advantages.decoupled(step.scores, _g(step), hp.adv_eps, across=distributed.across())
    else:
        total = step.scores.sum(-1) if step.scores.dim() == 2 else step.scores  # (B,) the rewards' sum
        a = advantages.group_relative(total, _g(step), hp.adv_eps)
    return a.to(step.batch.mask.dtype)[:, None] * step.batch.mask


def grpo_loss(advantage):
    """GRPO's GC and objective (eq 21: clip, k3 KL) on the advantage `advantage(step)` computes."""
    def args(step):
        return dict(aggregation=step.hp.aggregation, max_len=step.hp.max_len, adv=advantage(step))

    def gc(step):
        return C.grpo_options(None, _g(step), step.logp, step.logp_ref, step.batch.mask, step.cfg.beta,
                              logp_old=step.logp_old, clip_eps=step.cfg.clip_eps, across=distributed.across(),
                              **args(step))

    def objective(step):
        return O.grpo_options(step.logp, step.logp_old, step.logp_ref, None, _g(step), step.batch.mask,
                              step.cfg.beta, step.cfg.clip_eps, **args(step))
    name = advantage.__name__.replace("_advantage", "")
    gc.__name__, objective.__name__ = f"{name}_gc", f"{name}_objective"
    return gc, objective


passk_gc, passk_objective = grpo_loss(passk_advantage)
gdpo_gc, gdpo_objective = grpo_loss(gdpo_advantage)


GPG = Method("gpg", PolicySamples, rule, gpg_gc, objective=gpg_objective, uses_ref=False, off_policy=True,
             hparams=GPGConfig(), paper="GPG, Chu et al., arXiv 2504.02546",
             summary="REINFORCE on alpha (r - mean): no ratio, no clip, no std, no KL")
OPO = Method("opo", PolicySamples, rule, opo_gc, objective=opo_objective, uses_ref=False, off_policy=True,
             hparams=OPOConfig(), paper="OPO, Hao et al., arXiv 2505.23585",
             summary="REINFORCE on whole sequences with the length-weighted mean reward as baseline; no KL")
GRPO_PASSK = Method("grpo-passk", PolicySamples, rule, passk_gc, objective=passk_objective, off_policy=True,
                    hparams=PassKConfig(), paper="Pass@k training, Chen et al., arXiv 2503.19595",
                    summary="GRPO where only each group's best answer gets an advantage, r_max - r_second")
GDPO = Method("gdpo", PolicySamples, RewardColumns(RuleReward(), OverlongPenalty()), gdpo_gc,
              objective=gdpo_objective, off_policy=True, hparams=GDPOConfig(),
              paper="GDPO, arXiv 2601.05242",
              summary="GRPO on several rewards, each normalised in its group before they are summed")

BASELINES = (GPG, OPO, GRPO_PASSK, GDPO)
