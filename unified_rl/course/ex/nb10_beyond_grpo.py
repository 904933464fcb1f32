"""Exercises of course/10_beyond_grpo.ipynb: Dr. GRPO's and CISPO's coefficients, the GC of k2 as a
loss, which KL GRPO's k3 penalty follows, and RLOO's baseline.

In the notebook:  from unified_rl.course.ex.nb10_beyond_grpo import q1, q2, q3, q4, q5
References are the package's own coefficients (the compositions `METHODS["dr-grpo"]` and `METHODS["cispo"]`,
`kl.study`), never a copy; each exercise carries plausible wrong answers its checker must reject.
"""

import sympy
import torch

from unified_rl import advantages
from unified_rl.methods import gc_of
from unified_rl.course.exercises import ChoiceExercise, ExpressionExercise, FunctionExercise, ValueExercise
from unified_rl.course.i18n import Msg


def _ragged(gen, n_groups, G):
    """A ragged (B, T) mask, T drawn, and policy log-probs that require grad (non-zero off the mask too)."""
    B, T = n_groups * G, int(torch.randint(4, 9, (), generator=gen))
    lengths = torch.randint(1, T + 1, (B,), generator=gen)
    mask = (torch.arange(T)[None] < lengths[:, None]).double()  # (B, T)
    logp = (-2 * torch.rand(B, T, generator=gen, dtype=torch.float64)).requires_grad_(True)
    return B, mask, logp


def dr_grpo_gc(rewards, group_size, logp, logp_ref, mask, beta, max_len):
    """Dr. GRPO's coefficient on-policy: the package's composition METHODS["dr-grpo"] on these tensors."""
    return gc_of("dr-grpo", logp, mask, logp_ref=logp_ref, scores=rewards, group_size=group_size, beta=beta,
                 settings={"max_len": max_len})


def cispo_gc(rewards, group_size, logp, logp_old, mask, clip_eps_high):
    """CISPO's coefficient (token-mean over each group, no lower bound): METHODS["cispo"] on these tensors."""
    return gc_of("cispo", logp, mask, logp_old=logp_old, scores=rewards, group_size=group_size,
                 settings={"cispo_clip_eps_high": clip_eps_high})


# q1 (implementation): Dr. GRPO's coefficient, on-policy, against METHODS["dr-grpo"].
def _dr_grpo_solution(rewards, group_size, logp, logp_ref, mask, beta, max_len):
    r = rewards.view(-1, group_size)  # (n_groups, G)
    adv = (r - r.mean(-1, keepdim=True)).reshape(-1, 1)  # (B, 1): no std
    kl_term = beta * (torch.exp(logp_ref - logp) - 1)  # (B, T)
    weight = mask.sum(-1, keepdim=True) / max_len  # (B, 1): |o_i| / L, eq 5 divides by |o_i|
    return (weight * (adv + kl_term) * mask).detach()


def _dr_with_std(rewards, group_size, logp, logp_ref, mask, beta, max_len):
    """GRPO's A-hat (divided by the std) kept."""
    adv = advantages.group_relative(rewards, group_size)[:, None]
    return (mask.sum(-1, keepdim=True) / max_len * (adv + beta * (torch.exp(logp_ref - logp) - 1)) * mask).detach()


def _dr_per_sequence(rewards, group_size, logp, logp_ref, mask, beta, max_len):
    """No |o_i| / L factor: GRPO's seq-mean-token-mean, the 1/|o_i| left in."""
    r = rewards.view(-1, group_size)
    adv = (r - r.mean(-1, keepdim=True)).reshape(-1, 1)
    return ((adv + beta * (torch.exp(logp_ref - logp) - 1)) * mask).detach()


def _dr_token_sum(rewards, group_size, logp, logp_ref, mask, beta, max_len):
    """|o_i| instead of |o_i| / L: the token sum, not divided by the constant."""
    return _dr_grpo_solution(rewards, group_size, logp, logp_ref, mask, beta, 1.0)


def _dr_no_beta(rewards, group_size, logp, logp_ref, mask, beta, max_len):
    return _dr_grpo_solution(rewards, group_size, logp, logp_ref, mask, 1.0, max_len)


def _dr_kl_sign(rewards, group_size, logp, logp_ref, mask, beta, max_len):
    return _dr_grpo_solution(rewards, group_size, logp, logp_ref, mask, -beta, max_len)


def _dr_padded_width(rewards, group_size, logp, logp_ref, mask, beta, max_len):
    """L read off the tensor (its padded width T) instead of the max_len passed: equal only when T = L."""
    return _dr_grpo_solution(rewards, group_size, logp, logp_ref, mask, beta, mask.shape[-1])


