"""The sympy derivations of the policy-gradient family (derivations/policy_gradient.py) against the package's
coefficients (coefficients/policy_gradient.py, kl/gc.py), and wrong hand forms or claims that must fail."""
import dataclasses

import numpy as np
import pytest
import sympy as sp
import torch

from unified_rl import advantages as A
from unified_rl.coefficients import policy_gradient as CP
from unified_rl.kl import gc as CK
from unified_rl.derivations import check, derive
from unified_rl.derivations import policy_gradient as DP

rng = np.random.default_rng(0)
MASK = torch.tensor([[1.0, 1.0, 0.0], [1.0, 1.0, 1.0]], dtype=torch.float64)  # lengths 2 and 3 (n = 2)
ON = MASK.bool()


def t(x):
    return torch.tensor(np.asarray(x, dtype=np.float64))


def ragged(scale=1.0, shift=0.0):
    """(2, 3) values on the mask, 0 off it, and their flat list in token order."""
    x = torch.zeros(2, 3, dtype=torch.float64)
    x[ON] = t(shift + scale * rng.normal(size=5))
    return x, x[ON].numpy()


def test_dr_grpo_matches_coefficients():
    d = derive("dr_grpo", 2)
    (logp, lf), (old, of), (ref, rf) = ragged(), ragged(), ragged()
    r, beta, L = np.array([1.0, 0.0]), 0.05, 6.0
    gc = d.evaluate(rewards=r, logp=lf, logp_old=of, logp_ref=rf, beta=beta, max_len=L)
    want = CP.dr_grpo(t(r), 2, logp, ref, MASK, beta, L, logp_old=old, clip_eps=1e6)
    np.testing.assert_allclose(gc, want[ON].numpy(), rtol=1e-12)
    printed = d.evaluate("printed", rewards=r, logp=lf, logp_old=of, logp_ref=rf, beta=beta, max_len=L)
    np.testing.assert_allclose(printed, CP.dr_grpo(t(r), 2, logp, ref, MASK, beta, L)[ON].numpy(), rtol=1e-12)


@pytest.mark.parametrize("method", ["dapo", "gspo", "cispo"])
def test_clipped_family_matches_coefficients_in_every_region(method):
    d = derive(method, 1)  # responses of 1 and 2 tokens
    m = torch.tensor([[1.0, 0.0], [1.0, 1.0]], dtype=torch.float64)
    on = m.bool()
    old = torch.zeros(2, 2, dtype=torch.float64)
    old[on] = t(rng.normal(size=3))
    r = t([1.0, 0.0])
    adv = A.group_relative(r, 2).numpy()
    # rows: A > 0 above 1 + 0.28 / between 1.2 and 1.28 / inside; A < 0 below 0.8 / inside / mixed
    ratios = np.array([[1.6, 0.5, 0.9], [1.25, 0.7, 0.75], [1.0, 1.1, 0.6]])
    logp = old.clone().unsqueeze(0).repeat(3, 1, 1)  # (3, 2, 2)
    logp[:, on] += t(np.log(ratios))
    fn = {"dapo": lambda lp: CP.dapo(r, 2, lp, old, m, 0.2, 0.28),
          "gspo": lambda lp: CP.gspo(r, 2, lp, old, m, 0.2, 0.28),
          "cispo": lambda lp: CP.cispo(r, 2, lp, old, m, 0.28, 0.2)}[method]
    gc = np.stack([d.evaluate(adv=adv, logp=lp[on].numpy(), logp_old=old[on].numpy(), clip_eps=0.2,
                              clip_eps_high=0.28) for lp in logp])
    want = np.stack([fn(lp)[on].numpy() for lp in logp])
    np.testing.assert_allclose(gc, want, rtol=1e-9, atol=1e-12)
    assert (want == 0).any() == (method != "cispo")  # the clip binds somewhere, except in CISPO


