"""The policy-gradient family after DeepSeekMath as Method values: data source, reward, GC, objective.

| method      | data source         | reward          | GC (coefficients/policy_gradient.py)                             |
|-------------|---------------------|-----------------|---------------------------------------------------------|
| dr-grpo     | PolicySamples       | rule            | |o|/L (r - mean r) + KL term: no std, no 1/|o|          |
| dapo        | DynamicSampling     | rule + overlong | G|o|/sum|o| * clip-higher(r A-hat); no KL                |
| gspo        | PolicySamples       | rule            | s_i A-hat, one clipped ratio per sequence; no KL        |
| cispo       | PolicySamples       | rule            | G|o|/sum|o| * clip(r) A-hat, never 0; no KL             |
| rloo        | PolicySamples       | rule            | |o| (r - mean of the others); no KL (the paper has one) |
| reinforce++ | PolicySamples       | rule            | batch-normalised return with the k1 KL in it            |
| remax       | GreedyBaselinePairs | rule            | 2|o| (r - r_greedy) on the sampled row, 0 on the greedy |

Every coefficient is the exact gradient of its objective also when a batch is reused (epochs > 1:
the clipped forms read logp_old), so each is `off_policy` and the model oracle checks both. Each
method's own settings are a frozen dataclass (`Method.hparams`): train("dapo", clip_eps_high=0.3).
Aggregation ("seq-mean-token-mean", "token-mean", "constant") is one of them for every method.

Deviation from a paper: RLOO (Ahmadian et al., §3) shapes its reward with a KL penalty,
R(o) - beta log(pi/pi_ref); the package's RLOO omits it (rule reward only, `uses_ref=False`), so that
it differs from Dr. GRPO only in its baseline and aggregation.
"""

from dataclasses import dataclass, field
from typing import Optional

from .. import coefficients as C, distributed, objectives as O
from ..advantages import SCALES
from ..data import DynamicSampling, GreedyBaselinePairs, PolicySamples
from ..paradigm import Method
from ..rewards import OverlongReward, RuleReward
from .baselines import BASELINES
from .ratio_shapes import RATIO_SHAPES

rule = RuleReward()


@dataclass(frozen=True)
class DrGRPOConfig:
    """Dr. GRPO (arXiv 2503.20783)."""

    max_len: float = 17.0
    """L, the constant normaliser (TRL's loss_type="dr_grpo" uses max_completion_length): here the cpu
    preset's sampling budget, 12 + EOS + 4. A constant scales every step's gradient alike; AdamW
    undoes such a scale (up to its eps) only while the raw gradient norm stays below the trainer's
    clip at 1, which a large scale does not: then L changes the step. The per-row factor is |o_i|"""
    aggregation: str = "constant"
    """seq-mean-token-mean, token-mean or constant (Dr. GRPO's)"""


@dataclass(frozen=True)
class DAPOConfig:
    """DAPO (arXiv 2503.14476); eps_low is RLConfig.clip_eps."""

    clip_eps_high: float = 0.28
    """eps_high of clip-higher (the paper's 0.28 beside eps_low = 0.2)"""
    aggregation: str = "token-mean"
    """DAPO's token-mean over each group"""
    max_len: float = 17.0
    """L, used only by the constant aggregation"""


@dataclass(frozen=True)
class GSPOConfig:
    """GSPO (arXiv 2507.18071): sequence ratios sit near 1, so its clip range is narrow."""

    gspo_clip_eps: float = 3e-4
    """lower clip of the sequence ratio s_i (the paper's 3e-4)"""
    gspo_clip_eps_high: float = 4e-4
    """upper clip of s_i (the paper's 4e-4)"""
    aggregation: str = "seq-mean-token-mean"
    """GSPO's 1/G sum_i over sequences"""
    max_len: float = 17.0
    """L, used only by the constant aggregation"""


@dataclass(frozen=True)
class CISPOConfig:
    """CISPO (arXiv 2506.13585): the paper tunes only the upper bound of the weight."""

    cispo_clip_eps_high: float = 0.28
    """the weight is min(r, 1 + eps_high); 0.28 is this lab's choice (DAPO's eps_high). TRL's epsilon_high is
    the bound itself, 1 + this (ScaleRL's 5.0 is cispo_clip_eps_high = 4)"""
    aggregation: str = "token-mean"
    """CISPO's token-mean (TRL's cispo: batch-token-mean)"""
    scale_rewards: str = field(default="group", metadata={"choices": SCALES})
    """A's scale: the group's std, the batch's, or none (TRL's scale_rewards)"""
    adv_eps: float = 1e-6
    """eps of A's denominator (TRL's: 1e-4)"""
    cispo_clip_eps: Optional[float] = field(default=None, metadata={"choices": (None, 0.2)})
    """the weight's lower bound 1 - cispo_clip_eps (None: none, as the paper and TRL; verl clips at clip_ratio_low)"""
    max_len: float = 17.0
    """L, used only by the constant aggregation"""


