"""Oracle tests of the policy-gradient compositions (Dr. GRPO, DAPO, GSPO, CISPO, RLOO, REINFORCE++, ReMax, every
aggregation, every KL term in the loss and in the reward): the gradient of the eq-5 surrogate with a method's
coefficient (its parts' tensor functions, what the trainer runs) equals autograd of the paper's objective J, and
so does autograd of the composition's own objective (each part's objective term: the model oracle's side). On
ragged random float64 batches, on- and off-policy (clips active).

The papers' objectives are written below from the papers: the advantages by hand from the rewards, each
aggregation as the sum and the normaliser its source prints, stop-gradients as .detach(). They share nothing
with unified_rl.parts or unified_rl.advantages, so a slip in a part's tensor function or in its objective term
fails here."""

import contextlib
import dataclasses
import doctest
import importlib
import pkgutil
from types import SimpleNamespace

import pytest
import torch
from hypothesis import given, settings, strategies as st

import unified_rl.parts as parts_pkg
from unified_rl import advantages as A, coefficients as C, paradigm as P, parts
from unified_rl.kl import gc as CK
from unified_rl.methods import METHODS, gc_of
from unified_rl.presets import get_preset

TOL = 1e-10
AGGS = tuple(parts.AGGREGATIONS)  # every registered aggregation: `aggregate` below must know each one
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


# ---------------------------------------------------------------- the papers' objectives, by hand

def tok(a, m):
    """(B,) per response -> (B, T) on every token."""
    return a.to(m.dtype)[:, None].expand_as(m)


def hat(r, G, eps=1e-6):
    """GRPO's A-hat: (R - group mean) / (group sample std + eps), 0 in an all-equal group."""
    out = []
    for g in r.double().view(-1, G):
        std = g.std() if G > 1 else torch.tensor(0.0, dtype=torch.float64)
        out.append(torch.zeros_like(g) if std == 0 else (g - g.mean()) / (std + eps))
    return torch.cat(out)


def centred(r, G):
    return torch.cat([g - g.mean() for g in r.double().view(-1, G)])


def leave_one_out(r, G):
    return torch.tensor([v - (sum(g) - v) / (G - 1) for g in r.double().view(-1, G).tolist() for v in g],
                        dtype=torch.float64)


def minclip(ratio, adv, low, high):
    """min(r A, clip(r, 1 - low, 1 + high) A): PPO's eq 7 with the two ends decoupled."""
    return torch.min(ratio * adv, torch.clamp(ratio, 1 - low, 1 + high) * adv)


def kl_estimate(name, logp, logp_ref):
    """Schulman's k1, k2, k3 of KL(pi || pi_ref) at one sampled token, x = log pi_ref / pi."""
    x = logp_ref - logp
    return {"k1": lambda: -x, "k2": lambda: x ** 2 / 2, "k3": lambda: torch.exp(x) - 1 - x}[name]()


def aggregate(f, m, name, G=1, L=None):
    """One number from per-token terms, as verl's agg_loss, Dr. GRPO and DAPO print it (B rows, L a constant); an
    aggregation registered later and not written here fails the assert."""
    B = m.shape[0]
    rows = (f * m).sum(-1)
    if name == "seq-mean-token-mean":
        return (rows / m.sum(-1)).mean()
    if name == "token-mean":
        return rows.sum() / m.sum()
    if name == "group-token-mean":
        return torch.stack([rows[i:i + G].sum() / m[i:i + G].sum() for i in range(0, B, G)]).mean()
    if name == "seq-mean-token-sum":
        return rows.mean()
    if name == "token-sum":
        return rows.sum()
    assert name in ("seq-mean-token-sum-norm", "constant")  # verl's name since b8d91ef8, and its alias
    return rows.sum() / (B * L)


def seq_ratio(lp, old, m):
    """GSPO's s_i = exp(mean_t log r), (B, 1)."""
    return torch.exp(((lp - old) * m).sum(-1, keepdim=True) / m.sum(-1, keepdim=True))


# ---------------------------------------------------------------- the package's side

