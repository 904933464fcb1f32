"""Exercises of course/05_ppo.ipynb: PPO's coefficient (eq 15-18) and GAE, derived, implemented, predicted.

In the notebook:  from unified_rl.course.ex.nb05_ppo import q1, q2, q3, q4, q5
Each exercise names the notebook variable it reads and carries its solution and plausible wrong
answers (tests/test_exercises.py runs every checker on them). References are the package's own
functions (`coefficients.ppo`, `advantages.gae`), never a copy.
"""

import sympy
import torch

from unified_rl import advantages, coefficients
from unified_rl.course.exercises import ExpressionExercise, FunctionExercise, ValueExercise
from unified_rl.course.i18n import Msg

# q1 (derivation): the exact coefficient of eq 16 for one token, off-policy (pi_old != pi_theta).
ell, ell_old, A = sympy.symbols("ell ell_old A", real=True)  # log-probs and an advantage: either sign

q1 = ExpressionExercise(
    lambda: sympy.diff(sympy.exp(ell - ell_old) * A, ell),
    var="gc_eq16", title=Msg("nb05.q1.title"),
    hint=[Msg("nb05.q1.hint1"),
          Msg("nb05.q1.hint2")],
    solution=Msg("nb05.q1.solution"),
    wrong=[A,  # eq 18: the value at pi_old = pi_theta only
           sympy.exp(ell - ell_old),  # the ratio without the advantage
           -A * sympy.exp(ell - ell_old),  # sign flipped
           A * sympy.exp(ell_old - ell),  # the ratio upside down
           sympy.Abs(A) * sympy.exp(ell - ell_old)],  # the advantage's size without its sign: right for A > 0 only
)

# q2 (derivation): GAE by hand for a two-token response with terminal reward R and values V1, V2.
R, V1, V2 = sympy.symbols("R V1 V2", real=True)  # a reward and values: either sign
gamma, lam = sympy.symbols("gamma lam", positive=True)


def _gae_first_token():
    delta2 = R - V2  # the last token: r_2 = R and V = 0 after the response
    delta1 = 0 + gamma * V2 - V1  # no reward before the last token
    return delta1 + gamma * lam * delta2


q2 = ExpressionExercise(
    _gae_first_token, var="adv_first_token", title=Msg("nb05.q2.title"),
    hint=[Msg("nb05.q2.hint1"),
          Msg("nb05.q2.hint2")],
    solution=Msg("nb05.q2.solution"),
    wrong=[(gamma * V2 - V1) + lam * (R - V2),  # lambda without gamma
           (gamma * V2 - V1) + gamma * lam * (R + gamma * V2 - V2),  # bootstrapping past the end
           gamma * R - V1,  # Monte Carlo return minus V (lambda = 1), not GAE
           (gamma * V2 - V1) + gamma * lam * R],  # forgot V2 in the last delta
)


# q3 (implementation): GAE, checked against advantages.gae.
def _gae_solution(rewards, values, mask, gamma, lam):
    values = values * mask
    adv = torch.zeros_like(rewards)
    next_adv = torch.zeros_like(rewards[:, 0])
    next_value = torch.zeros_like(rewards[:, 0])
    for t in reversed(range(mask.shape[1])):
        on_next = mask[:, t + 1] if t + 1 < mask.shape[1] else torch.zeros_like(mask[:, 0])
        delta = rewards[:, t] + gamma * next_value * on_next - values[:, t]  # V = 0 after the response
        next_adv = (delta + gamma * lam * next_adv * on_next) * mask[:, t]
        adv[:, t] = next_adv
        next_value = values[:, t]
    return adv, (adv + values) * mask


def _gae_no_lambda(rewards, values, mask, gamma, lam):
    return _gae_solution(rewards, values, mask, gamma, 1.0)


def _gae_bootstraps_past_the_end(rewards, values, mask, gamma, lam):
    """Reads V of the padding after a response instead of 0."""
    adv = torch.zeros_like(rewards)
    next_adv = torch.zeros_like(rewards[:, 0])
    for t in reversed(range(mask.shape[1])):
        next_value = values[:, t + 1] if t + 1 < mask.shape[1] else torch.zeros_like(values[:, 0])
        delta = rewards[:, t] + gamma * next_value - values[:, t]
        next_adv = (delta + gamma * lam * next_adv) * mask[:, t]
        adv[:, t] = next_adv
    return adv, (adv + values * mask) * mask


