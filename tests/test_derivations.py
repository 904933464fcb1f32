"""The sympy-derived GC against the hand forms, the package's coefficients and autograd."""
import dataclasses
import functools

import numpy as np
import pytest
import sympy as sp
import torch

from unified_rl import coefficients, objectives
from unified_rl.derivations import NAMES, check, derive, outcome_advantage

N = 3  # tokens per response
rng = np.random.default_rng(0)


def row(x):
    """A numpy vector as a (1, T) float64 tensor."""
    return torch.tensor(np.asarray(x, dtype=np.float64).reshape(1, -1))


def ones(*shape):
    return torch.ones(*shape, dtype=torch.float64)


# clipped derivations check every (sign, region) case: one token (and a two-token sibling) keeps them fast
ONE_TOKEN = {"grpo_clip", "dapo", "gspo", "cispo", "dpo_aot", "dpo_aot_unpaired"}
SLOW = {"dapo", "gspo", "kl_k2_loss", "kl_k3_ratio_loss", "kl_k1_reward",
        "dpo_exo_pair", "dpo_discopop", "dpo_aot", "dpo_aot_unpaired"}  # > 2 s each on a busy machine


@pytest.mark.parametrize("method", [pytest.param(m, marks=pytest.mark.slow) if m in SLOW else m for m in NAMES])
def test_every_derivation_checks(method):
    assert check(derive(method, n_tokens=1 if method in ONE_TOKEN else 2))


def test_sft_and_rft_match_coefficients():
    logp = rng.normal(size=N)
    gc = derive("sft", N).evaluate(logp=logp)
    np.testing.assert_allclose(gc, coefficients.sft(ones(1, N)).numpy().ravel())
    for method, fn in (("rft", coefficients.rft), ("online_rft", coefficients.online_rft)):
        for correct in (0.0, 1.0):
            gc = derive(method, N).evaluate(logp=logp, correct=correct)
            want = fn(torch.tensor([correct], dtype=torch.float64), ones(1, N))
            np.testing.assert_allclose(gc, want.numpy().ravel())


def dpo_values(beta=0.7):
    names = ("logp_chosen", "logp_ref_chosen", "logp_rejected", "logp_ref_rejected")
    return {**{k: rng.normal(size=N) for k in names}, "beta": beta}


def test_dpo_matches_coefficients_and_autograd():
    d, v = derive("dpo", N), dpo_values()
    gc = d.evaluate(**v)
    c_chosen, c_rejected = coefficients.dpo(
        row(v["logp_chosen"]), row(v["logp_ref_chosen"]), ones(1, N),
        row(v["logp_rejected"]), row(v["logp_ref_rejected"]), ones(1, N), v["beta"])
    np.testing.assert_allclose(gc, torch.cat([c_chosen, c_rejected], 1).numpy().ravel(), rtol=1e-12)
    lc, lr = row(v["logp_chosen"]).requires_grad_(), row(v["logp_rejected"]).requires_grad_()
    J = objectives.dpo(lc, row(v["logp_ref_chosen"]), ones(1, N),
                       lr, row(v["logp_ref_rejected"]), ones(1, N), v["beta"])
    J.backward()
    autograd = N * torch.cat([lc.grad, lr.grad], 1)  # GC = |o| dJ/dlogp
    np.testing.assert_allclose(gc, autograd.numpy().ravel(), rtol=1e-12)
    # and the printed eq 14 is a different number
    assert np.abs(d.evaluate("printed", **v) - gc).max() > 1e-3


def test_dpo_printed_is_exact_over_beta_when_tokens_agree():
    d, v = derive("dpo", N), dpo_values(beta=0.3)
    # constant per-token log-ratios: eq 14's per-token argument equals the sequence mean
    v["logp_chosen"] = v["logp_ref_chosen"] + 0.4
    v["logp_rejected"] = v["logp_ref_rejected"] - 0.9
    np.testing.assert_allclose(d.evaluate(**v) / d.evaluate("printed", **v), 0.3, rtol=1e-12)


def test_ppo_matches_coefficients_off_and_on_policy():
    d = derive("ppo", N)
    adv, logp_old = rng.normal(size=N), rng.normal(size=N)
    logp = logp_old + rng.normal(scale=0.3, size=N)
    gc = d.evaluate(adv=adv, logp=logp, logp_old=logp_old)
    unclipped = coefficients.ppo(row(adv), ones(1, N), logp=row(logp), logp_old=row(logp_old), clip_eps=1e6)
    np.testing.assert_allclose(gc, unclipped.numpy().ravel(), rtol=1e-12)
    on_policy = d.evaluate(adv=adv, logp=logp, logp_old=logp)
    np.testing.assert_allclose(on_policy, coefficients.ppo(row(adv), ones(1, N)).numpy().ravel())
    np.testing.assert_allclose(d.evaluate("printed", adv=adv, logp=logp, logp_old=logp_old), adv)


