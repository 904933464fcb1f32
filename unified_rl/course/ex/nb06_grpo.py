"""Exercises of notebook 06 (GRPO, eq 19-21): the KL term's coefficient, eq 21 itself, the chance
that a group carries no signal, the value of GRPO's objective at pi_theta = pi_old, and what the
group-mean baseline does to the expected gradient.

In the notebook:  from unified_rl.course.ex.nb06_grpo import q1, q2, q3, q4, q5
"""

import sympy
import torch

from unified_rl import advantages, coefficients, objectives
from unified_rl.course.exercises import ExpressionExercise, FunctionExercise, ValueExercise
from unified_rl.course.i18n import Msg

# q1 (derivation): the KL term of eq 19. With ell = log pi_theta(o_t) and ell_ref = log pi_ref(o_t),
# -beta * k3 = -beta * (pi_ref/pi - log(pi_ref/pi) - 1); its derivative in ell is eq 21's KL term.
ell, ell_ref = sympy.symbols("ell ell_ref", real=True)
beta = sympy.Symbol("beta", positive=True)
_k3 = sympy.exp(ell_ref - ell) - (ell_ref - ell) - 1
q1 = ExpressionExercise(
    lambda: sympy.diff(-beta * _k3, ell),
    var="kl_gc", title=Msg("nb06.q1.title"),
    hint=[Msg("nb06.q1.hint1"),
          Msg("nb06.q1.hint2")],
    solution=Msg("nb06.q1.solution"),
    wrong=[-beta * (sympy.exp(ell_ref - ell) - 1),   # the derivative of +beta k3: sign flipped
           beta * (sympy.exp(ell - ell_ref) - 1),    # pi / pi_ref instead of pi_ref / pi
           sympy.exp(ell_ref - ell) - 1,             # beta dropped
           beta * (ell_ref - ell)],                  # the k1-style log-ratio, not k3's derivative
)


# q2 (implementation): eq 21 for outcome supervision, on-policy, against coefficients.grpo.
def _grpo_gc_solution(rewards, group_size, logp, logp_ref, mask, beta):
    adv = advantages.group_relative(rewards, group_size)[:, None]  # (B, 1): A-hat of each response
    kl_term = beta * (torch.exp(logp_ref - logp) - 1)  # (B, T): beta * (pi_ref / pi - 1)
    return ((adv + kl_term) * mask).detach()  # 0 off the mask, no graph


def _kl_sign_flipped(rewards, group_size, logp, logp_ref, mask, beta):
    adv = advantages.group_relative(rewards, group_size)[:, None]
    return ((adv - beta * (torch.exp(logp_ref - logp) - 1)) * mask).detach()


def _ratio_inverted(rewards, group_size, logp, logp_ref, mask, beta):
    adv = advantages.group_relative(rewards, group_size)[:, None]
    return ((adv + beta * (torch.exp(logp - logp_ref) - 1)) * mask).detach()


def _mask_forgotten(rewards, group_size, logp, logp_ref, mask, beta):
    adv = advantages.group_relative(rewards, group_size)[:, None]
    return (adv + beta * (torch.exp(logp_ref - logp) - 1)).detach()


def _not_detached(rewards, group_size, logp, logp_ref, mask, beta):
    adv = advantages.group_relative(rewards, group_size)[:, None]
    return (adv + beta * (torch.exp(logp_ref - logp) - 1)) * mask


def _population_std(rewards, group_size, logp, logp_ref, mask, beta):
    """torch.std(unbiased=False): divides by G, not G - 1."""
    r = rewards.view(-1, group_size)
    std = r.std(-1, unbiased=False, keepdim=True)
    adv = torch.where(std > 0, (r - r.mean(-1, keepdim=True)) / (std + 1e-6), torch.zeros_like(r)).view(-1, 1)
    return ((adv + beta * (torch.exp(logp_ref - logp) - 1)) * mask).detach()


def _beta_missing(rewards, group_size, logp, logp_ref, mask, beta):
    adv = advantages.group_relative(rewards, group_size)[:, None]
    return ((adv + (torch.exp(logp_ref - logp) - 1)) * mask).detach()


def _per_token_share(rewards, group_size, logp, logp_ref, mask, beta):
    """A-hat spread over the answer's tokens (A-hat / |o|): eq 5 already averages over them."""
    adv = advantages.group_relative(rewards, group_size)[:, None] / mask.sum(-1, keepdim=True)
    return ((adv + beta * (torch.exp(logp_ref - logp) - 1)) * mask).detach()


def _batch_normalised(rewards, group_size, logp, logp_ref, mask, beta):
    """Mean and std over the whole batch instead of each group: a baseline of other questions."""
    adv = advantages.group_relative(rewards, len(rewards))[:, None]
    return ((adv + beta * (torch.exp(logp_ref - logp) - 1)) * mask).detach()