def cfg(beta=0.0, clip_eps=0.2):
    return dataclasses.replace(get_preset("cpu").rl, beta=beta, clip_eps=clip_eps)


def run(m, d, settings_=None, *, beta=0.0, clip_eps=0.2, off_policy=True, G=None, rows=None):
    """(coefficient, the composition's J, logp_old) of Method m on batch d with its settings moved."""
    hp = dataclasses.replace(m.hparams, **(settings_ or {}))
    old = d["logp_old"] if off_policy else d["logp"].detach()
    step = P.step_from_tensors(d["logp"], d["mask"], cfg(beta, clip_eps), logp_old=old, logp_ref=d["logp_ref"],
                               scores=d["rewards"], group_size=G or d["G"], hp=hp)
    return m.coefficient(step), m.objective(step), old


def grad_of(J, logp):
    (g,) = torch.autograd.grad(J, logp)
    return g


def grad_S(logp, coef, mask):
    (g,) = torch.autograd.grad(-P.surrogate_loss(logp, coef, mask), logp)
    return g


def check(J_paper, coef, J_parts, d):
    """The coefficient's gradient and the composition's J's gradient both equal the paper's J's."""
    want = grad_of(J_paper, d["logp"])
    tol = TOL * max(1.0, want.abs().max().item())  # float64 rounding grows with the gradient (an std near 0 divides)
    assert (want - grad_S(d["logp"], coef, d["mask"])).abs().max().item() <= tol, "coefficient != paper's J"
    assert (want - grad_of(J_parts, d["logp"])).abs().max().item() <= tol, "composition's objective != paper's J"


# ---------------------------------------------------------------- each method against its paper

@pytest.mark.parametrize("aggregation", AGGS)
@settings(max_examples=15, deadline=None)
@given(CASES, st.floats(0.0, 0.3), st.booleans())
def test_dr_grpo(aggregation, case, beta, off_policy):
    """Figure 1: sum_i sum_t [min(r A, clip(r) A) - beta k3], A = R - mean (no std), over a constant."""
    d = make(*case)
    coef, J, old = run(METHODS["dr-grpo"], d, {"aggregation": aggregation, "max_len": 7.0}, beta=beta,
                       off_policy=off_policy)
    lp, m = d["logp"], d["mask"]
    f = minclip(torch.exp(lp - old), tok(centred(d["rewards"], d["G"]), m), 0.2, 0.2) \
        - beta * kl_estimate("k3", lp, d["logp_ref"])
    check(aggregate(f, m, aggregation, d["G"], 7.0), coef, J, d)


@pytest.mark.parametrize("aggregation", AGGS)
@settings(max_examples=15, deadline=None)
@given(CASES, st.floats(0.05, 0.3), st.floats(0.05, 0.5))
def test_dapo_clip_higher_off_policy(aggregation, case, low, high):
    d = make(*case)
    coef, J, old = run(METHODS["dapo"], d, {"aggregation": aggregation, "max_len": 5.0, "clip_eps_high": high},
                       clip_eps=low)
    f = minclip(torch.exp(d["logp"] - old), tok(hat(d["rewards"], d["G"]), d["mask"]), low, high)
    check(aggregate(f, d["mask"], aggregation, d["G"], 5.0), coef, J, d)


@pytest.mark.parametrize("aggregation", AGGS)
@settings(max_examples=15, deadline=None)
@given(CASES, st.floats(0.01, 0.3))
def test_gspo_sequence_ratio(aggregation, case, clip_eps):
    d = make(*case, spread=0.2)
    coef, J, old = run(METHODS["gspo"], d, {"aggregation": aggregation, "max_len": 3.0, "gspo_clip_eps": clip_eps,
                                            "gspo_clip_eps_high": 1.5 * clip_eps})
    s = seq_ratio(d["logp"], old, d["mask"]).expand_as(d["mask"])
    f = minclip(s, tok(hat(d["rewards"], d["G"]), d["mask"]), clip_eps, 1.5 * clip_eps)
    check(aggregate(f, d["mask"], aggregation, d["G"], 3.0), coef, J, d)


