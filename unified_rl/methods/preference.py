"""DPO (DeepSeekMath eq 12-14) and the preference family beside it as Method values: IPO, SimPO, KTO and ORPO.

| method | data source      | reward       | GC                                                     |
|--------|------------------|--------------|--------------------------------------------------------|
| ipo    | PreferencePairs  | rule (pairs) | +-(1/tau - 2 (x+ - x-)): linear, reverses past target  |
| simpo  | PreferencePairs  | rule (pairs) | +-beta sigma(gamma - beta (l+ - l-)); no pi_ref        |
| kto    | LabelledSamples  | rule (labels)| +-lambda_y beta sigma(z) sigma(-z), z = beta (x - z0)  |
| orpo   | PreferencePairs  | rule (pairs) | SFT's 1 on chosen + the odds-ratio term; no pi_ref     |

x is the length-normalised log-ratio to pi_ref, l the mean log-prob (coefficients/preference.py).
Pair methods see PreferencePairs' 2B rows (B chosen, then their B rejected partners); KTO sees
LabelledSamples' B labelled rows, then B mismatched rows for its reference point z0. Either way
the surrogate averages over 2B rows and each objective over B pairs (or B responses): every GC
here is twice the paper's, as `methods.dpo_gc` is for DPO. Each method's settings are a frozen
dataclass (`Method.hparams`): train("ipo", ipo_tau=2.0) sets them.
"""

from dataclasses import dataclass, field, fields

import torch

from .. import coefficients as C, objectives as O
from ..coefficients.dpo_losses import LOSS_TYPES, NORMS, check_settings
from ..data import LabelledSamples, PreferencePairs, pairs
from ..paradigm import Method
from ..rewards import RuleReward

rule = RuleReward()


@dataclass(frozen=True)
class DPOConfig:
    """DPO's loss, as TRL's DPOConfig names it (each loss type's GC: coefficients/dpo_losses.py)."""

    dpo_loss: str = field(default="sigmoid", metadata={"choices": LOSS_TYPES})
    """TRL's loss_type: sigmoid is eq 12's log sigmoid; the others replace it (notebook 11's map)"""
    dpo_norm: str = field(default="mean", metadata={"choices": NORMS})
    """mean: per-token mean log-ratios, as eq 12 prints them (TRL's sigmoid_norm and ipo); sum: their
    sums over the response, as the DPO paper and TRL's other loss types take them (a longer response
    gets a GC |o| times larger). sigmoid_norm is always "mean", as in TRL"""
    dpo_label_smoothing: float = 1e-3
    """eps of robust (the probability a label is flipped), exo_pair (its target (1 - eps, eps)) and
    aot: TRL's label_smoothing. 1e-3 is EXO's value; TRL's default 0 is refused by exo_pair and makes
    robust and aot the plain sigmoid loss"""
    dpo_discopop_tau: float = 0.05
    """tau of discopop: the temperature of its blend of the logistic and exponential losses"""

    def __post_init__(self):
        check_settings(self.dpo_loss, self.dpo_norm, 1.0, self.dpo_label_smoothing, self.dpo_discopop_tau)


def _dpo_args(step):
    (lc, lr), (rc, rr), (mc, mr) = pairs(step.logp), pairs(step.logp_ref), pairs(step.batch.mask)
    return lc, rc, mc, lr, rr, mr


def _loss_settings(step):
    hp = step.hp
    return dict(norm=hp.dpo_norm, label_smoothing=hp.dpo_label_smoothing, discopop_tau=hp.dpo_discopop_tau)


def _eq12(hp):
    """Whether the run's loss is eq 12 as printed, the log sigmoid of mean log-ratios (TRL's sigmoid_norm);
    so is a Step given no settings (paradigm.step_from_tensors)."""
    return hp is None or hp.dpo_loss == "sigmoid_norm" or (hp.dpo_loss, hp.dpo_norm) == ("sigmoid", "mean")


def _trl_loss_gc(step):
    """The GC of another of TRL's loss types, or of sums in place of eq 12's means (notebook 11's map)."""
    cc, cr = C.dpo_loss(step.hp.dpo_loss, *_dpo_args(step), step.cfg.dpo_beta, **_loss_settings(step))
    return torch.cat([cc, cr]) * 2  # (2B, T): the x2 of dpo_gc


def dpo_gc(step):
    if not _eq12(step.hp):  # DPOConfig picked another loss: coefficients/dpo_losses.py
        if step.hp.dpo_loss.startswith("aot") and getattr(step, "across", None) is not None:
            raise ValueError(f"dpo_loss={step.hp.dpo_loss!r} ranks the margins over the whole batch, which a rank "
                             "holding a share of it cannot do: run it in one process (without torchrun)")
        return _trl_loss_gc(step)
    (lc, lr), (rc, rr), (mc, mr) = pairs(step.logp), pairs(step.logp_ref), pairs(step.batch.mask)
    cc, cr = C.dpo(lc, rc, mc, lr, rr, mr, step.cfg.dpo_beta)
    # the surrogate averages over 2B rows, eq 12 over B pairs: x2 keeps the gradient exactly eq 13's
    return 2 * torch.cat([cc, cr])  # (2B, T)