def _gae_monte_carlo_returns(rewards, values, mask, gamma, lam):
    adv, _ = _gae_solution(rewards, values, mask, gamma, lam)
    returns = torch.zeros_like(rewards)
    running = torch.zeros_like(rewards[:, 0])
    for t in reversed(range(mask.shape[1])):
        running = (rewards[:, t] + gamma * running) * mask[:, t]
        returns[:, t] = running
    return adv, returns  # the regression target of a Monte Carlo critic, not GAE's A + V


def _gae_inputs(gen):
    B, T = int(torch.randint(2, 5, (), generator=gen)), int(torch.randint(4, 8, (), generator=gen))
    lens = torch.randint(1, T + 1, (B,), generator=gen)
    mask = (torch.arange(T)[None] < lens[:, None]).float()  # (B, T)
    return {"rewards": torch.randn(B, T, generator=gen), "values": torch.randn(B, T, generator=gen),  # both off the mask too
            "mask": mask, "gamma": 0.9 + 0.1 * float(torch.rand((), generator=gen)),
            "lam": 0.5 + 0.5 * float(torch.rand((), generator=gen))}


q3 = FunctionExercise(
    advantages.gae,
    cases={
        Msg("nb05.q3.case.one_token_reward_1"): {"rewards": torch.tensor([[1.0]]), "values": torch.tensor([[0.4]]),
                                                 "mask": torch.ones(1, 1), "gamma": 1.0, "lam": 0.95},
        Msg("nb05.q3.case.terminal_reward_only_gamma_lam_1"): {"rewards": torch.tensor([[0.0, 0.0, 1.0]]),
                                                               "values": torch.tensor([[0.2, 0.5, 0.7]]),
                                                               "mask": torch.ones(1, 3), "gamma": 1.0, "lam": 1.0},
        Msg("nb05.q3.case.padding_after_a_short_response_values_there_are_not_0"): {
            "rewards": torch.tensor([[0.0, 1.0, 0.0, 0.0], [0.0, 0.0, 0.0, -1.0]]),
            "values": torch.tensor([[0.3, 0.6, 0.9, 0.9], [0.1, 0.2, 0.3, 0.4]]),
            "mask": torch.tensor([[1.0, 1.0, 0.0, 0.0], [1.0, 1.0, 1.0, 1.0]]), "gamma": 0.99, "lam": 0.9},
    },
    random_inputs=_gae_inputs, var="my_gae", title=Msg("nb05.q3.title"),
    hint=[Msg("nb05.q3.hint1"),
          Msg("nb05.q3.hint2")],
    solution_value=_gae_solution,
    wrong=[_gae_no_lambda, _gae_bootstraps_past_the_end, _gae_monte_carlo_returns],
)


# q4 (predict, then run): the clipped coefficient for A = -1 at ratio 1.3, clip_eps = 0.2.
def _clipped_negative():
    r = torch.tensor([[1.3]])
    return coefficients.ppo(torch.tensor([[-1.0]]), torch.ones(1, 1), logp=r.log(), logp_old=torch.zeros(1, 1),
                            clip_eps=0.2).item()


q4 = ValueExercise(
    _clipped_negative, atol=1e-4, var="predicted_gc",
    title=Msg("nb05.q4.title"),
    hint=[Msg("nb05.q4.hint1"),
          Msg("nb05.q4.hint2")],
    wrong=[0.0, -1.0, -1.2, 1.3],  # clipped to 0; eq 18 on-policy; clip(r) * A; wrong sign
)



# q5 (implementation): the exact clipped coefficient of eq 15, against coefficients.ppo, checked by
# its gradient too (log-probs that require grad; eq 5's surrogate backpropagated without its detach).
def _ppo_gc_solution(adv, mask, logp, logp_old, clip_eps):
    ratio = torch.exp(logp - logp_old)  # (B, T): pi_theta / pi_old
    clipped = ((adv > 0) & (ratio > 1 + clip_eps)) | ((adv < 0) & (ratio < 1 - clip_eps))  # moved far enough
    return (ratio * adv * (~clipped) * mask).detach()


def _printed_a(adv, mask, logp, logp_old, clip_eps):
    """Eq 18 as printed: right only at pi_theta = pi_old."""
    return (adv * mask).detach()


def _clip_both_sides(adv, mask, logp, logp_old, clip_eps):
    """0 whenever the ratio left the range, whichever way: also stops tokens that moved the wrong way."""
    ratio = torch.exp(logp - logp_old)
    outside = (ratio - 1).abs() > clip_eps
    return (ratio * adv * (~outside) * mask).detach()