@pytest.mark.parametrize("aggregation", AGGS)
@settings(max_examples=15, deadline=None)
@given(CASES, st.floats(0.05, 2.0), st.one_of(st.none(), st.floats(0.05, 0.5)))
def test_cispo(aggregation, case, high, low):
    """§3.1: sg(clip(r, 1 - eps_low, 1 + eps_high)) A log pi, no lower bound where eps_low is None."""
    d = make(*case)
    coef, J, old = run(METHODS["cispo"], d, {"aggregation": aggregation, "max_len": 4.0,
                                             "cispo_clip_eps_high": high, "cispo_clip_eps": low})
    weight = torch.clamp(torch.exp(d["logp"] - old), -float("inf") if low is None else 1 - low, 1 + high).detach()
    f = weight * tok(hat(d["rewards"], d["G"]), d["mask"]) * d["logp"]
    check(aggregate(f, d["mask"], aggregation, d["G"], 4.0), coef, J, d)


@pytest.mark.parametrize("aggregation", AGGS)
@settings(max_examples=15, deadline=None)
@given(CASES, st.booleans())
def test_rloo(aggregation, case, off_policy):
    """§3: (R_i - mean of the others) log pi(o_i|q); REINFORCE as printed on-policy, PPO's clip when reused."""
    d = make(*case)
    coef, J, old = run(METHODS["rloo"], d, {"aggregation": aggregation, "max_len": 1.0}, off_policy=off_policy)
    adv = tok(leave_one_out(d["rewards"], d["G"]), d["mask"])
    f = minclip(torch.exp(d["logp"] - old), adv, 0.2, 0.2) if off_policy else adv * d["logp"]
    check(aggregate(f, d["mask"], aggregation, d["G"], 1.0), coef, J, d)


def reinforce_pp_advantage(d, old, beta, G, baseline, estimator="k1"):
    """A_t = R (minus the group's mean) - beta sum_{t' >= t} k(sampler, ref), normalised over the batch's tokens."""
    r = d["rewards"].double()
    if G > 1 and baseline == "group":
        r = centred(r, G)
    m = d["mask"]
    k = kl_estimate(estimator, old, d["logp_ref"]) * m  # the sampled tokens' KL, under the sampler (pi_old)
    later = torch.stack([k[:, t:].sum(-1) for t in range(m.shape[1])], 1)
    adv = r[:, None] - beta * later
    on = m.bool()
    return (adv - adv[on].mean()) / (adv[on].std() + 1e-6)


@pytest.mark.parametrize("aggregation", AGGS)
@settings(max_examples=15, deadline=None)
@given(CASES, st.floats(0.0, 0.3), st.sampled_from(("group", "none", "G=1")),
       st.sampled_from(("k1", "k2", "k3")))
def test_reinforce_pp(aggregation, case, beta, baseline, estimator):
    """REINFORCE++ (its row: k1 in the reward) and the same advantage with k2 or k3 in the reward."""
    d = make(*case)
    G = 1 if baseline == "G=1" else d["G"]
    m = METHODS["reinforce++"] if estimator == "k1" else parts.compose(
        "reinforce_plus_plus", "vanilla", kl=estimator, kl_in="reward")
    coef, J, old = run(m, d, {"aggregation": aggregation, "max_len": 2.0,
                              "reinforce_baseline": "none" if baseline == "none" else "group"}, beta=beta, G=G)
    adv = reinforce_pp_advantage(d, old, beta, G, baseline, estimator)
    f = minclip(torch.exp(d["logp"] - old), adv, 0.2, 0.2)
    check(aggregate(f, d["mask"], aggregation, G, 2.0), coef, J, d)