def dpo_objective(step):
    if _eq12(step.hp):
        return O.dpo(*_dpo_args(step), step.cfg.dpo_beta)  # eq 12
    return O.dpo_loss(step.hp.dpo_loss, *_dpo_args(step), step.cfg.dpo_beta, **_loss_settings(step))


def _halves(*xs):
    """The (first, second) halves of each per-row tensor: chosen/rejected, or labelled/mismatched."""
    return [pairs(x) for x in xs]


@dataclass(frozen=True)
class IPOConfig:
    """IPO (arXiv 2310.12036)."""

    ipo_tau: float = 1.0
    """tau: the margin x+ - x- (per token) is regressed onto 1/(2 tau)"""


@dataclass(frozen=True)
class SimPOConfig:
    """SimPO (arXiv 2405.14734)."""

    simpo_beta: float = 2.0
    """beta: scale of the reward beta * (mean log-prob) (eq 4)"""
    simpo_gamma: float = 1.0
    """gamma: target reward margin (eq 5)"""


@dataclass(frozen=True)
class KTOConfig:
    """KTO (arXiv 2402.01306); kto_loss and kto_norm name TRL's KTOConfig choices."""

    kto_beta: float = 0.1
    """beta: how sharply the value sigmoid(beta (x - z0)) saturates (the paper's risk aversion). The GC
    is lambda beta sigmoid(z) sigmoid(-z), z = beta (x - z0): at most lambda beta / 4 (at x = z0), fading
    once |x - z0| passes a few 1/beta. Unlike DPO's beta it scales no margin between two responses,
    and with x a per-token mean, beta = 0.1 keeps |z| small: the GC is then nearly the constant lambda beta / 4"""
    kto_lam_d: float = 5.0
    """lambda_D: weight of desirable responses (the paper: lam_d n_d / (lam_u n_u) in [1, 4/3];
    about 18 % of the SFT model's samples are right on the lab)"""
    kto_lam_u: float = 1.0
    """lambda_U: weight of undesirable responses"""
    kto_loss: str = field(default="kto", metadata={"choices": ("kto", "apo_zero_unpaired")})
    """TRL's KTO loss_type: kto, or apo_zero_unpaired (APO-zero, arXiv 2408.06266): KTO with z0 = 0"""
    kto_norm: str = field(default="mean", metadata={"choices": ("mean", "sum")})
    """mean: x is the per-token mean log-ratio (as this package's DPO); sum: the sequence log-ratio, as the
    paper and TRL's KTOTrainer take it (z0 too; a longer response gets a GC |o| times larger)"""

    def __post_init__(self):
        for f in fields(self):
            if "choices" in f.metadata and getattr(self, f.name) not in f.metadata["choices"]:
                raise ValueError(f"unknown {f.name} {getattr(self, f.name)!r}; choose one of "
                                 f"{', '.join(f.metadata['choices'])}")


@dataclass(frozen=True)
class ORPOConfig:
    """ORPO (arXiv 2403.07691)."""

    orpo_lambda: float = 0.1
    """lambda: weight of the odds-ratio loss beside the SFT loss (eq 6)"""


def ipo_gc(step):
    (lc, lr), (rc, rr), (mc, mr) = _halves(step.logp, step.logp_ref, step.batch.mask)
    cc, cr = C.ipo(lc, rc, mc, lr, rr, mr, step.hp.ipo_tau)
    return 2 * torch.cat([cc, cr])  # (2B, T): the surrogate averages 2B rows, eq 17 B pairs


def ipo_objective(step):
    (lc, lr), (rc, rr), (mc, mr) = _halves(step.logp, step.logp_ref, step.batch.mask)
    return O.ipo(lc, rc, mc, lr, rr, mr, step.hp.ipo_tau)


def simpo_gc(step):
    (lc, lr), (mc, mr) = _halves(step.logp, step.batch.mask)
    cc, cr = C.simpo(lc, mc, lr, mr, step.hp.simpo_beta, step.hp.simpo_gamma)
    return 2 * torch.cat([cc, cr])  # (2B, T)


def simpo_objective(step):
    (lc, lr), (mc, mr) = _halves(step.logp, step.batch.mask)
    return O.simpo(lc, mc, lr, mr, step.hp.simpo_beta, step.hp.simpo_gamma)


def _kto_inputs(step):
    """(logp, logp_ref, mask, desirable, z0) of the labelled half; z0 from the mismatched half, detached
    (0 for apo_zero_unpaired, which has no reference point)."""
    (lp, lp_kl), (ref, ref_kl), (m, m_kl) = _halves(step.logp, step.logp_ref, step.batch.mask)
    desirable = (_halves(step.scores)[0][0] > 0.5).to(m.dtype)  # (B,) the reward's label
    if step.hp.kto_loss == "apo_zero_unpaired":
        return lp, ref, m, desirable, 0.0
    return lp, ref, m, desirable, C.kto_reference_point(lp_kl, ref_kl, m_kl, norm=step.hp.kto_norm,
                                                        across=getattr(step, "across", None))