# every region: A > 0 and A < 0, ratio below, inside (three points) and above [1 - 0.2, 1 + 0.2]
RATIOS = np.array([0.5, 0.9, 1.0, 1.1, 1.6] * 2)
ADV = np.array([0.7] * 5 + [-1.3] * 5)
CLIPPED = np.array([0, 0, 0, 0, 1, 1, 0, 0, 0, 0], dtype=bool)


def test_ppo_clip_matches_coefficients_and_autograd():
    T = len(RATIOS)
    d = derive("ppo_clip", T)
    logp_old = rng.normal(size=T)
    logp = logp_old + np.log(RATIOS)
    v = dict(adv=ADV, logp=logp, logp_old=logp_old, clip_eps=0.2)
    gc = d.evaluate(**v)
    np.testing.assert_allclose(gc, d.evaluate("hand", **v), rtol=1e-12)
    np.testing.assert_allclose(gc, np.where(CLIPPED, 0.0, RATIOS * ADV), rtol=1e-12)
    want = coefficients.ppo(row(ADV), ones(1, T), logp=row(logp), logp_old=row(logp_old), clip_eps=0.2)
    np.testing.assert_allclose(gc, want.numpy().ravel(), rtol=1e-12)
    lp = row(logp).requires_grad_()
    objectives.ppo(lp, row(logp_old), row(ADV), ones(1, T), 0.2).backward()
    np.testing.assert_allclose(gc, T * lp.grad.numpy().ravel(), rtol=1e-12)


def test_grpo_matches_coefficients_with_given_advantage():
    G = 2
    d = derive("grpo", N, group_size=G)
    adv, logp, logp_ref = (rng.normal(size=(G, N)) for _ in range(3))
    logp_old = logp + rng.normal(scale=0.3, size=(G, N))
    beta = 0.05
    gc = d.evaluate(adv=adv, logp=logp, logp_old=logp_old, logp_ref=logp_ref, beta=beta)
    t = lambda x: torch.tensor(x)  # noqa: E731
    want = coefficients.grpo(None, G, t(logp), t(logp_ref), ones(G, N), beta,
                             adv=t(adv), logp_old=t(logp_old), clip_eps=1e6)
    np.testing.assert_allclose(gc, want.numpy().ravel(), rtol=1e-12)
    on_policy = d.evaluate(adv=adv, logp=logp, logp_old=logp, logp_ref=logp_ref, beta=beta)
    want = coefficients.grpo(None, G, t(logp), t(logp_ref), ones(G, N), beta, adv=t(adv))
    np.testing.assert_allclose(on_policy, want.numpy().ravel(), rtol=1e-12)
    printed = d.evaluate("printed", adv=adv, logp=logp, logp_old=logp_old, logp_ref=logp_ref, beta=beta)
    np.testing.assert_allclose(printed, on_policy, rtol=1e-12)


