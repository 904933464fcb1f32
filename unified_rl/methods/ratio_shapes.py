"""The methods that reshape PPO's clipped ratio, as Method values: SAPO, VESPO, LUSPO, GMPO, Clip-Cov, KL-Cov.

| method   | where it ships            | GC (coefficients/ratio_shapes.py, options.py)                       |
|----------|---------------------------|--------------------------------------------------------------------|
| sapo     | TRL loss_type="sapo"      | 4 sigma (1 - sigma) r A: a soft gate instead of the clip             |
| vespo    | TRL loss_type="vespo"     | phi(W_i) A, a Gamma weight of the sequence ratio W = prod r          |
| luspo    | TRL loss_type="luspo"     | |o_i| s_i A_i: GSPO's sequence ratio, each sequence scaled by its length |
| gmpo     | verl loss_mode="geo_mean" | A rho_i on unclipped tokens: the geometric mean of clipped ratios   |
| clip-cov | verl loss_mode="clip_cov" | PPO's GC, 0 on a few high-covariance tokens                          |
| kl-cov   | verl loss_mode="kl_cov"   | r A - coef sign(log r) on the top-covariance tokens                  |

Each samples G answers per question from pi_theta (PolicySamples), scores them with the rule, and
takes A from the group's rewards (GRPO's A-hat; `scale_rewards`, `adv_eps` as GRPO's options); none
has a KL term. Every coefficient reads logp_old, so each is `off_policy` and the oracle checks both.
"""

from dataclasses import dataclass, field

from .. import advantages, coefficients as C, distributed, objectives as O
from ..advantages import SCALES
from ..data import PolicySamples
from ..paradigm import Method
from ..rewards import RuleReward

rule = RuleReward()


@dataclass(frozen=True)
class Advantage:
    """The group-relative advantage these methods share (GRPO's A-hat, with TRL's scale_rewards)."""

    scale_rewards: str = field(default="group", metadata={"choices": SCALES})
    """A = (r - group mean) / (the group's std, the batch's, or 1, + adv_eps)"""
    adv_eps: float = 1e-6
    """eps of A's denominator (TRL's: 1e-4)"""


@dataclass(frozen=True)
class SAPOConfig(Advantage):
    """SAPO (arXiv 2511.20347); TRL's defaults."""

    sapo_tau_pos: float = 1.0
    """the gate's temperature where A > 0 (TRL's sapo_temperature_pos)"""
    sapo_tau_neg: float = 1.05
    """where A <= 0: a larger tau fades the push faster as r leaves 1 (TRL's sapo_temperature_neg)"""
    aggregation: str = "seq-mean-token-mean"
    """TRL's and verl's for sapo"""
    max_len: float = 17.0
    """L, used only by the constant aggregation"""


@dataclass(frozen=True)
class VESPOConfig(Advantage):
    """VESPO (arXiv 2602.10693); TRL's defaults."""

    vespo_k_pos: float = 2.0
    """phi's power where A >= 0: how fast W < 1 is down-weighted"""
    vespo_lambda_pos: float = 3.0
    """phi's decay where A >= 0: how fast W > 1 is down-weighted"""
    vespo_k_neg: float = 3.0
    """phi's power where A < 0"""
    vespo_lambda_neg: float = 2.0
    """phi's decay where A < 0"""
    aggregation: str = "batch-token-mean"
    """TRL's for vespo (its dapo normaliser)"""
    max_len: float = 17.0
    """L, used only by the constant aggregation"""


@dataclass(frozen=True)
class LUSPOConfig(Advantage):
    """LUSPO (arXiv 2602.05261): GSPO's sequence ratio and clip, each sequence's term times its length."""

    luspo_clip_eps: float = 3e-4
    """lower clip of the sequence ratio (GSPO's 3e-4, the method LUSPO modifies)"""
    luspo_clip_eps_high: float = 4e-4
    """upper clip of the sequence ratio (GSPO's 4e-4)"""


@dataclass(frozen=True)
class GMPOConfig(Advantage):
    """GMPO (arXiv 2507.20673): a wider clip, in log space, on each token of the geometric mean."""

    gmpo_clip_eps: float = 0.4
    """log r >= -0.4 where A < 0 (the paper's range (e^-0.4, e^0.4))"""
    gmpo_clip_eps_high: float = 0.4
    """log r <= 0.4 where A > 0"""


@dataclass(frozen=True)
class ClipCovConfig(Advantage):
    """Clip-Cov (arXiv 2505.22617); verl's defaults. Its clip range is RLConfig.clip_eps."""

    clip_cov_ratio: float = 2e-4
    """the share of the batch's tokens detached (at least 1)"""
    clip_cov_lb: float = 1.0
    """lower bound of the covariance of a token that may be detached"""
    clip_cov_ub: float = 5.0
    """upper bound of that covariance"""
    aggregation: str = "batch-token-mean"
    """verl's token-mean"""
    max_len: float = 17.0
    """L, used only by the constant aggregation"""


@dataclass(frozen=True)
class KLCovConfig(Advantage):
    """KL-Cov (arXiv 2505.22617); verl's defaults."""

    kl_cov_ratio: float = 2e-4
    """the share of the batch's tokens penalised (at least 1)"""
    kl_cov_coef: float = 1.0
    """the weight of |log r| on them (verl's ppo_kl_coef)"""
    aggregation: str = "batch-token-mean"
    """verl's token-mean"""
    max_len: float = 17.0
    """L, used only by the constant aggregation"""


def group_advantage(step):
    """(B, T) A-hat of the step's rewards on every response token, by the method's scale_rewards (the batch's
    std over every rank's rewards in a distributed run)."""
    a = advantages.scaled(step.scores, step.batch.group_size, step.hp.scale_rewards, step.hp.adv_eps,
                          distributed.across())
    return a.to(step.batch.mask.dtype)[:, None] * step.batch.mask