@pytest.mark.parametrize("aggregation", AGGS)
@settings(max_examples=15, deadline=None)
@given(CASES, st.booleans())
def test_remax(aggregation, case, off_policy):
    """Algorithm 1: (R(o) - R(o_greedy)) log pi(o|q) on the sampled rows; the greedy row is only a baseline."""
    seed, _, n, T = case
    d = make(seed, 2, n, T)
    coef, J, old = run(METHODS["remax"], d, {"aggregation": aggregation, "max_len": 3.0}, off_policy=off_policy)
    s = slice(0, None, 2)
    adv = tok(d["rewards"][0::2] - d["rewards"][1::2], d["mask"][s])
    f = minclip(torch.exp(d["logp"][s] - old[s]), adv, 0.2, 0.2) if off_policy else adv * d["logp"][s]
    check(aggregate(f, d["mask"][s], aggregation, 1, 3.0), coef, J, d)
    assert (coef[1::2] == 0).all()


KL_CASES = [("k1", False), ("k2", False), ("k3", False), ("k3", True)]


@contextlib.contextmanager
def planted(registry, name, **fields):
    """Part `name` of `registry` with some fields replaced (a planted bug), restored on exit."""
    real = registry[name]
    dict.__setitem__(registry, name, dataclasses.replace(real, **fields))
    try:
        yield
    finally:
        dict.__setitem__(registry, name, real)


def kl_case(d, name, corrected, beta, off_policy, aggregation, level):
    """GRPO with KL term `name` in the loss, against its paper's J: -beta k per token (rho k3 where corrected)."""
    m = parts.compose("grpo", "vanilla", kl=name, **({"use_bias_correction_kl": corrected} if name == "k3" else {}))
    coef, J, old = run(m, d, {"aggregation": aggregation, "max_len": 6.0, "importance_sampling_level": level},
                       beta=beta, off_policy=off_policy)
    lp, mask = d["logp"], d["mask"]
    rho = torch.exp(lp - old) if level == "token" else seq_ratio(lp, old, mask).expand_as(mask)
    penalty = kl_estimate(name, lp, d["logp_ref"]) * (rho if corrected else 1)
    f = minclip(rho, tok(hat(d["rewards"], d["G"]), mask), 0.2, 0.2) - beta * penalty
    check(aggregate(f, mask, aggregation, d["G"], 6.0), coef, J, d)


@pytest.mark.parametrize("kl", KL_CASES, ids=["k1", "k2", "k3", "k3-bias-corrected"])
@settings(max_examples=25, deadline=None)
@given(CASES, st.floats(0.05, 1.0), st.booleans(), st.sampled_from(AGGS), st.sampled_from(("token", "sequence")))
def test_kl_terms_in_the_loss(kl, case, beta, off_policy, aggregation, level):
    """GRPO with each KL term in the loss: k1, k2, k3, and k3's bias-corrected rho k3 at either ratio level."""
    kl_case(make(*case), *kl, beta, off_policy, aggregation, level)


def test_the_oracle_fails_on_a_planted_bug():
    """The checks can fail: k3's GC with the sign of its exponent flipped, a token-mean without its row factor,
    and a REINFORCE++ whose KL reward is measured from pi_theta instead of the sampler, are each caught."""
    d = make(3, 3, 2, 6)
    with planted(parts.KL_TERMS, "k3", gc=lambda v: v.cfg.beta * torch.expm1(v.logp - v.logp_ref)):
        with pytest.raises(AssertionError, match="coefficient"):
            kl_case(d, "k3", False, 0.5, True, "seq-mean-token-mean", "token")
    kl_case(d, "k3", False, 0.5, True, "seq-mean-token-mean", "token")  # the plant removed: it passes
    with planted(parts.AGGREGATIONS, "token-mean", gc=lambda v: torch.ones_like(v.mask[:, :1])):
        with pytest.raises(AssertionError, match="coefficient"):
            kl_case(d, "k2", False, 0.5, True, "token-mean", "token")
    with pytest.raises(AssertionError, match="coefficient"):  # the paper's KL is the sampler's, not pi_theta's
        m = METHODS["reinforce++"]
        coef, J, old = run(m, d, beta=0.3)
        wrong = dict(d, logp_old=d["logp"].detach())
        f = minclip(torch.exp(d["logp"] - old), reinforce_pp_advantage(wrong, d["logp"].detach(), 0.3, 3, "group"),
                    0.2, 0.2)
        check(aggregate(f, d["mask"], "seq-mean-token-mean"), coef, J, d)


