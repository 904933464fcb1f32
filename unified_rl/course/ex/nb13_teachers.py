"""Exercises of course/13_teachers_and_stale_samples.ipynb: OPD's coefficient, TIS on a stale sampler, GKD's
generalized JSD, a TIS weight predicted, and why GRPO's clip does not see a stale sampler.

In the notebook:  from unified_rl.course.ex.nb13_teachers import q1, q2, q3, q4, q5
Each exercise names the notebook variable it reads and carries its solution and plausible wrong answers
(tests/test_exercises.py and tests/test_ex_nb13.py run every checker on them). References are the package's own
functions: the `opd` part (parts/advantages/teacher.py), the composition opd x reinforce x tis that `recompose`
builds (parts/sampler_corrections.py), and the `gkd` part (parts/policy_terms/gkd.py); never a copy. The
coefficients are checked by value and by the gradient eq 5's surrogate sends into `logp` (gradcheck.py).
"""

import dataclasses
import math

import torch

from unified_rl.course.exercises import ChoiceExercise, FunctionExercise, ValueExercise
from unified_rl.course.i18n import Msg
from unified_rl.methods import recompose
from unified_rl.paradigm import Step, TensorBatch
from unified_rl.parts.advantages.teacher import opd
from unified_rl.parts.policy_terms.gkd import gkd
from unified_rl.presets import RLConfig

OPD_TIS = recompose("opd", masks=("tis",), aggregation="seq-mean-token-mean")
"""OPD's advantage, REINFORCE's policy term, TIS's weight, each response's token mean (a factor 1 on every row)."""


@dataclasses.dataclass
class _Sampled(TensorBatch):
    logp: torch.Tensor = None  # the sampler's log-probs, as a Rollout records them


def _masks(gen, B, T):
    lens = torch.randint(1, T + 1, (B,), generator=gen)
    lens[0] = T  # one full row, so T is the width of the batch
    return (torch.arange(T)[None] < lens[:, None]).float()  # (B, T), ragged


def _logp(gen, B, T, low=0.05, high=4.0):
    return -(low + (high - low) * torch.rand(B, T, generator=gen))  # log-probs < 0, off the mask too


def _shape(gen):
    return int(torch.randint(2, 6, (), generator=gen)), int(torch.randint(4, 9, (), generator=gen))


# q1 (implementation): OPD's coefficient, each token's sg(log pi_T - log pi_theta).
def _opd_solution(teacher_logp, logp, mask):
    return ((teacher_logp - logp) * mask).detach()


def _opd_no_stop_gradient(teacher_logp, logp, mask):
    """The teacher's log-ratio left in the graph: right values, a gradient that is not OPD's."""
    return (teacher_logp - logp) * mask


def _opd_reversed(teacher_logp, logp, mask):
    """log pi_theta - log pi_T: pushes up the tokens the teacher likes less."""
    return ((logp - teacher_logp) * mask).detach()


def _opd_unmasked(teacher_logp, logp, mask):
    return (teacher_logp - logp).detach()


def _opd_return_to_go(teacher_logp, logp, mask):
    """Each token's log-ratio summed with those after it (a discount of 1): the sequence KL's return, not OPD's."""
    d = (teacher_logp - logp) * mask
    return (torch.flip(torch.cumsum(torch.flip(d, [-1]), -1), [-1]) * mask).detach()


def _opd_response_mean(teacher_logp, logp, mask):
    """One number per response, its mean log-ratio, on every token: a sequence reward, not a per-token one."""
    d = ((teacher_logp - logp) * mask).sum(-1, keepdim=True) / mask.sum(-1, keepdim=True)
    return (d * mask).detach()


def _opd_inputs(gen, B=None, T=None):
    b, t = _shape(gen)
    B, T = B or b, T or t
    return {"teacher_logp": _logp(gen, B, T), "logp": _logp(gen, B, T), "mask": _masks(gen, B, T)}


q1 = FunctionExercise(
    opd,
    cases={Msg("nb13.q1.case.teacher_agrees"): {"teacher_logp": torch.tensor([[-0.5, -1.0, -2.0]]),
                                               "logp": torch.tensor([[-0.5, -1.0, -2.0]]),
                                               "mask": torch.tensor([[1.0, 1.0, 0.0]])},
           Msg("nb13.q1.case.ragged_batch"): lambda gen: _opd_inputs(gen, B=4, T=7)},
    random_inputs=_opd_inputs, detached=True, var="my_opd_coef", title=Msg("nb13.q1.title"),
    hint=[Msg("nb13.q1.hint1"), Msg("nb13.q1.hint2")],
    solution_value=_opd_solution,
    wrong=[_opd_no_stop_gradient, _opd_reversed, _opd_unmasked, _opd_return_to_go, _opd_response_mean],
)