def test_rloo_remax_reinforce_pp_and_aggregation_match_coefficients():
    d = derive("rloo", 2)  # three responses of 2, 2 and 3 tokens
    m = torch.tensor([[1.0, 1.0, 0.0], [1.0, 1.0, 0.0], [1.0, 1.0, 1.0]], dtype=torch.float64)
    r = np.array([1.0, 0.0, 0.5])
    np.testing.assert_allclose(d.evaluate(rewards=r, logp=np.zeros(7)), CP.rloo(t(r), 3, m)[m.bool()].numpy())
    d = derive("remax", 2)
    np.testing.assert_allclose(d.evaluate(rewards=[1.0, 0.0], logp=np.zeros(4)),
                               CP.remax(t([1.0, 0.0]), torch.ones(2, 2, dtype=torch.float64)).flatten().numpy())
    d = derive("reinforce_pp", 3)
    logp, old, ref = (rng.normal(size=3) for _ in range(3))
    raw = 1.0 - 0.1 * np.cumsum((old - ref)[::-1])[::-1]  # R - beta sum_{t' >= t} k1
    mu, sigma = raw.mean(), raw.std(ddof=1) + 1e-6
    gc = d.evaluate(rewards=1.0, logp=logp, logp_old=old, logp_ref=ref, beta=0.1, mu=mu, sigma=sigma)
    adv = CP.reinforce_pp_advantage(t([1.0]), t([old]), t([ref]), torch.ones(1, 3, dtype=torch.float64), 0.1)
    want = CP.reinforce_pp(adv, torch.ones(1, 3, dtype=torch.float64), logp=t([logp]), logp_old=t([old]), clip_eps=1e6)
    np.testing.assert_allclose(gc, want.flatten().numpy(), rtol=1e-9)
    for agg in CP.AGGREGATIONS:
        d = derive(f"aggregation_{agg.replace('-', '_')}", 2)
        adv = np.array([0.7, -1.3])
        gc = d.evaluate(logp=np.zeros(5), adv=adv, **({"max_len": 4.0} if agg == "constant" else {}))
        want = CP.aggregation_weight(MASK, agg, max_len=4.0) * t(adv)[:, None] * MASK
        np.testing.assert_allclose(gc, want[ON].numpy(), rtol=1e-12)


@pytest.mark.parametrize("use", list(DP.KL_TARGETS))
def test_kl_terms_match_coefficients(use):
    d = derive(f"kl_{use}", 3)
    logp, ref, old = (rng.normal(size=3) for _ in range(3))
    v = dict(logp=logp, logp_ref=ref, beta=0.3) | ({"logp_old": old} if "logp_old" in d.symbols else {})
    m = torch.ones(1, 3, dtype=torch.float64)
    if use == "k1_reward":
        want = CK.kl_in_reward(t([old]), t([ref]), m, 0.3)
    else:
        want = CK.kl_penalty(t([logp]), t([ref]), m, 0.3, use[:-5].replace("_", "-"), logp_old=t([old]))
    np.testing.assert_allclose(d.evaluate(**v), want.flatten().numpy(), rtol=1e-12)


def test_wrong_forms_fail():
    """Each derivation can fail: a symmetric clip, per-token ratios for GSPO, a CISPO that zeroes tokens,
    RLOO without k/(k-1), Dr. GRPO with 1/|o|, the wrong aggregation factor."""
    dapo = derive("dapo", 1)
    gspo = derive("gspo", 1)
    ratio = [sp.exp(x - y) for x, y in zip(gspo.symbols["logp"], gspo.symbols["logp_old"])]
    a1, a2 = gspo.symbols["adv"]
    rloo, dr = derive("rloo", 1), derive("dr_grpo", 1)
    wrong = [(dapo, tuple(h.subs(DP.EPS_HIGH, DP.EPS_LOW) for h in dapo.hand)),
             (gspo, tuple(DP._asym_clipped(r, a) for r, a in zip(ratio, (a1, a2, a2)))),
             (derive("cispo", 1), dapo.hand),
             (rloo, tuple(h * sp.Rational(2, 3) for h in rloo.hand)),
             (dr, tuple(h * L for h, L in zip(dr.hand, (1, DP.L / 2, DP.L / 2)))),
             (derive("aggregation_token_mean", 1), derive("aggregation_seq_mean_token_mean", 1).hand)]
    for d, hand in wrong:
        with pytest.raises(AssertionError, match="differs from the hand form"):
            check(dataclasses.replace(d, hand=hand))


@pytest.mark.slow
@pytest.mark.parametrize("use, target", [("k3_loss", "reverse"), ("k2_loss", "forward"), ("k1_loss", "reverse"),
                                         ("k3_ratio_loss", "forward"), ("k1_reward", "zero")])
def test_a_wrong_kl_claim_fails(use, target):
    with pytest.raises(AssertionError, match="claim fails"):
        check(DP._kl(1, use, target))