# ---------------------------------------------------------------- what the coefficients look like

def dapo_gc(r, G, logp, old, m, low=0.2, high=0.28, aggregation="group-token-mean", max_len=17.0):
    return gc_of("dapo", logp, m, logp_old=old, scores=r, group_size=G, clip_eps=low,
                 settings={"clip_eps_high": high, "aggregation": aggregation, "max_len": max_len})


def test_aggregation_factor_is_the_only_difference():
    """The same per-token terms under each aggregation: GC differs from seq-mean-token-mean by the row factor."""
    d = make(4, 3, 2, 6)
    m, G, B = d["mask"], 3, 6
    base = dapo_gc(d["rewards"], G, d["logp"], d["logp_old"], m, aggregation="seq-mean-token-mean")
    n = m.sum(-1, keepdim=True)
    factors = {"group-token-mean": G * n / n.view(-1, G).sum(-1).repeat_interleave(G)[:, None],
               "token-mean": B * n / n.sum(), "seq-mean-token-sum": n, "seq-mean-token-sum-norm": n / 5.0,
               "constant": n / 5.0, "token-sum": B * n}
    assert set(factors) | {"seq-mean-token-mean"} == set(parts.AGGREGATIONS) | set(parts.AGGREGATIONS.aliases) - {"prompt_mean"}
    for agg, factor in factors.items():
        coef = dapo_gc(d["rewards"], G, d["logp"], d["logp_old"], m, aggregation=agg, max_len=5.0)
        assert torch.allclose(coef, base * factor, atol=1e-12), agg


def dr_grpo_gc(r, G, logp, ref, m, beta, L, **kw):
    return gc_of("dr-grpo", logp, m, logp_ref=ref, scores=r, group_size=G, beta=beta, settings={"max_len": L}, **kw)


def test_dr_grpo_length_bias_and_std():
    """With a negative advantage GRPO pushes a long wrong answer down less per token; Dr. GRPO does not."""
    m = torch.tensor([[1.0] * 8, [1.0] * 2 + [0.0] * 6, [1.0] * 4 + [0.0] * 4, [1.0] * 4 + [0.0] * 4],
                     dtype=torch.float64)
    r = torch.tensor([0.0, 0.0, 1.0, 1.0], dtype=torch.float64)
    z = torch.zeros_like(m)
    per_token_grpo = C.grpo(r, 4, z, z, m, 0.0)[:, 0] / m.sum(-1)  # eq 5 divides GC by |o_i|
    per_token_dr = dr_grpo_gc(r, 4, z, z, m, 0.0, 8.0)[:, 0] / m.sum(-1)
    assert per_token_grpo[0] > per_token_grpo[1]  # both wrong (< 0): the 8-token one is pushed down less
    assert per_token_grpo[0] == pytest.approx(per_token_grpo[1] / 4)
    assert per_token_dr[0] == pytest.approx(per_token_dr[1]) and per_token_dr[0] < 0
    # dividing by std reweights questions: a 1-in-4 group gets more push than in Dr. GRPO's reward units
    assert torch.allclose(A.group_centred(r, 4), r - 0.5)
    assert torch.allclose(A.leave_one_out(r, 4), 4 / 3 * (r - 0.5))


NOT_OUTCOME = {"one", "indicator", "gae", "process", "gdpo"}  # no reward, 0/1 only, per batch, reward columns
OUTCOME = [n for n, m in METHODS.items() if isinstance(m.composition, parts.Composition)
           and m.composition.advantage not in NOT_OUTCOME]