def kto_gc(step):
    lp, ref, m, desirable, z0 = _kto_inputs(step)
    hp = step.hp
    c = C.kto(lp, ref, m, desirable, z0, hp.kto_beta, hp.kto_lam_d, hp.kto_lam_u, norm=hp.kto_norm)
    return 2 * torch.cat([c, torch.zeros_like(c)])  # (2B, T): the mismatched rows only give z0


def kto_objective(step):
    lp, ref, m, desirable, z0 = _kto_inputs(step)
    hp = step.hp
    return O.kto(lp, ref, m, desirable, z0, hp.kto_beta, hp.kto_lam_d, hp.kto_lam_u, norm=hp.kto_norm)


def orpo_gc(step):
    (lc, lr), (mc, mr) = _halves(step.logp, step.batch.mask)
    cc, cr = C.orpo(lc, mc, lr, mr, step.hp.orpo_lambda)
    return 2 * torch.cat([cc, cr])  # (2B, T)


def orpo_objective(step):
    (lc, lr), (mc, mr) = _halves(step.logp, step.batch.mask)
    return O.orpo(lc, mc, lr, mr, step.hp.orpo_lambda)


# Regimes measured on the cpu preset (seed 0, 60 steps, greedy accuracy on 256 held-out questions;
# the SFT model starts at 0.37). Over the steps a method moves, Adam makes the GC's overall scale
# matter little, so the learning rate is the knob that matters; see experiments/preference_family.py.
IPO = Method("ipo", PreferencePairs, rule, ipo_gc, objective=ipo_objective, hparams=IPOConfig(),
             paper="IPO eq 17, Azar et al., arXiv 2310.12036",
             summary="regress the log-ratio margin onto 1/(2 tau): no saturation, pulls back past it",
             # tau 1: 0.66 at lr 1e-5, 0.68 at 2e-5 (where DPO peaked at 0.59 and fell to 0.45);
             # tau 5 (a target the margin reaches): 0.51 at 1e-5 and 3e-5
             defaults={"lr": 2e-5, "steps": 60})
SIMPO = Method("simpo", PreferencePairs, rule, simpo_gc, objective=simpo_objective, uses_ref=False,
               hparams=SimPOConfig(), paper="SimPO eq 4-6, Meng et al., arXiv 2405.14734",
               summary="DPO on mean log-probs with a target margin gamma, no reference model",
               # beta 2, gamma 1 (the paper's usual range): 0.64 at lr 1e-5; at 2e-5 it peaked at 0.60
               # and fell to 0.49; beta 10, gamma 3: 0.66 at 1e-5
               defaults={"lr": 1e-5, "steps": 60})
KTO = Method("kto", LabelledSamples, rule, kto_gc, objective=kto_objective, hparams=KTOConfig(),
             paper="KTO sec 4.1 (v2 eq 7, 9), Ethayarajh et al., arXiv 2402.01306",
             summary="unpaired: raise desirable, lower undesirable samples around a reference point z0",
             # lam_d 1: 0.45 at lr 1e-5 (every log-prob pushed down); lam_d 5 (the paper's rule
             # lam_d n_d / (lam_u n_u) in [1, 4/3] with ~18 % right samples): 0.59; 6: 0.61;
             # lam_d 4 at 3e-5 fell to 0.20
             defaults={"lr": 1e-5, "steps": 60})
ORPO = Method("orpo", PreferencePairs, rule, orpo_gc, objective=orpo_objective, uses_ref=False,
              hparams=ORPOConfig(), paper="ORPO eq 3-10, Hong et al., arXiv 2403.07691",
              summary="SFT on the chosen answer plus an odds-ratio penalty on the rejected, no reference",
              # lambda 0.1: 0.83 at lr 1e-4, 0.79 at 3e-5; lambda 0 (SFT on the chosen answers
              # alone) 0.82 at 1e-4: on the lab the SFT term does most of the work
              defaults={"lr": 1e-4, "steps": 60})

DPO = Method("dpo", PreferencePairs, rule, dpo_gc, objective=dpo_objective, hparams=DPOConfig(),
             paper="DeepSeekMath eq 12-14, arXiv 2402.03300" + "; Rafailov et al., arXiv 2305.18290",
             summary="raise correct over incorrect SFT samples, relative to pi_ref",
             # nothing but the saturating sigmoid stops DPO pushing rejected answers down, and its
             # pairs never come from the policy it has become: held-out accuracy from SFT's 0.44
             # peaked at 0.61 (lr 3e-5, step 25) then fell to 0.07 by step 150; at lr 1e-5 it was
             # 0.53 at step 25, 0.51 at 50, 0.12 at 150. Short and gentle is DPO's regime here.
             defaults={"lr": 1e-5, "steps": 30})
PREFERENCE = (IPO, SIMPO, KTO, ORPO)