def _clipped_ratio(adv, mask, logp, logp_old, clip_eps):
    """clip(r) * A: the clipped term's value, not its derivative."""
    ratio = torch.exp(logp - logp_old)
    return (ratio.clamp(1 - clip_eps, 1 + clip_eps) * adv * mask).detach()


def _sides_swapped(adv, mask, logp, logp_old, clip_eps):
    """Stops A > 0 below the range and A < 0 above it: the pessimistic bound read backwards."""
    ratio = torch.exp(logp - logp_old)
    clipped = ((adv > 0) & (ratio < 1 - clip_eps)) | ((adv < 0) & (ratio > 1 + clip_eps))
    return (ratio * adv * (~clipped) * mask).detach()


def _sign_flipped(adv, mask, logp, logp_old, clip_eps):
    return -_ppo_gc_solution(adv, mask, logp, logp_old, clip_eps)


def _per_token_share(adv, mask, logp, logp_old, clip_eps):
    """Divides by |o|: eq 5's surrogate already averages over the response's tokens."""
    return _ppo_gc_solution(adv, mask, logp, logp_old, clip_eps) / mask.sum(-1, keepdim=True)


def _not_detached(adv, mask, logp, logp_old, clip_eps):
    """The right values, but r = exp(logp - logp_old) keeps its graph: autograd differentiates it again."""
    ratio = torch.exp(logp - logp_old)
    clipped = ((adv > 0) & (ratio > 1 + clip_eps)) | ((adv < 0) & (ratio < 1 - clip_eps))
    return ratio * adv * (~clipped) * mask


def _eps_hard_coded(adv, mask, logp, logp_old, clip_eps):
    """PPO's usual 0.2 written in instead of the clip_eps it was given."""
    return _ppo_gc_solution(adv, mask, logp, logp_old, 0.2)


def _no_mask(adv, mask, logp, logp_old, clip_eps):
    """Prompt and padding tokens keep their ratio * A: the mask forgotten."""
    ratio = torch.exp(logp - logp_old)
    clipped = ((adv > 0) & (ratio > 1 + clip_eps)) | ((adv < 0) & (ratio < 1 - clip_eps))
    return (ratio * adv * (~clipped)).detach()


def _ppo_inputs(gen):
    B, T = int(torch.randint(2, 6, (), generator=gen)), int(torch.randint(4, 8, (), generator=gen))
    lens = torch.randint(1, T + 1, (B,), generator=gen)
    mask = (torch.arange(T)[None] < lens[:, None]).float()  # (B, T), ragged
    logp = -2 * torch.rand(B, T, generator=gen)
    return {"adv": torch.randn(B, T, generator=gen), "mask": mask, "logp": logp,  # adv non-zero off the mask too
            "logp_old": logp + 0.4 * torch.randn(B, T, generator=gen),  # ratios on both sides of the range
            "clip_eps": float(0.1 + 0.25 * torch.rand((), generator=gen))}


def _on_policy(gen):
    kw = _ppo_inputs(gen)
    return {**kw, "logp_old": kw["logp"].clone()}  # pi_theta = pi_old: eq 18's A_t


def _one_token_each(ratios, signs):
    r = torch.tensor(ratios)[:, None]
    return {"adv": torch.tensor(signs, dtype=torch.float32)[:, None], "mask": torch.ones(len(ratios), 1),
            "logp": r.log(), "logp_old": torch.zeros(len(ratios), 1), "clip_eps": 0.2}


q5 = FunctionExercise(
    coefficients.ppo,
    cases={Msg("nb05.q5.case.on_policy_ratio_1"): _on_policy,
           Msg("nb05.q5.case.one_token_in_each_region_of_the_table"): _one_token_each([0.7, 1.1, 1.3, 0.7, 0.9, 1.3],
                                                                    [1.0, 1.0, 1.0, -1.0, -1.0, -1.0])},
    random_inputs=_ppo_inputs, detached=True, var="my_ppo_gc",
    title=Msg("nb05.q5.title"),
    hint=[Msg("nb05.q5.hint1"),
          Msg("nb05.q5.hint2")],
    solution_value=_ppo_gc_solution,
    wrong=[_printed_a, _clip_both_sides, _clipped_ratio, _sides_swapped, _sign_flipped, _per_token_share,
           _not_detached, _eps_hard_coded, _no_mask],
)