def test_coefficients_detached_zero_off_mask_and_exact_zero_groups():
    """Every outcome-reward method: detached, 0 off the mask; equal float32 rewards give exactly 0 on-policy."""
    assert {"grpo", "dr-grpo", "dapo", "gspo", "cispo", "rloo", "reinforce++", "remax"} <= set(OUTCOME)
    d = make(7, 4, 2, 6)
    m = d["mask"]
    same = torch.full((8,), 0.7, dtype=torch.float32)  # float32 equal rewards: no signal, exactly
    for name in OUTCOME:
        G = 2 if name == "remax" else 4
        kw = dict(logp_ref=d["logp_ref"], group_size=G, beta=0.1)
        coef = gc_of(name, d["logp"], m, logp_old=d["logp_old"], scores=d["rewards"], **kw)
        assert not coef.requires_grad and (coef[m == 0] == 0).all() and (coef != 0).any(), name
        kw.update(logp_ref=d["logp"].detach(), group_size=2 if name == "remax" else 8)  # no KL (k at pi_ref = pi
        assert (gc_of(name, d["logp"], m, scores=same, **kw) == 0).all(), name  # is 0); 8 rows: mean(0.7) != 0.7


def test_a_float32_mask_with_float64_log_probs():
    """A float64 policy on a float32 batch (the distributed job's lab64): every outcome method's coefficient is the
    one it has on a float64 mask, to float32's rounding (a per-response advantage takes the mask's dtype)."""
    d = make(11, 4, 2, 6)
    m = d["mask"]
    for name in OUTCOME:
        kw = dict(logp_old=d["logp_old"], logp_ref=d["logp_ref"], scores=d["rewards"], beta=0.1,
                  group_size=2 if name == "remax" else 4)
        want = gc_of(name, d["logp"], m, **kw)
        got = gc_of(name, d["logp"], m.float(), **kw)
        assert torch.allclose(got.double(), want, rtol=1e-6, atol=1e-6), name


def test_cispo_never_zeroes_a_token_where_dapo_does():
    m = torch.ones(2, 3, dtype=torch.float64)
    old = torch.zeros(2, 3, dtype=torch.float64)
    logp = torch.log(torch.tensor([[0.5, 1.0, 2.0]] * 2, dtype=torch.float64))  # ratio below, inside, above
    r = torch.tensor([1.0, 0.0], dtype=torch.float64)
    dapo = dapo_gc(r, 2, logp, old, m, 0.2, 0.28)
    cispo = gc_of("cispo", logp, m, logp_old=old, scores=r, group_size=2,
                  settings={"cispo_clip_eps_high": 0.28, "cispo_clip_eps": 0.2})
    assert dapo[0, 2] == 0 and dapo[1, 0] == 0  # A > 0 above 1.28, A < 0 below 0.8: clipped
    assert (cispo != 0).all()
    assert cispo[0, 2] == pytest.approx(1.28 * 0.5 ** 0.5, rel=1e-5)  # weight capped at 1 + eps_high


def test_gspo_one_ratio_per_sequence():
    m = torch.tensor([[1.0, 1.0, 0.0], [1.0, 1.0, 1.0]], dtype=torch.float64)
    old = torch.zeros(2, 3, dtype=torch.float64)
    logp = torch.tensor([[0.1, -0.1, 5.0], [0.3, 0.0, 0.0]], dtype=torch.float64)  # off-mask 5.0 ignored
    coef = gc_of("gspo", logp, m, logp_old=old, scores=torch.tensor([1.0, 0.0]), group_size=2,
                 settings={"gspo_clip_eps": 0.2, "gspo_clip_eps_high": 0.2})
    assert torch.allclose(coef[0, :2], torch.full((2,), 0.5 ** 0.5, dtype=torch.float64))  # s = e^0 = 1
    assert torch.allclose(coef[1], torch.full((3,), -(0.5 ** 0.5) * torch.e ** 0.1, dtype=torch.float64))


def test_rloo_is_k_over_k_minus_1_times_centred_reward():
    r = torch.tensor([1.0, 0.0, 0.0, 1.0, 0.3, 0.9], dtype=torch.float64)
    assert torch.allclose(A.leave_one_out(r, 3), 1.5 * A.group_centred(r, 3))


