"""Oracle tests of the policy-gradient family (Dr. GRPO, DAPO, GSPO, CISPO, RLOO, REINFORCE++, ReMax,
aggregation, KL terms): autograd of each paper's objective J equals the gradient of the eq-5 surrogate
with the GC, on ragged random float64 batches, on- and off-policy (clips active). Two independent
computations: objectives/policy_gradient.py never mentions a coefficient."""

import doctest

import pytest
import torch
from hypothesis import given, settings, strategies as st

from unified_rl import advantages as A, paradigm as P
from unified_rl.coefficients import policy_gradient as CP
from unified_rl.kl import gc as CK
from unified_rl.objectives import policy_gradient as OP

TOL = 1e-10
AGGS = ("seq-mean-token-mean", "token-mean", "constant")
CASES = st.tuples(st.integers(0, 10**6), st.integers(2, 4), st.integers(1, 3), st.integers(1, 8))


def make(seed, G, n_groups, T, spread=0.5):
    """Ragged (B, T) mask, logp with grad, logp_old / logp_ref nearby, 0/1 and real-valued rewards."""
    g = torch.Generator().manual_seed(seed)
    B = G * n_groups
    mask = torch.zeros(B, T, dtype=torch.float64)
    for i in range(B):
        start = int(torch.randint(0, T, (1,), generator=g))
        mask[i, start:start + int(torch.randint(1, T - start + 1, (1,), generator=g))] = 1
    rnd = lambda: -3 * torch.rand(B, T, generator=g, dtype=torch.float64)  # noqa: E731
    logp = rnd().requires_grad_()
    logp_old = logp.detach() + spread * torch.randn(B, T, generator=g, dtype=torch.float64)
    rewards = torch.randint(0, 2, (B,), generator=g).double()
    if seed % 3 == 0:
        rewards = torch.randn(B, generator=g, dtype=torch.float64)
    return dict(mask=mask, logp=logp, logp_old=logp_old, logp_ref=rnd(), rewards=rewards, G=G, g=g)


def grad_J(J, logp):
    (g,) = torch.autograd.grad(J, logp)
    return g


def grad_S(logp, coef, mask):
    (g,) = torch.autograd.grad(-P.surrogate_loss(logp, coef, mask), logp)
    return g


def agree(J, coef, d):
    return (grad_J(J, d["logp"]) - grad_S(d["logp"], coef, d["mask"])).abs().max().item() <= TOL


@settings(max_examples=40, deadline=None)
@given(CASES, st.sampled_from(AGGS), st.floats(0.0, 0.3), st.booleans())
def test_dr_grpo(case, aggregation, beta, off_policy):
    d = make(*case)
    old = d["logp_old"] if off_policy else d["logp"].detach()
    J = OP.dr_grpo(d["logp"], old, d["logp_ref"], d["rewards"], d["G"], d["mask"], beta, 0.2, 7.0, aggregation)
    coef = CP.dr_grpo(d["rewards"], d["G"], d["logp"], d["logp_ref"], d["mask"], beta, 7.0, aggregation=aggregation,
                      **(dict(logp_old=old, clip_eps=0.2) if off_policy else {}))
    assert agree(J, coef, d)


@settings(max_examples=40, deadline=None)
@given(CASES, st.sampled_from(AGGS), st.floats(0.05, 0.3), st.floats(0.05, 0.5))
def test_dapo_clip_higher_off_policy(case, aggregation, low, high):
    d = make(*case)
    J = OP.dapo(d["logp"], d["logp_old"], d["rewards"], d["G"], d["mask"], low, high, aggregation=aggregation, max_len=5)
    coef = CP.dapo(d["rewards"], d["G"], d["logp"], d["logp_old"], d["mask"], low, high, aggregation=aggregation,
                   max_len=5)
    assert agree(J, coef, d)


@settings(max_examples=40, deadline=None)
@given(CASES, st.sampled_from(AGGS), st.floats(0.01, 0.3))
def test_gspo_sequence_ratio(case, aggregation, clip_eps):
    d = make(*case, spread=0.2)
    J = OP.gspo(d["logp"], d["logp_old"], d["rewards"], d["G"], d["mask"], clip_eps, 1.5 * clip_eps,
                aggregation=aggregation, max_len=3)
    coef = CP.gspo(d["rewards"], d["G"], d["logp"], d["logp_old"], d["mask"], clip_eps, 1.5 * clip_eps,
                   aggregation=aggregation, max_len=3)
    assert agree(J, coef, d)