def _agg(step):
    return dict(aggregation=step.hp.aggregation, group_size=step.batch.group_size, max_len=step.hp.max_len)


def _gc_agg(step):
    return dict(_agg(step), across=distributed.across())


def sapo_gc(step):
    return C.sapo(group_advantage(step), step.logp, step.logp_old, step.batch.mask, step.hp.sapo_tau_pos,
                  step.hp.sapo_tau_neg, **_gc_agg(step))


def sapo_objective(step):
    return O.sapo(step.logp, step.logp_old, group_advantage(step), step.batch.mask, step.hp.sapo_tau_pos,
                  step.hp.sapo_tau_neg, **_agg(step))


def _vespo_args(step):
    hp = step.hp
    return (hp.vespo_k_pos, hp.vespo_lambda_pos, hp.vespo_k_neg, hp.vespo_lambda_neg)


def vespo_gc(step):
    return C.vespo(group_advantage(step), step.logp, step.logp_old, step.batch.mask, *_vespo_args(step),
                   **_gc_agg(step))


def vespo_objective(step):
    return O.vespo(step.logp, step.logp_old, group_advantage(step), step.batch.mask, *_vespo_args(step),
                   **_agg(step))


def _luspo(step):
    hp = step.hp
    return dict(clip_eps_high=hp.luspo_clip_eps_high, scale_rewards=hp.scale_rewards, eps=hp.adv_eps,
                level="sequence", aggregation="constant", max_len=1.0)


def luspo_gc(step):
    return C.grpo_options(step.scores, step.batch.group_size, step.logp, None, step.batch.mask, 0.0,
                          logp_old=step.logp_old, clip_eps=step.hp.luspo_clip_eps, across=distributed.across(),
                          **_luspo(step))


def luspo_objective(step):
    return O.grpo_options(step.logp, step.logp_old, None, step.scores, step.batch.group_size, step.batch.mask,
                          0.0, step.hp.luspo_clip_eps, **_luspo(step))


def gmpo_gc(step):
    return C.gmpo(group_advantage(step), step.logp, step.logp_old, step.batch.mask, step.hp.gmpo_clip_eps,
                  step.hp.gmpo_clip_eps_high)


def gmpo_objective(step):
    return O.gmpo(step.logp, step.logp_old, group_advantage(step), step.batch.mask, step.hp.gmpo_clip_eps,
                  step.hp.gmpo_clip_eps_high)


def _cov(step):
    hp = step.hp
    return (step.cfg.clip_eps, None, hp.clip_cov_ratio, hp.clip_cov_lb, hp.clip_cov_ub)


def _seed(step):
    """Clip-Cov's draw, repeatable from the batch: a seed from its rewards and response lengths (every rank's)."""
    scores, lengths = step.scores.double(), step.batch.mask.sum(-1).double()
    across = distributed.across()
    if across is not None:
        (scores, _), (lengths, _) = across.gather(scores), across.gather(lengths)
    return C.draw_seed(scores, lengths)


def clip_cov_gc(step):
    return C.clip_cov(group_advantage(step), step.logp, step.logp_old, step.batch.mask, *_cov(step), seed=_seed(step),
                      **_gc_agg(step))


def clip_cov_objective(step):
    return O.clip_cov(step.logp, step.logp_old, group_advantage(step), step.batch.mask, *_cov(step), _seed(step),
                      **_agg(step))


def kl_cov_gc(step):
    return C.kl_cov(group_advantage(step), step.logp, step.logp_old, step.batch.mask, step.hp.kl_cov_ratio,
                    step.hp.kl_cov_coef, **_gc_agg(step))


def kl_cov_objective(step):
    return O.kl_cov(step.logp, step.logp_old, group_advantage(step), step.batch.mask, step.hp.kl_cov_ratio,
                    step.hp.kl_cov_coef, **_agg(step))


def _method(name, gc, objective, hp, paper, summary):
    return Method(name, PolicySamples, rule, gc, objective=objective, uses_ref=False, off_policy=True, hparams=hp,
                  paper=paper, summary=summary)


SAPO = _method("sapo", sapo_gc, sapo_objective, SAPOConfig(), "SAPO, Gao et al., arXiv 2511.20347",
               "a smooth sigmoid gate of the ratio instead of the hard clip; no KL")
VESPO = _method("vespo", vespo_gc, vespo_objective, VESPOConfig(), "VESPO, arXiv 2602.10693",
                "a stop-gradient Gamma weight of the sequence's ratio on A log pi; no KL")
LUSPO = _method("luspo", luspo_gc, luspo_objective, LUSPOConfig(), "LUSPO, arXiv 2602.05261",
                "GSPO's clipped sequence ratio with each sequence's term times its length; no KL")
GMPO = _method("gmpo", gmpo_gc, gmpo_objective, GMPOConfig(), "GMPO, Zhao et al., arXiv 2507.20673",
               "the geometric mean of token ratios clipped in log space, per sequence; no KL")
CLIP_COV = _method("clip-cov", clip_cov_gc, clip_cov_objective, ClipCovConfig(),
                   "Clip-Cov, Cui et al., arXiv 2505.22617 (§4)",
                   "PPO's clip, and no gradient on a few tokens of high A-log-prob covariance; no KL")
KL_COV = _method("kl-cov", kl_cov_gc, kl_cov_objective, KLCovConfig(), "KL-Cov, Cui et al., arXiv 2505.22617 (§4)",
                 "no clip; a |log r| penalty on the tokens of highest A-log-prob covariance; no KL")

RATIO_SHAPES = (SAPO, VESPO, LUSPO, GMPO, CLIP_COV, KL_COV)