def test_clip_higher_keeps_pushing_a_rising_token():
    """A > 0 and ratio 1.25: a symmetric 0.2 clip stops the push, DAPO's eps_high = 0.28 does not."""
    m, old = torch.ones(2, 1, dtype=torch.float64), torch.zeros(2, 1, dtype=torch.float64)
    logp = torch.log(torch.tensor([[1.25], [1.0]], dtype=torch.float64))
    r = torch.tensor([1.0, 0.0], dtype=torch.float64)
    assert dapo_gc(r, 2, logp, old, m, 0.2, 0.2)[0, 0] == 0
    assert dapo_gc(r, 2, logp, old, m, 0.2, 0.28)[0, 0] == pytest.approx(1.25 * 0.5 ** 0.5, rel=1e-5)


# ---------------------------------------------------------------- bad input

def _z(B=2, T=2):
    return torch.zeros(B, T)


def _objective_with(name, **hp):
    """A method's objective on a Step whose settings were never checked (a plain namespace)."""
    m = METHODS[name]
    step = P.step_from_tensors(_z(), torch.ones(2, 2), cfg(), scores=torch.tensor([1.0, 0.0]), group_size=2,
                               hp=SimpleNamespace(**{**dataclasses.asdict(m.hparams), **hp}))
    return m.objective(step)


@pytest.mark.parametrize("call, words", [
    (lambda: parts.compose("grpo", "vanilla", aggregation="sum"), "unknown aggregation 'sum'"),
    (lambda: parts.compose("grpo", "vanilla", aggregation="batch-token-mean"),
     "'batch-token-mean' is now called 'token-mean'"),
    (lambda: dr_grpo_gc(torch.ones(2), 2, _z(), _z(), torch.ones(2, 2), 0.0, None), "needs max_len"),
    (lambda: dr_grpo_gc(torch.ones(2), 2, _z(), _z(), torch.ones(2, 2), 0.0, 0), "max_len must be > 0"),
    (lambda: dapo_gc(torch.ones(3), 2, _z(3), _z(3), torch.ones(3, 2)), "groups"),
    (lambda: dapo_gc(torch.ones(2), 2, _z(), _z(), torch.ones(2, 2), high=-1), "clip_eps_high"),
    (lambda: gc_of("rloo", _z(), torch.ones(2, 2), scores=torch.ones(2)), "group_size >= 2"),
    (lambda: gc_of("rloo", _z(), torch.ones(2, 2), scores=torch.tensor([True, False]), group_size=2), "boolean"),
    (lambda: gc_of("remax", _z(3), torch.ones(3, 2), scores=torch.ones(3), group_size=2), "groups of 2"),
    (lambda: parts.compose("grpo", "vanilla", kl="k4"), "unknown kl 'k4'"),
    (lambda: parts.compose("grpo", "vanila"), "did you mean 'vanilla'"),
    (lambda: parts.compose("gae", "vanilla", kl="k3"), "gae takes its KL in the reward"),
    (lambda: parts.Composition("grpo", "vanilla", kl_in="reward"), "kl_in='reward' needs a KL term"),
    (lambda: gc_of("gspo", _z(), torch.ones(2, 2), logp_old=torch.full((2, 2), float("nan")),
                   scores=torch.ones(2), group_size=2), "non-finite"),
    (lambda: gc_of("reinforce++", _z(), torch.ones(2, 2), scores=torch.ones(2)), "logp_ref"),
    (lambda: _objective_with("dapo", aggregation="x"), "unknown aggregation 'x'"),
])
def test_bad_input_is_a_clear_value_error(call, words):
    with pytest.raises(ValueError, match=words):
        call()


def test_docstring_examples():
    """Every page of parts/ (and the advantages and KL helpers it shares a lesson with) prints what it says."""
    pages = [importlib.import_module(i.name) for i in pkgutil.walk_packages(parts_pkg.__path__, "unified_rl.parts.")]
    assert len(pages) >= 20
    for mod in pages + [A, CK]:
        assert doctest.testmod(mod).failed == 0, mod.__name__