def _beta_hard_coded(rewards, group_size, logp, logp_ref, mask, beta):
    """A beta written in (0.1) instead of the one passed."""
    return _grpo_gc_solution(rewards, group_size, logp, logp_ref, mask, 0.1)


def _batch(gen, n_groups, G, T=None):
    B = n_groups * G
    T = T or int(torch.randint(4, 8, (), generator=gen))
    lengths = torch.randint(2, T + 1, (B,), generator=gen)
    mask = (torch.arange(T)[None] < lengths[:, None]).float()  # (B, T), ragged responses
    logp = (-2 * torch.rand(B, T, generator=gen)).requires_grad_(True)
    return {"rewards": torch.randint(0, 2, (B,), generator=gen).float(), "group_size": G,
            "logp": logp, "logp_ref": logp.detach() + 0.5 * torch.randn(B, T, generator=gen),
            "mask": mask, "beta": float(0.02 + 0.5 * torch.rand((), generator=gen))}


def _case(rewards, G, shift):
    def make(gen):
        kw = _batch(gen, len(rewards) // G, G)
        kw["rewards"] = torch.tensor(rewards)
        kw["logp_ref"] = kw["logp"].detach() + shift
        return kw
    return make


q2 = FunctionExercise(
    coefficients.grpo,
    cases={Msg("nb06.q2.case.one_right_answer_in_four"): _case([1.0, 0.0, 0.0, 0.0], 4, 0.3),
           Msg("nb06.q2.case.an_all_right_group_no_signal_from_the_reward"): _case([1.0, 1.0, 1.0, 1.0], 4, -0.2),
           Msg("nb06.q2.case.two_groups_one_right_answer_in_each"): _case([1.0, 0.0, 0.0, 0.0, 1.0, 0.0], 3, 0.1),
           Msg("nb06.q2.case.pi_theta_pi_ref_no_KL_push"): _case([0.0, 1.0, 1.0, 0.0, 1.0, 0.0], 3, 0.0)},
    random_inputs=lambda gen: _batch(gen, int(torch.randint(1, 4, (), generator=gen)),
                                     int(torch.randint(2, 6, (), generator=gen))),
    detached=True, var="my_grpo_gc", title=Msg("nb06.q2.title"),
    hint=[Msg("nb06.q2.hint1"),
          Msg("nb06.q2.hint2")],
    solution_value=_grpo_gc_solution,
    wrong=[_kl_sign_flipped, _ratio_inverted, _mask_forgotten, _not_detached, _population_std, _beta_missing,
           _per_token_share, _batch_normalised, _beta_hard_coded],
)

# q3 (prediction): the chance that a group of G = 4 independent samples, each right with p = 0.25,
# is all right or all wrong, so that every A-hat in it is 0.
q3 = ValueExercise(lambda: 0.25 ** 4 + 0.75 ** 4, atol=1e-6, var="zero_signal_prob",
                   title=Msg("nb06.q3.title"),
                   hint=[Msg("nb06.q3.hint1"),
                         Msg("nb06.q3.hint2")],
                   wrong=[0.25 ** 4, 0.75 ** 4, 0.5, 1 - 0.25 ** 4 - 0.75 ** 4])


# q4 (predict-then-run): the value of GRPO's objective (eq 19) at pi_theta = pi_old = pi_ref.
def _objective_at_start():
    rewards = torch.tensor([1.0, 0.0, 0.0, 0.0, 1.0, 1.0, 0.0, 1.0])  # two groups of four
    mask = torch.ones(8, 5, dtype=torch.float64)
    logp = torch.full((8, 5), -1.0, dtype=torch.float64)  # any log-probs: pi_theta = pi_old = pi_ref
    return objectives.grpo(logp, logp, logp, rewards.double(), 4, mask, beta=0.04, clip_eps=0.2).item()


q4 = ValueExercise(_objective_at_start, atol=1e-6, var="objective_value",
                   title=Msg("nb06.q4.title"),
                   hint=[Msg("nb06.q4.hint1"),
                         Msg("nb06.q4.hint2")],
                   wrong=[0.625, 0.5, 1.5, -1.0])


# q5 (prediction): the group mean includes the answer itself, so E[(r_i - mean) grad log pi(o_i)] is
# (1 - 1/G) times the true gradient (notebook 06 proves it and checks it by enumerating every group).
q5 = ValueExercise(0.75, atol=1e-6, var="baseline_factor", points=2,  # the baseline lemma, worked for G = 4
                   title=Msg("nb06.q5.title"),
                   hint=[Msg("nb06.q5.hint1"),
                         Msg("nb06.q5.hint2")],
                   wrong=[1.0,    # "a baseline never changes the expected gradient": true only if it excludes o_i
                          0.25,   # 1/G
                          0.0,    # "the advantages sum to 0, so the expected gradient is 0"
                          4 / 3])  # G / (G - 1): the leave-one-out rescaling, inverted