@settings(max_examples=40, deadline=None)
@given(CASES, st.sampled_from(AGGS), st.floats(0.05, 2.0), st.one_of(st.none(), st.floats(0.05, 0.5)))
def test_cispo(case, aggregation, high, low):
    d = make(*case)
    J = OP.cispo(d["logp"], d["logp_old"], d["rewards"], d["G"], d["mask"], high, low, aggregation=aggregation,
                 max_len=4)
    coef = CP.cispo(d["rewards"], d["G"], d["logp"], d["logp_old"], d["mask"], high, low, aggregation=aggregation,
                    max_len=4)
    assert agree(J, coef, d)


@settings(max_examples=40, deadline=None)
@given(CASES, st.sampled_from(AGGS), st.booleans())
def test_rloo(case, aggregation, off_policy):
    d = make(*case)
    kw = dict(logp_old=d["logp_old"], clip_eps=0.2) if off_policy else {}
    J = OP.rloo(d["logp"], d["rewards"], d["G"], d["mask"], aggregation, 1.0, **kw)
    coef = CP.rloo(d["rewards"], d["G"], d["mask"], logp=d["logp"], aggregation=aggregation, **kw)
    assert agree(J, coef, d)


@settings(max_examples=40, deadline=None)
@given(CASES, st.sampled_from(("seq-mean-token-mean", "token-mean")), st.floats(0.0, 0.3), st.booleans())
def test_reinforce_pp(case, aggregation, beta, with_baseline):
    d = make(*case)
    G = d["G"] if with_baseline else 1
    adv = CP.reinforce_pp_advantage(d["rewards"], d["logp_old"], d["logp_ref"], d["mask"], beta, G)
    J = OP.reinforce_pp(d["logp"], d["logp_old"], d["logp_ref"], d["rewards"], d["mask"], beta, 0.2, G,
                        aggregation=aggregation)
    coef = CP.reinforce_pp(adv, d["mask"], logp=d["logp"], logp_old=d["logp_old"], clip_eps=0.2,
                           aggregation=aggregation)
    assert agree(J, coef, d)


@settings(max_examples=40, deadline=None)
@given(CASES, st.sampled_from(AGGS), st.booleans())
def test_remax(case, aggregation, off_policy):
    seed, _, n, T = case
    d = make(seed, 2, n, T)
    kw = dict(logp_old=d["logp_old"], clip_eps=0.2) if off_policy else {}
    J = OP.remax(d["logp"], d["rewards"], d["mask"], aggregation, 3.0, **kw)
    coef = CP.remax(d["rewards"], d["mask"], logp=d["logp"], aggregation=aggregation, max_len=3.0, **kw)
    assert agree(J, coef, d)
    assert (coef[1::2] == 0).all()  # the greedy row is only a baseline


@settings(max_examples=40, deadline=None)
@given(CASES, st.sampled_from(tuple(CK.ESTIMATORS)), st.floats(0.0, 1.0), st.booleans())
def test_kl_penalty_terms(case, estimator, beta, off_policy):
    d = make(*case)
    old = d["logp_old"] if off_policy else None
    J = OP.kl_penalty(d["logp"], d["logp_ref"], d["mask"], beta, estimator, logp_old=old)
    coef = CK.kl_penalty(d["logp"], d["logp_ref"], d["mask"], beta, estimator, logp_old=old)
    assert agree(J, coef, d)


def test_aggregation_factor_is_the_only_difference():
    """The same per-token terms under each aggregation: GC differs from seq-mean-token-mean by the row factor."""
    d = make(4, 3, 2, 6)
    m, G = d["mask"], 3
    base = CP.dapo(d["rewards"], G, d["logp"], d["logp_old"], m, aggregation="seq-mean-token-mean")
    n = m.sum(-1, keepdim=True)
    for agg, factor in (("token-mean", G * n / n.view(-1, G).sum(-1).repeat_interleave(G)[:, None]),
                        ("constant", n / 5.0)):
        coef = CP.dapo(d["rewards"], G, d["logp"], d["logp_old"], m, aggregation=agg, max_len=5.0)
        assert torch.allclose(coef, base * factor, atol=1e-12)