def _dr_not_detached(rewards, group_size, logp, logp_ref, mask, beta, max_len):
    r = rewards.view(-1, group_size)
    adv = (r - r.mean(-1, keepdim=True)).reshape(-1, 1)
    return mask.sum(-1, keepdim=True) / max_len * (adv + beta * (torch.exp(logp_ref - logp) - 1)) * mask


def _dr_batch(gen, n_groups=None, G=None):
    n_groups = n_groups or int(torch.randint(1, 4, (), generator=gen))
    G = G or int(torch.randint(2, 5, (), generator=gen))
    B, mask, logp = _ragged(gen, n_groups, G)
    T = mask.shape[-1]
    return {"rewards": torch.randint(0, 2, (B,), generator=gen).double(), "group_size": G, "logp": logp,
            "logp_ref": logp.detach() + 0.4 * torch.randn(B, T, generator=gen, dtype=torch.float64),
            "mask": mask, "beta": float(0.02 + 0.5 * torch.rand((), generator=gen)),
            "max_len": float(T + int(torch.randint(1, 6, (), generator=gen)))}  # L: the budget, past the padded width


def _dr_case(rewards, G, shift):
    def make(gen):
        kw = _dr_batch(gen, len(rewards) // G, G)
        kw["rewards"] = torch.tensor(rewards, dtype=torch.float64)
        kw["logp_ref"] = kw["logp"].detach() + shift
        return kw
    return make


q1 = FunctionExercise(
    dr_grpo_gc,
    cases={Msg("nb10.q1.case.one_right_answer_in_four_pi_pi_ref"): _dr_case([1.0, 0.0, 0.0, 0.0], 4, 0.0),
           Msg("nb10.q1.case.an_all_right_group_only_the_KL_term"): _dr_case([1.0, 1.0, 1.0], 3, 0.3),
           Msg("nb10.q1.case.rewards_0_2_and_0_9_two_groups"): _dr_case([0.2, 0.9, 0.9, 0.2], 2, -0.2)},
    random_inputs=_dr_batch, detached=True, var="my_dr_grpo_gc",
    title=Msg("nb10.q1.title"),
    hint=[Msg("nb10.q1.hint1"),
          Msg("nb10.q1.hint2")],
    solution_value=_dr_grpo_solution,
    wrong=[_dr_with_std, _dr_per_sequence, _dr_token_sum, _dr_no_beta, _dr_kl_sign, _dr_not_detached,
           _dr_padded_width],
)


# q2 (implementation): CISPO's coefficient (token-mean, no lower bound), against METHODS["cispo"].
def _cispo_parts(rewards, group_size, logp, logp_old, mask, std_unbiased=True):
    r = rewards.view(-1, group_size)
    std = r.std(-1, keepdim=True, unbiased=std_unbiased)
    adv = torch.where(std > 0, (r - r.mean(-1, keepdim=True)) / (std + 1e-6), torch.zeros_like(r)).reshape(-1, 1)
    n = mask.sum(-1, keepdim=True)  # (B, 1)
    per_group = n.view(-1, group_size).sum(-1, keepdim=True).repeat_interleave(group_size, 0)  # (B, 1)
    return adv, group_size * n / per_group, torch.exp(logp - logp_old)


def _cispo_solution(rewards, group_size, logp, logp_old, mask, clip_eps_high):
    adv, weight, ratio = _cispo_parts(rewards, group_size, logp, logp_old, mask)
    return (weight * ratio.clamp(max=1 + clip_eps_high) * adv * mask).detach()


def _cispo_zeroes_clipped(rewards, group_size, logp, logp_old, mask, clip_eps_high):
    """PPO's habit: GC 0 where the ratio is past the bound and A > 0."""
    adv, weight, ratio = _cispo_parts(rewards, group_size, logp, logp_old, mask)
    keep = ~((adv > 0) & (ratio > 1 + clip_eps_high))
    return (weight * ratio * adv * keep * mask).detach()


def _cispo_per_sequence(rewards, group_size, logp, logp_old, mask, clip_eps_high):
    """Seq-mean-token-mean: the token-mean factor G |o_i| / sum_j |o_j| missing."""
    adv, _, ratio = _cispo_parts(rewards, group_size, logp, logp_old, mask)
    return (ratio.clamp(max=1 + clip_eps_high) * adv * mask).detach()


def _cispo_token_sum(rewards, group_size, logp, logp_old, mask, clip_eps_high):
    """A sum over tokens (factor |o_i|) instead of the token mean."""
    adv, _, ratio = _cispo_parts(rewards, group_size, logp, logp_old, mask)
    return (mask.sum(-1, keepdim=True) * ratio.clamp(max=1 + clip_eps_high) * adv * mask).detach()


def _cispo_population_std(rewards, group_size, logp, logp_old, mask, clip_eps_high):
    adv, weight, ratio = _cispo_parts(rewards, group_size, logp, logp_old, mask, std_unbiased=False)
    return (weight * ratio.clamp(max=1 + clip_eps_high) * adv * mask).detach()


def _cispo_leaky_weight(rewards, group_size, logp, logp_old, mask, clip_eps_high):
    """The clipped ratio left in the graph: no stop-gradient on the weight."""
    adv, weight, ratio = _cispo_parts(rewards, group_size, logp, logp_old, mask)
    return weight * ratio.clamp(max=1 + clip_eps_high) * adv * mask


def _cispo_eps_hard_coded(rewards, group_size, logp, logp_old, mask, clip_eps_high):
    """DAPO's 0.28 written in instead of the clip_eps_high passed."""
    return _cispo_solution(rewards, group_size, logp, logp_old, mask, 0.28)


def _cispo_batch(gen, n_groups=None, G=None, spread=0.4):
    n_groups = n_groups or int(torch.randint(1, 4, (), generator=gen))
    G = G or int(torch.randint(2, 5, (), generator=gen))
    B, mask, logp = _ragged(gen, n_groups, G)
    old = logp.detach() + spread * torch.randn(*mask.shape, generator=gen, dtype=torch.float64)
    return {"rewards": torch.randint(0, 2, (B,), generator=gen).double(), "group_size": G, "logp": logp,
            "logp_old": old, "mask": mask, "clip_eps_high": float(0.1 + 0.4 * torch.rand((), generator=gen))}


q2 = FunctionExercise(
    cispo_gc,
    cases={Msg("nb10.q2.case.on_policy_ratio_1"): lambda gen: _cispo_batch(gen, 2, 3, spread=0.0),
           Msg("nb10.q2.case.ratios_far_above_1_eps_high"): lambda gen: _cispo_batch(gen, 1, 4, spread=1.5),
           Msg("nb10.q2.case.two_groups_of_two"): lambda gen: _cispo_batch(gen, 2, 2)},
    random_inputs=_cispo_batch, detached=True, var="my_cispo_gc", title=Msg("nb10.q2.title"),
    hint=[Msg("nb10.q2.hint1"),
          Msg("nb10.q2.hint2")],
    solution_value=_cispo_solution,
    wrong=[_cispo_zeroes_clipped, _cispo_per_sequence, _cispo_token_sum, _cispo_population_std, _cispo_leaky_weight,
           _cispo_eps_hard_coded],
)

# q3 (derivation): the GC term of k2 = (ell - ell_ref)^2 / 2 used as a loss, -beta * k2 per token.
ell, ell_ref = sympy.symbols("ell ell_ref", real=True)
beta = sympy.Symbol("beta", positive=True)
q3 = ExpressionExercise(
    lambda: sympy.diff(-beta * (ell - ell_ref) ** 2 / 2, ell),
    var="k2_gc", title=Msg("nb10.q3.title"),
    hint=[Msg("nb10.q3.hint1"),
          Msg("nb10.q3.hint2")],
    solution=Msg("nb10.q3.solution"),
    wrong=[-beta * (ell_ref - ell),  # the sign of +beta k2
           ell_ref - ell,  # beta dropped
           beta * (sympy.exp(ell_ref - ell) - 1),  # k3's term
           -beta + 0 * ell],  # k1's term
)

# q4 (prediction): which KL does GRPO's k3 penalty follow in expectation on samples of pi_theta?
q4 = ChoiceExercise(
    {"KL(pi || pi_ref)": Msg("nb10.q4.option.KL_pi_pi_ref"),
     "KL(pi_ref || pi)": Msg("nb10.q4.option.KL_pi_ref_pi"),
     "neither (zero in expectation)": Msg("nb10.q4.option.neither_zero_in_expectation")},
    "KL(pi_ref || pi)", var="k3_follows", title=Msg("nb10.q4.title"),
    hint=[Msg("nb10.q4.hint1"),
          Msg("nb10.q4.hint2")],
    why={"KL(pi || pi_ref)": Msg("nb10.q4.why.KL_pi_pi_ref"),
         "neither (zero in expectation)": Msg("nb10.q4.why.neither_zero_in_expectation")},
    wrong=["KL(pi || pi_ref)", "neither (zero in expectation)"],
)


# q5 (value): RLOO's advantage of the right answer in a group with rewards (1, 0, 0, 0).
def _rloo_right():
    return advantages.leave_one_out(torch.tensor([1.0, 0.0, 0.0, 0.0], dtype=torch.float64), 4)[0].item()


q5 = ValueExercise(_rloo_right, atol=1e-6, var="rloo_right",
                   title=Msg("nb10.q5.title"),
                   hint=[Msg("nb10.q5.hint1"),
                         Msg("nb10.q5.hint2")],
                   wrong=[0.75, 1.5, 0.25, 4 / 3])