# q2 (implementation): OPD on a stale sampler's batch, each token's GC weighed by TIS's min(pi_old / pi_sampler, C).
def _opd_tis_reference(teacher_logp, logp, logp_old, sampler_logp, mask, cap):
    """The package's composition opd x reinforce x tis (each response's token mean) on these tensors."""
    hp = dataclasses.replace(OPD_TIS.hparams, sampler_correction_cap=cap)
    step = Step(_Sampled(mask, 1, None, None, sampler_logp), None, logp, logp_old, None, None, RLConfig(), hp,
                teacher_logp=teacher_logp)
    return OPD_TIS.coefficient(step)


def _opd_tis_solution(teacher_logp, logp, logp_old, sampler_logp, mask, cap):
    reward = (teacher_logp - logp).detach()  # OPD's per-token reward, stop-gradient
    weight = torch.exp(logp_old - sampler_logp).clamp(max=cap)  # TIS: min(pi_old / pi_sampler, C)
    return reward * weight * mask


def _tis_with(teacher_logp, logp, logp_old, sampler_logp, mask, cap, *, ratio="old/sampler", where="weight",
              detach=True):
    reward = teacher_logp - logp
    reward = reward.detach() if detach else reward
    num, den = {"old/sampler": (logp_old, sampler_logp), "sampler/old": (sampler_logp, logp_old),
                "policy/sampler": (logp.detach(), sampler_logp)}[ratio]
    rho = torch.exp(num - den)
    if where == "weight":
        out = reward * rho.clamp(max=cap)
    elif where == "advantage":
        out = reward.clamp(max=cap) * rho
    elif where == "product":
        out = (reward * rho).clamp(max=cap)
    else:
        out = reward * rho
    return out * mask


def _tis_reversed(**kw):
    """pi_sampler / pi_old: the ratio the wrong way round."""
    return _tis_with(**kw, ratio="sampler/old")


def _tis_on_advantage(**kw):
    """min(A, C) rho: the truncation applied to the advantage instead of the weight."""
    return _tis_with(**kw, where="advantage")


def _tis_on_product(**kw):
    """min(rho A, C): the truncation applied to the weighted advantage."""
    return _tis_with(**kw, where="product")


def _tis_untruncated(**kw):
    """rho A: plain importance weights, no cap."""
    return _tis_with(**kw, where="none")


def _tis_cap_hard_coded(**kw):
    """C = 2 whatever `cap` says: the package's default, hard-coded."""
    return _tis_with(**{**kw, "cap": 2.0})


def _tis_policy_ratio(**kw):
    """pi_theta / pi_sampler: the current policy's log-probs where pi_old's belong."""
    return _tis_with(**kw, ratio="policy/sampler")


def _tis_no_stop_gradient(**kw):
    """The teacher's reward left in the graph."""
    return _tis_with(**kw, detach=False)


def _opd_tis_inputs(gen, B=None, T=None):
    b, t = _shape(gen)
    B, T = B or b, T or t
    logp = _logp(gen, B, T)
    logp_old = logp + 0.3 * torch.randn(B, T, generator=gen)  # pi_theta moved from pi_old
    return {"teacher_logp": _logp(gen, B, T), "logp": logp, "logp_old": logp_old,
            "sampler_logp": logp_old - 2.2 * torch.rand(B, T, generator=gen) + 0.9,  # rho_s in e^[-0.9, 1.3]
            "mask": _masks(gen, B, T), "cap": float(1.2 + 1.6 * torch.rand((), generator=gen))}


q2 = FunctionExercise(
    _opd_tis_reference,
    cases={Msg("nb13.q2.case.sampler_is_the_learner"):
               {"teacher_logp": torch.tensor([[-0.2, -1.5]]), "logp": torch.tensor([[-1.0, -1.0]]),
                "logp_old": torch.tensor([[-1.0, -1.0]]), "sampler_logp": torch.tensor([[-1.0, -1.0]]),
                "mask": torch.tensor([[1.0, 1.0]]), "cap": 1.5},
           Msg("nb13.q2.case.one_token_past_the_cap"):
               {"teacher_logp": torch.tensor([[-0.5, -0.5, -0.5]]), "logp": torch.tensor([[-1.5, -1.5, -1.5]]),
                "logp_old": torch.tensor([[-1.2, -1.2, -1.2]]), "sampler_logp": torch.tensor([[-1.2, -2.7, -0.7]]),
                "mask": torch.tensor([[1.0, 1.0, 1.0]]), "cap": 2.5},
           Msg("nb13.q2.case.ragged_batch"): lambda gen: _opd_tis_inputs(gen, B=4, T=7)},
    random_inputs=_opd_tis_inputs, detached=True, var="my_opd_tis_coef", title=Msg("nb13.q2.title"),
    hint=[Msg("nb13.q2.hint1"), Msg("nb13.q2.hint2")],
    solution_value=_opd_tis_solution,
    wrong=[_tis_reversed, _tis_on_advantage, _tis_on_product, _tis_untruncated, _tis_cap_hard_coded,
           _tis_policy_ratio, _tis_no_stop_gradient],
)


# q3 (implementation): GKD's generalized JSD of the sampled token's coin (p, 1 - p) against the teacher's (q, 1 - q).
def _gkd_reference(logp, teacher_logp, mask, beta):
    """The package's gkd part with A = 1 on every token."""
    return gkd(torch.ones_like(logp), logp, teacher_logp, mask, beta)