def test_dr_grpo_length_bias_and_std():
    """With a negative advantage GRPO pushes a long wrong answer down less per token; Dr. GRPO does not."""
    m = torch.tensor([[1.0] * 8, [1.0] * 2 + [0.0] * 6, [1.0] * 4 + [0.0] * 4, [1.0] * 4 + [0.0] * 4],
                     dtype=torch.float64)
    r = torch.tensor([0.0, 0.0, 1.0, 1.0], dtype=torch.float64)
    z = torch.zeros_like(m)
    from unified_rl import coefficients as C
    per_token_grpo = C.grpo(r, 4, z, z, m, 0.0)[:, 0] / m.sum(-1)  # eq 5 divides GC by |o_i|
    per_token_dr = CP.dr_grpo(r, 4, z, z, m, 0.0, 8.0)[:, 0] / m.sum(-1)
    assert per_token_grpo[0] > per_token_grpo[1]  # both wrong (< 0): the 8-token one is pushed down less
    assert per_token_grpo[0] == pytest.approx(per_token_grpo[1] / 4)
    assert per_token_dr[0] == pytest.approx(per_token_dr[1]) and per_token_dr[0] < 0
    # dividing by std reweights questions: a 1-in-4 group gets more push than in Dr. GRPO's reward units
    assert torch.allclose(A.group_centred(r, 4), r - 0.5)
    assert torch.allclose(A.leave_one_out(r, 4), 4 / 3 * (r - 0.5))


def test_coefficients_detached_zero_off_mask_and_exact_zero_groups():
    d = make(7, 4, 2, 6)
    m, G = d["mask"], 4
    same = torch.full((8,), 0.7, dtype=torch.float32)  # float32 equal rewards: no signal, exactly
    coefs = [CP.dr_grpo(d["rewards"], G, d["logp"], d["logp_ref"], m, 0.1, 6.0),
             CP.dapo(d["rewards"], G, d["logp"], d["logp_old"], m), CP.gspo(d["rewards"], G, d["logp"], d["logp_old"], m),
             CP.cispo(d["rewards"], G, d["logp"], d["logp_old"], m, 0.3), CP.rloo(d["rewards"], G, m),
             CP.remax(d["rewards"], m), CK.kl_penalty(d["logp"], d["logp_ref"], m, 0.1, "k3-ratio"),
             CK.kl_in_reward(d["logp_old"], d["logp_ref"], m, 0.1)]
    for coef in coefs:
        assert not coef.requires_grad and (coef[m == 0] == 0).all()
    for fn in (lambda r: CP.dr_grpo(r, G, d["logp"], d["logp"], m, 0.1, 6.0),
               lambda r: CP.dapo(r, G, d["logp"], d["logp_old"], m), lambda r: CP.gspo(r, G, d["logp"], d["logp_old"], m),
               lambda r: CP.cispo(r, G, d["logp"], d["logp_old"], m, 0.3), lambda r: CP.rloo(r, G, m)):
        assert (fn(same) == 0).all()


def test_cispo_never_zeroes_a_token_where_dapo_does():
    m = torch.ones(2, 3, dtype=torch.float64)
    old = torch.zeros(2, 3, dtype=torch.float64)
    logp = torch.log(torch.tensor([[0.5, 1.0, 2.0]] * 2, dtype=torch.float64))  # ratio below, inside, above
    r = torch.tensor([1.0, 0.0], dtype=torch.float64)
    dapo = CP.dapo(r, 2, logp, old, m, 0.2, 0.28)
    cispo = CP.cispo(r, 2, logp, old, m, 0.28, 0.2)
    assert dapo[0, 2] == 0 and dapo[1, 0] == 0  # A > 0 above 1.28, A < 0 below 0.8: clipped
    assert (cispo != 0).all()
    assert cispo[0, 2] == pytest.approx(1.28 * 0.5 ** 0.5, rel=1e-5)  # weight capped at 1 + eps_high