def test_grpo_with_outcome_rewards_matches_coefficients():
    G, n = 3, 2
    d = derive("grpo", n, group_size=G)
    rewards = sp.symbols(f"r_1:{G + 1}", real=True)
    adv_of = outcome_advantage(rewards, eps=sp.Rational(1, 10**6))
    A, l, lo = d.symbols["adv"], d.symbols["logp"], d.symbols["logp_old"]
    subs = {**{A[k]: adv_of[k // n] for k in range(G * n)}, **dict(zip(lo, l))}  # on-policy
    d = dataclasses.replace(d, gc=tuple(g.subs(subs) for g in d.gc), symbols={
        "rewards": rewards, "logp": l, "logp_ref": d.symbols["logp_ref"], "beta": d.symbols["beta"]})
    for r in ([1.0, 0.0, 0.0], [0.3, -1.2, 2.0]):
        logp, logp_ref = rng.normal(size=(G, n)), rng.normal(size=(G, n))
        gc = d.evaluate(rewards=r, logp=logp, logp_ref=logp_ref, beta=0.04)
        want = coefficients.grpo(torch.tensor(r, dtype=torch.float64), G, torch.tensor(logp),
                                 torch.tensor(logp_ref), ones(G, n), 0.04)
        np.testing.assert_allclose(gc, want.numpy().ravel(), rtol=1e-10)


def test_grpo_clip_matches_coefficients_and_autograd():
    G, n = 2, len(RATIOS) // 2
    d = derive("grpo_clip", n, group_size=G)
    logp_old, logp_ref = rng.normal(size=(G, n)), rng.normal(size=(G, n))
    logp = logp_old + np.log(RATIOS).reshape(G, n)
    adv, beta = ADV.reshape(G, n), 0.1
    gc = d.evaluate(adv=adv, logp=logp, logp_old=logp_old, logp_ref=logp_ref, beta=beta, clip_eps=0.2)
    kl = beta * (np.exp(logp_ref - logp) - 1)
    np.testing.assert_allclose(gc, np.where(CLIPPED, 0.0, RATIOS * ADV) + kl.ravel(), rtol=1e-12)
    t = torch.tensor
    want = coefficients.grpo(None, G, t(logp), t(logp_ref), ones(G, n), beta,
                             adv=t(adv), logp_old=t(logp_old), clip_eps=0.2)
    np.testing.assert_allclose(gc, want.numpy().ravel(), rtol=1e-12)
    lp = t(logp).requires_grad_()
    objectives.grpo(lp, t(logp_old), t(logp_ref), None, G, ones(G, n), beta, 0.2, adv=t(adv)).backward()
    np.testing.assert_allclose(gc, G * n * lp.grad.numpy().ravel(), rtol=1e-12)


WRONG_FORMS = ("sft twice", "dpo as printed", "ppo clip zero outside range", "grpo kl sign")


@functools.lru_cache(maxsize=None)
def wrong_forms():
    """Hand forms a reader might write, each wrong somewhere (derived by the first test that asks, not
    while pytest collects this file)."""
    sft = derive("sft", 2)
    dpo = derive("dpo", 2)
    ppo = derive("ppo_clip", 1)
    r = sp.exp(ppo.symbols["logp"][0] - ppo.symbols["logp_old"][0])
    eps, A = ppo.symbols["clip_eps"], ppo.symbols["adv"][0]
    only_inside = sp.Piecewise((r * A, (r > 1 - eps) & (r < 1 + eps)), (0, True))  # zeroes A>0, r<1-eps
    grpo = derive("grpo", 1)
    l, lref, lo = grpo.symbols["logp"], grpo.symbols["logp_ref"], grpo.symbols["logp_old"]
    beta = grpo.symbols["beta"]
    kl_sign = tuple(sp.exp(a - b) * h + beta * (1 - sp.exp(c - a))
                    for a, b, c, h in zip(l, lo, lref, grpo.symbols["adv"]))
    return [("sft twice", sft, (sp.Integer(2),) * 2),
            ("dpo as printed", dpo, dpo.printed),
            ("ppo clip zero outside range", ppo, (only_inside,)),
            ("grpo kl sign", grpo, kl_sign)]


def test_the_wrong_forms_are_the_ones_named():
    assert tuple(name for name, _, _ in wrong_forms()) == WRONG_FORMS


@pytest.mark.parametrize("name", WRONG_FORMS)
def test_a_wrong_hand_form_fails_the_check(name):
    _, d, wrong = next(form for form in wrong_forms() if form[0] == name)
    with pytest.raises(AssertionError, match="differs from the hand form"):
        check(dataclasses.replace(d, hand=wrong))


def test_a_wrong_claim_fails_the_check():
    d = derive("dpo", 2)
    text, expr = d.claims[0]
    beta = d.symbols["beta"]
    wrong = dataclasses.replace(d, claims=((text.replace("beta", "1"), expr + beta - 1),))
    with pytest.raises(AssertionError, match="claim fails"):
        check(wrong)


def test_latex_shows_objective_gc_and_printed_form():
    dpo = derive("dpo", 2)._repr_latex_()
    assert dpo.startswith("$") and r"\sigma" in dpo and r"\text{printed}" in dpo
    assert r"\text{printed}" not in derive("sft", 2).latex()
    assert r"G\,|o_i|\,\frac{\partial J}{\partial \ell_{1,1}}" in derive("grpo", 1).latex()


def test_bad_requests_raise_value_error():
    with pytest.raises(ValueError, match="unknown method 'trpo'"):
        derive("trpo")
    with pytest.raises(ValueError, match="n_tokens"):
        derive("sft", 0)
    d = derive("ppo", 2)
    with pytest.raises(ValueError, match="missing value for 'logp_old'"):
        d.evaluate(adv=[1, 2], logp=[0, 0])
    with pytest.raises(ValueError, match="logp needs 2 numbers, got 3"):
        d.evaluate(adv=[1, 2], logp=[0, 0, 0], logp_old=[0, 0])
    with pytest.raises(ValueError, match="no 'printed' form"):
        derive("sft", 1).evaluate("printed", logp=[0.0])