@dataclass(frozen=True)
class SequenceConfig:
    """RLOO (arXiv 2402.14740) and ReMax (arXiv 2310.10505): REINFORCE on whole sequences."""

    aggregation: str = "constant"
    """log pi(o | q) = sum_t logp: a token sum, the constant normaliser with L = 1"""
    max_len: float = 1.0
    """L of the constant normaliser (1: the token sum the papers write)"""


@dataclass(frozen=True)
class ReinforcePPConfig:
    """REINFORCE++ (arXiv 2501.03262); its KL weight is RLConfig.beta."""

    aggregation: str = "seq-mean-token-mean"
    """how the per-token PPO terms are averaged"""
    max_len: float = 17.0
    """L, used only by the constant aggregation"""
    reinforce_baseline: str = field(default="group", metadata={"choices": ("group", "none")})
    """subtract each group's mean reward before the batch normalisation (the paper's "with baseline", verl's
    reinforce_plus_plus_baseline), or not (verl's reinforce_plus_plus)"""
    kl_in: str = field(default="return", metadata={"choices": ("return", "loss")})
    """where the KL sits: k1 summed into the return (the paper's), or k3 as a loss on each token (GRPO's
    eq 21; verl's use_kl_loss=True with kl_loss_type=low_var_kl, the recipe of reinforce_plus_plus_baseline)"""


def _agg(step):
    return dict(aggregation=step.hp.aggregation, max_len=step.hp.max_len)


def _gc_agg(step):
    """The aggregation settings for a coefficient: in a distributed run, with the reductions over every rank's rows."""
    return dict(_agg(step), across=distributed.across())


def _clip(step):
    return dict(logp_old=step.logp_old, clip_eps=step.cfg.clip_eps)


def _g(step):
    return step.batch.group_size


def dr_grpo_gc(step):
    return C.dr_grpo(step.scores, _g(step), step.logp, step.logp_ref, step.batch.mask, step.cfg.beta,
                     step.hp.max_len, aggregation=step.hp.aggregation, across=distributed.across(), **_clip(step))


def dr_grpo_objective(step):
    return O.dr_grpo(step.logp, step.logp_old, step.logp_ref, step.scores, _g(step), step.batch.mask,
                     step.cfg.beta, step.cfg.clip_eps, step.hp.max_len, step.hp.aggregation)


def dapo_gc(step):
    return C.dapo(step.scores, _g(step), step.logp, step.logp_old, step.batch.mask, step.cfg.clip_eps,
                  step.hp.clip_eps_high, **_gc_agg(step))


def dapo_objective(step):
    return O.dapo(step.logp, step.logp_old, step.scores, _g(step), step.batch.mask, step.cfg.clip_eps,
                  step.hp.clip_eps_high, **_agg(step))


def gspo_gc(step):
    return C.gspo(step.scores, _g(step), step.logp, step.logp_old, step.batch.mask, step.hp.gspo_clip_eps,
                  step.hp.gspo_clip_eps_high, **_gc_agg(step))


def gspo_objective(step):
    return O.gspo(step.logp, step.logp_old, step.scores, _g(step), step.batch.mask, step.hp.gspo_clip_eps,
                  step.hp.gspo_clip_eps_high, **_agg(step))


def cispo_gc(step):
    return C.cispo(step.scores, _g(step), step.logp, step.logp_old, step.batch.mask, step.hp.cispo_clip_eps_high,
                   step.hp.cispo_clip_eps, eps=step.hp.adv_eps, scale_rewards=step.hp.scale_rewards, **_gc_agg(step))


def cispo_objective(step):
    return O.cispo(step.logp, step.logp_old, step.scores, _g(step), step.batch.mask, step.hp.cispo_clip_eps_high,
                   step.hp.cispo_clip_eps, eps=step.hp.adv_eps, scale_rewards=step.hp.scale_rewards, **_agg(step))


def rloo_gc(step):
    return C.rloo(step.scores, _g(step), step.batch.mask, logp=step.logp, **_clip(step), **_gc_agg(step))