def _gkd_solution(logp, teacher_logp, mask, beta):
    p, q = logp.exp().detach(), teacher_logp.exp()
    m = (1 - beta) * p + beta * q  # the mixture's mass on the sampled token
    return -(1 - beta) * p * (torch.log(p / m) - torch.log((1 - p) / (1 - m))) * mask


def _gkd_with(logp, teacher_logp, mask, beta, *, lead=True, swap=False, tail=True, detach=True):
    p, q = logp.exp(), teacher_logp.exp()
    p = p.detach() if detach else p
    m = beta * p + (1 - beta) * q if swap else (1 - beta) * p + beta * q
    inner = torch.log(p / m) - (torch.log((1 - p) / (1 - m)) if tail else 0.0)
    return -((1 - beta) if lead else 1.0) * p * inner * mask


def _gkd_no_lead(**kw):
    """The chain rule's factor (1 - beta) left out: a missing beta."""
    return _gkd_with(**kw, lead=False)


def _gkd_mixture_swapped(**kw):
    """M = beta S + (1 - beta) T: beta on the wrong distribution."""
    return _gkd_with(**kw, swap=True)


def _gkd_no_tail(**kw):
    """Only the sampled token's term: the tail bucket (1 - p against 1 - m) dropped."""
    return _gkd_with(**kw, tail=False)


def _gkd_beta_half(**kw):
    """beta = 0.5, the package's default, hard-coded."""
    return _gkd_with(**{**kw, "beta": 0.5})


def _gkd_reverse_kl(logp, teacher_logp, mask, beta):
    """beta = 1's coefficient, the reverse KL of the coins, whatever beta is."""
    p, q = logp.exp().detach(), teacher_logp.exp()
    return -p * (torch.log(p / q) - torch.log((1 - p) / (1 - q))) * mask


def _gkd_not_detached(**kw):
    return _gkd_with(**kw, detach=False)


def _gkd_inputs(gen, B=None, T=None):
    b, t = _shape(gen)
    B, T = B or b, T or t
    return {"logp": _logp(gen, B, T, 0.03, 3.0), "teacher_logp": _logp(gen, B, T, 0.03, 3.0), "mask": _masks(gen, B, T),
            "beta": float(0.1 + 0.35 * torch.rand((), generator=gen)) if torch.rand((), generator=gen) < 0.5
            else float(0.55 + 0.35 * torch.rand((), generator=gen))}  # either side of the default 0.5


q3 = FunctionExercise(
    _gkd_reference,
    cases={Msg("nb13.q3.case.teacher_agrees"): {"logp": torch.log(torch.tensor([[0.3, 0.6]])),
                                                "teacher_logp": torch.log(torch.tensor([[0.3, 0.6]])),
                                                "mask": torch.tensor([[1.0, 1.0]]), "beta": 0.3},
           Msg("nb13.q3.case.ragged_batch"): lambda gen: _gkd_inputs(gen, B=4, T=7)},
    random_inputs=_gkd_inputs, detached=True, var="my_gkd_coef", title=Msg("nb13.q3.title"),
    hint=[Msg("nb13.q3.hint1"), Msg("nb13.q3.hint2")],
    solution_value=_gkd_solution,
    wrong=[_gkd_no_lead, _gkd_mixture_swapped, _gkd_no_tail, _gkd_beta_half, _gkd_reverse_kl, _gkd_not_detached],
)


# q4 (predict): TIS's GC of one token, computed by the package's composition.
def _tis_one_token():
    one = torch.ones(1, 1)
    log = lambda x: torch.tensor([[math.log(x)]])  # noqa: E731
    teacher, logp = log(0.4), log(0.4) - 0.8  # the teacher's log-ratio to the policy: +0.8
    return _opd_tis_reference(teacher, logp, log(0.3), log(0.1), one, 2.0).item()  # rho_s = 0.3 / 0.1 = 3, C = 2


q4 = ValueExercise(
    _tis_one_token, atol=1e-4, var="predicted_tis_gc", title=Msg("nb13.q4.title"),
    hint=[Msg("nb13.q4.hint1"), Msg("nb13.q4.hint2")],
    wrong=[2.4, 0.8 / 3, 0.8, 2.0],  # no cap; the ratio reversed; no weight; the cap on the weighted reward
)

# q5 (choice): why GRPO's clip never acts on a stale batch at one update per batch.
q5 = ChoiceExercise(
    {"old_is_learner": Msg("nb13.q5.option.old_is_learner"),
     "lag_small": Msg("nb13.q5.option.lag_small"),
     "kl_term": Msg("nb13.q5.option.kl_term"),
     "group_mean": Msg("nb13.q5.option.group_mean")},
    "old_is_learner", var="why_no_clip", title=Msg("nb13.q5.title"),
    hint=Msg("nb13.q5.hint"),
    why={"lag_small": Msg("nb13.q5.why.lag_small"),
         "kl_term": Msg("nb13.q5.why.kl_term"),
         "group_mean": Msg("nb13.q5.why.group_mean")},
)