def test_gspo_one_ratio_per_sequence():
    m = torch.tensor([[1.0, 1.0, 0.0], [1.0, 1.0, 1.0]], dtype=torch.float64)
    old = torch.zeros(2, 3, dtype=torch.float64)
    logp = torch.tensor([[0.1, -0.1, 5.0], [0.3, 0.0, 0.0]], dtype=torch.float64)  # off-mask 5.0 ignored
    coef = CP.gspo(torch.tensor([1.0, 0.0]), 2, logp, old, m, 0.2, 0.2)
    assert torch.allclose(coef[0, :2], torch.full((2,), 0.5 ** 0.5, dtype=torch.float64))  # s = e^0 = 1
    assert torch.allclose(coef[1], torch.full((3,), -(0.5 ** 0.5) * torch.e ** 0.1, dtype=torch.float64))


def test_rloo_is_k_over_k_minus_1_times_centred_reward():
    r = torch.tensor([1.0, 0.0, 0.0, 1.0, 0.3, 0.9], dtype=torch.float64)
    assert torch.allclose(A.leave_one_out(r, 3), 1.5 * A.group_centred(r, 3))


@pytest.mark.parametrize("call, words", [
    (lambda: CP.aggregation_weight(torch.ones(2, 2), "sum"), "unknown aggregation"),
    (lambda: CP.aggregation_weight(torch.ones(2, 2), "constant"), "max_len"),
    (lambda: CP.aggregation_weight(torch.ones(2, 2), "constant", max_len=0), "max_len must be > 0"),
    (lambda: CP.dapo(torch.ones(3), 2, torch.zeros(3, 2), torch.zeros(3, 2), torch.ones(3, 2)), "groups"),
    (lambda: CP.dapo(torch.ones(2), 2, torch.zeros(2, 2), torch.zeros(2, 2), torch.ones(2, 2), clip_eps_high=-1),
     "clip_eps_high"),
    (lambda: CP.rloo(torch.ones(2), 1, torch.ones(2, 2)), "group_size >= 2"),
    (lambda: CP.rloo(torch.tensor([True, False]), 2, torch.ones(2, 2)), "boolean"),
    (lambda: CP.remax(torch.ones(3), torch.ones(3, 2)), "groups of 2"),
    (lambda: CP.dr_grpo(torch.ones(2), 2, torch.zeros(2, 2), torch.zeros(2, 2), torch.ones(2, 2), 0.0, 4,
                        logp_old=torch.zeros(2, 2)), "together"),
    (lambda: CK.kl_penalty(torch.zeros(1, 2), torch.zeros(1, 2), torch.ones(1, 2), 0.1, "k4"), "unknown KL estimator"),
    (lambda: CP.gspo(torch.ones(2), 2, torch.zeros(2, 2), torch.full((2, 2), float("nan")), torch.ones(2, 2)),
     "non-finite"),
    (lambda: OP.dapo(torch.zeros(2, 2), torch.zeros(2, 2), torch.ones(2), 2, torch.ones(2, 2), aggregation="x"),
     "unknown aggregation"),
])
def test_bad_input_is_a_clear_value_error(call, words):
    with pytest.raises(ValueError, match=words):
        call()


def test_docstring_examples():
    assert doctest.testmod(CP).failed == 0 and doctest.testmod(CK).failed == 0
    assert doctest.testmod(A).failed == 0


def test_clip_higher_keeps_pushing_a_rising_token():
    """A > 0 and ratio 1.25: a symmetric 0.2 clip stops the push, DAPO's eps_high = 0.28 does not."""
    m, old = torch.ones(2, 1, dtype=torch.float64), torch.zeros(2, 1, dtype=torch.float64)
    logp = torch.log(torch.tensor([[1.25], [1.0]], dtype=torch.float64))
    r = torch.tensor([1.0, 0.0], dtype=torch.float64)
    assert CP.dapo(r, 2, logp, old, m, 0.2, 0.2)[0, 0] == 0
    assert CP.dapo(r, 2, logp, old, m, 0.2, 0.28)[0, 0] == pytest.approx(1.25 * 0.5 ** 0.5, rel=1e-5)