def rloo_objective(step):
    return O.rloo(step.logp, step.scores, _g(step), step.batch.mask, step.hp.aggregation, step.hp.max_len,
                  **_clip(step))


def reinforce_pp_adv(step):
    """A_t = R - beta sum_{t' >= t} log(pi_sampler / pi_ref) (no KL there with kl_in="loss"), batch-normalised
    over every rank's rows in a distributed run.

    The same for every update of a batch: the KL is the sampler's (a Rollout's logp; bare tensors from
    step_from_tensors use logp_old)."""
    sampler = getattr(step.batch, "logp", step.logp_old)
    beta = step.cfg.beta if step.hp.kl_in == "return" else 0.0
    return C.reinforce_pp_advantage(step.scores, sampler, step.logp_ref, step.batch.mask, beta, _g(step),
                                    across=distributed.across(), baseline=step.hp.reinforce_baseline)


def reinforce_pp_gc(step):
    kl = dict(logp_ref=step.logp_ref, beta=step.cfg.beta) if step.hp.kl_in == "loss" else {}
    return C.reinforce_pp(reinforce_pp_adv(step), step.batch.mask, logp=step.logp, **_clip(step), **_gc_agg(step), **kl)


def reinforce_pp_objective(step):
    sampler = getattr(step.batch, "logp", step.logp_old)
    return O.reinforce_pp(step.logp, step.logp_old, step.logp_ref, step.scores, step.batch.mask, step.cfg.beta,
                          step.cfg.clip_eps, _g(step), aggregation=step.hp.aggregation, kl_logp=sampler,
                          kl_in=step.hp.kl_in, baseline=step.hp.reinforce_baseline)


def remax_gc(step):
    return C.remax(step.scores, step.batch.mask, logp=step.logp, **_clip(step), **_gc_agg(step))


def remax_objective(step):
    return O.remax(step.logp, step.scores, step.batch.mask, step.hp.aggregation, step.hp.max_len, **_clip(step))


DR_GRPO = Method("dr-grpo", PolicySamples, rule, dr_grpo_gc, objective=dr_grpo_objective, off_policy=True,
                 hparams=DrGRPOConfig(), paper="Dr. GRPO, Liu et al., arXiv 2503.20783 (Figure 1)",
                 summary="GRPO without the std and the 1/|o| (a constant normaliser)")
DAPO = Method("dapo", DynamicSampling, OverlongReward(), dapo_gc, objective=dapo_objective, uses_ref=False,
              off_policy=True, hparams=DAPOConfig(), paper="DAPO, Yu et al., arXiv 2503.14476 (§3)",
              summary="clip-higher, dynamic sampling, token-mean, overlong shaping; no KL")
GSPO = Method("gspo", PolicySamples, rule, gspo_gc, objective=gspo_objective, uses_ref=False, off_policy=True,
              hparams=GSPOConfig(), paper="GSPO, Zheng et al., arXiv 2507.18071",
              summary="one importance ratio per sequence, clipped at the sequence level; no KL")
CISPO = Method("cispo", PolicySamples, rule, cispo_gc, objective=cispo_objective, uses_ref=False,
               off_policy=True, hparams=CISPOConfig(), paper="CISPO, MiniMax-M1, arXiv 2506.13585 (§3.1)",
               summary="a clipped stop-gradient ratio weighs every token, none dropped; no KL")
RLOO = Method("rloo", PolicySamples, rule, rloo_gc, objective=rloo_objective, uses_ref=False, off_policy=True,
              hparams=SequenceConfig(), paper="RLOO, Ahmadian et al., arXiv 2402.14740",
              summary="REINFORCE with the leave-one-out baseline: k/(k-1) (r - mean), no std; no KL")
REINFORCE_PP = Method("reinforce++", PolicySamples, rule, reinforce_pp_gc, objective=reinforce_pp_objective,
                      off_policy=True, hparams=ReinforcePPConfig(),
                      paper="REINFORCE++, Hu et al., arXiv 2501.03262",
                      summary="returns with the k1 KL in them, normalised over the whole batch")
REMAX = Method("remax", GreedyBaselinePairs, rule, remax_gc, objective=remax_objective, uses_ref=False,
               off_policy=True, hparams=SequenceConfig(), paper="ReMax, Li et al., arXiv 2310.10505",
               summary="REINFORCE with the greedy answer's reward as the baseline; no KL")

POLICY_GRADIENT = (DR_GRPO, DAPO, GSPO, CISPO, RLOO, REINFORCE_PP, REMAX) + RATIO_SHAPES + BASELINES
