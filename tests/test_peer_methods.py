"""The methods and GRPO options TRL and verl ship, each against an independent computation.

- the oracle: autograd of each objective (objectives/options.py, ratio_shapes.py, baselines.py) equals the
  gradient of eq 5's surrogate with the coefficient, on ragged random float64 batches, on- and off-policy,
  over every combination of GRPO's options;
- GRPO's options at their defaults are eq 21 bit for bit (coefficients.grpo);
- the advantages against their definitions, written out here;
- the derivations against the coefficients, and wrong hand forms that must fail;
- what the sampler records (budget, ended, entropy) against a recomputation, and the overlong penalty that
  reads it (a batch from two budgets: each row against its own);
- the mapping to TRL's config and back.
Each comparison has a negative control.
"""

import dataclasses
import doctest
import itertools
import math

import numpy as np
import pytest
import sympy as sp
import torch
from hypothesis import given, settings, strategies as st

from unified_rl import advantages as A, coefficients as C, objectives as O, paradigm as P, peers
from unified_rl.coefficients import baselines as CB, options as CO, ratio_shapes as CR
from unified_rl.derivations import check, derive
from unified_rl.derivations import options as DO
from unified_rl.methods import METHODS, POLICY_GRADIENT
from unified_rl.presets import get_preset
from unified_rl.rewards import OverlongReward, overlong_penalty
from unified_rl.rewards import policy_gradient as RP
from unified_rl.sampling import cat_rollouts, sample, token_logp
from unified_rl.trainer import make_lab

TOL = 1e-10
NEW = ("sapo", "vespo", "luspo", "gmpo", "clip-cov", "kl-cov", "gpg", "opo", "grpo-passk", "gdpo")


def make(seed, G=4, n_groups=3, T=7, spread=0.4):
    g = torch.Generator().manual_seed(seed)
    B = G * n_groups
    mask = torch.zeros(B, T, dtype=torch.float64)
    for i in range(B):
        s = int(torch.randint(0, T, (1,), generator=g))
        mask[i, s:s + int(torch.randint(1, T - s + 1, (1,), generator=g))] = 1
    lp = (-3 * torch.rand(B, T, generator=g, dtype=torch.float64)).requires_grad_()
    old = lp.detach() + spread * torch.randn(B, T, generator=g, dtype=torch.float64)
    ref = -3 * torch.rand(B, T, generator=g, dtype=torch.float64)
    r = torch.randint(0, 2, (B,), generator=g).double() if seed % 2 else torch.randn(B, generator=g, dtype=torch.float64)
    entropy = torch.rand(B, T, generator=g, dtype=torch.float64) * mask
    truncated = torch.rand(B, generator=g) < 0.25
    return dict(mask=mask, lp=lp, old=old, ref=ref, r=r, entropy=entropy, truncated=truncated, G=G, g=g)


def diff(J, coef, d):
    (gJ,) = torch.autograd.grad(J, d["lp"])
    (gS,) = torch.autograd.grad(-P.surrogate_loss(d["lp"], coef, d["mask"]), d["lp"])
    return (gJ - gS).abs().max().item()


OPTIONS = st.fixed_dictionaries({
    "scale_rewards": st.sampled_from(A.SCALES), "level": st.sampled_from(CO.LEVELS),
    "aggregation": st.sampled_from(C.AGGREGATIONS), "kl_ratio": st.booleans(),
    "delta": st.sampled_from([None, 1.1, 1.4]), "clip_eps_high": st.sampled_from([None, 0.28]),
    "truncated": st.booleans(), "top_entropy_quantile": st.sampled_from([1.0, 0.43, 0.2]),
    "off_policy_mask_threshold": st.sampled_from([None, 0.0, 0.05]), "eps": st.sampled_from([1e-6, 1e-4])})


@settings(max_examples=120, deadline=None)
@given(st.integers(0, 10 ** 6), OPTIONS, st.booleans(), st.floats(0.0, 0.2))
def test_grpo_options_oracle(seed, opts, off_policy, beta):
    d = make(seed)
    opts = {**opts, "truncated": d["truncated"] if opts["truncated"] else None}
    old = d["old"] if off_policy else d["lp"].detach()
    kw = dict(entropy=d["entropy"], max_len=5.0, **opts)
    J = O.grpo_options(d["lp"], old, d["ref"], d["r"], d["G"], d["mask"], beta, 0.2, **kw)
    coef = C.grpo_options(d["r"], d["G"], d["lp"], d["ref"], d["mask"], beta, logp_old=old, clip_eps=0.2, **kw)
    assert diff(J, coef, d) < TOL


def test_grpo_options_at_the_defaults_are_eq_21_bit_for_bit():
    for seed in range(5):
        d = make(seed)
        for old in (None, d["old"]):
            a = C.grpo(d["r"], d["G"], d["lp"], d["ref"], d["mask"], 0.04,
                       **({} if old is None else dict(logp_old=old, clip_eps=0.2)))
            b = C.grpo_options(d["r"], d["G"], d["lp"], d["ref"], d["mask"], 0.04, logp_old=old, clip_eps=0.2)
            assert torch.equal(a, b)
    d = make(0)  # the negative control: one option away from the default changes it
    b = C.grpo_options(d["r"], d["G"], d["lp"], d["ref"], d["mask"], 0.04, logp_old=d["old"], delta=1.05)
    assert not torch.equal(C.grpo(d["r"], d["G"], d["lp"], d["ref"], d["mask"], 0.04, logp_old=d["old"],
                                  clip_eps=0.2), b)


def _new_pairs(d, old, agg):
    """(objective, coefficient) of each ratio-shape and baseline function on the same inputs."""
    G, m, lp = d["G"], d["mask"], d["lp"]
    adv = A.group_relative(d["r"], G)[:, None].double() * m
    kw = dict(aggregation=agg, group_size=G, max_len=4.0)
    return {
        "sapo": (O.sapo(lp, old, adv, m, 0.7, 1.6, **kw), C.sapo(adv, lp, old, m, 0.7, 1.6, **kw)),
        "vespo": (O.vespo(lp, old, adv, m, 2.5, 1.5, 3.5, 2.5, **kw), C.vespo(adv, lp, old, m, 2.5, 1.5, 3.5, 2.5, **kw)),
        "gmpo": (O.gmpo(lp, old, adv, m, 0.1, 0.15), C.gmpo(adv, lp, old, m, 0.1, 0.15)),
        "clip_cov": (O.clip_cov(lp, old, adv, m, 0.2, 0.28, 0.3, -0.5, 0.5, 11, **kw),
                     C.clip_cov(adv, lp, old, m, 0.2, 0.28, 0.3, -0.5, 0.5, seed=11, **kw)),
        "kl_cov": (O.kl_cov(lp, old, adv, m, 0.2, 0.7, **kw), C.kl_cov(adv, lp, old, m, 0.2, 0.7, **kw)),
        "gpg": (O.gpg(lp, d["r"], G, m, "nonzero-reward", agg, 4.0),
                C.gpg(d["r"], G, m, count="nonzero-reward", aggregation=agg, max_len=4.0)),
        "opo": (O.opo(lp, d["r"], G, m, agg, 4.0, logp_old=old, clip_eps=0.2),
                C.opo(d["r"], G, m, logp=lp, logp_old=old, clip_eps=0.2, aggregation=agg, max_len=4.0)),
    }


@pytest.mark.parametrize("agg", C.AGGREGATIONS)
def test_ratio_shape_and_baseline_oracles(agg):
    for seed, off_policy in itertools.product(range(6), (False, True)):
        d = make(seed)
        old = d["old"] if off_policy else d["lp"].detach()
        for name, (J, coef) in _new_pairs(d, old, agg).items():
            assert diff(J, coef, d) < TOL, (name, seed, off_policy)


def test_a_wrong_coefficient_fails_each_oracle():
    """Negative controls: each coefficient scaled by 1.01, or with its clip or gate changed, fails its oracle."""
    d = make(3)
    pairs = _new_pairs(d, d["old"], "batch-token-mean")
    for name, (J, coef) in pairs.items():
        assert diff(J, 1.01 * coef, d) > 1e-6, name
    adv = A.group_relative(d["r"], d["G"])[:, None].double() * d["mask"]
    J = O.gmpo(d["lp"], d["old"], adv, d["mask"], 0.1, 0.15)
    assert diff(J, C.gmpo(adv, d["lp"], d["old"], d["mask"], 0.15, 0.1), d) > 1e-6  # clip sides swapped
    J = O.sapo(d["lp"], d["old"], adv, d["mask"], 0.7, 1.6)
    assert diff(J, C.sapo(adv, d["lp"], d["old"], d["mask"], 1.6, 0.7), d) > 1e-6  # temperatures swapped


def test_every_new_method_through_its_step_matches_its_objective():
    cfg = get_preset("cpu").rl
    for name in NEW + ("grpo", "cispo", "reinforce++"):
        m = METHODS[name]
        for off_policy in (False, True):
            d = make(5)
            scores = torch.stack([d["r"], -torch.rand(len(d["r"]), generator=d["g"], dtype=torch.float64)], -1) \
                if name == "gdpo" else d["r"]
            step = P.step_from_tensors(d["lp"], d["mask"], cfg, logp_ref=d["ref"], scores=scores, group_size=d["G"],
                                       logp_old=d["old"] if off_policy else None, hp=m.hparams,
                                       truncated=d["truncated"], entropy=d["entropy"])
            assert diff(m.objective(step), m.coefficient(step), d) < TOL, name


def test_every_new_method_gives_zero_where_a_group_carries_no_signal():
    cfg = get_preset("cpu").rl
    d = make(2)
    for name in NEW + ("grpo", "cispo"):
        m = METHODS[name]
        flat = torch.zeros(len(d["r"]), 2 if name == "gdpo" else 1, dtype=torch.float64).squeeze(-1)
        step = P.step_from_tensors(d["lp"], d["mask"], cfg, logp_ref=d["lp"].detach(), scores=flat,
                                   group_size=d["G"], hp=m.hparams)
        coef = m.coefficient(step)
        assert torch.isfinite(coef).all() and (coef == 0).all(), name


def test_the_new_modules_doctests():
    import unified_rl.methods.options as MO
    for mod in (CO, CR, CB, A, peers, RP, MO):
        assert doctest.testmod(mod).failed == 0, mod.__name__


def test_bad_options_are_named():
    d = make(1)
    args = (d["r"], d["G"], d["lp"], d["ref"], d["mask"], 0.04)
    for kw, match in ((dict(scale_rewards="std"), "scale_rewards"), (dict(level="word"), "importance_sampling_level"),
                      (dict(aggregation="sum"), "aggregation"), (dict(top_entropy_quantile=0.5), "entropy"),
                      (dict(top_entropy_quantile=1.5, entropy=d["entropy"]), "top_entropy_quantile"),
                      (dict(truncated=torch.zeros(3, dtype=torch.bool)), "truncated"), (dict(delta=float("nan")), "delta")):
        with pytest.raises(ValueError, match=match):
            C.grpo_options(*args, **kw)
    with pytest.raises(ValueError, match="logp_ref"):
        C.grpo_options(d["r"], d["G"], d["lp"], None, d["mask"], 0.04)
    with pytest.raises(ValueError, match="temperatures"):
        C.sapo(d["r"][:, None] * d["mask"], d["lp"], d["old"], d["mask"], 0.0)
    step = P.step_from_tensors(d["lp"], d["mask"], get_preset("cpu").rl, logp_ref=d["ref"], scores=d["r"],
                               group_size=d["G"],
                               hp=dataclasses.replace(METHODS["grpo"].hparams, mask_truncated_completions=True))
    with pytest.raises(ValueError, match="rows it cut"):
        METHODS["grpo"].coefficient(step)


# ---------------------------------------------------------------- the advantages, from their definitions

def test_advantages_against_their_definitions():
    r = torch.tensor([1., 0., 0., 0., 1., 1., 1., 1., 0., 1., 1., 0.], dtype=torch.float64)
    groups = r.view(-1, 4)
    centred = (groups - groups.mean(-1, keepdim=True)).flatten()
    assert torch.allclose(A.scaled(r, 4, "none"), centred)
    assert torch.allclose(A.scaled(r, 4, "batch", 0.0), centred / r.std())
    assert torch.allclose(A.scaled(r, 4, "group"), A.group_relative(r, 4))
    # GPG: B over the samples that count; the middle group (all 1) counts none of its four
    assert torch.allclose(A.gpg(r, 4), 12 / 8 * centred)
    assert torch.allclose(A.gpg(r, 4, "nonzero-reward"), 12 / 7 * centred)
    n = torch.tensor([3., 1., 2., 2., 1., 1., 1., 1., 4., 1., 1., 2.])
    b = [(n[k:k + 4] * r[k:k + 4]).sum() / n[k:k + 4].sum() for k in (0, 4, 8)]
    want = torch.cat([r[k:k + 4] - b[j] for j, k in enumerate((0, 4, 8))])
    assert torch.allclose(A.length_weighted(r, n, 4), want)
    passk = A.best_of_group(torch.tensor([0., 1., 0., 0., 1., 1., 0., 0.]), 4, std=False)
    assert passk.tolist() == [0., 1., 0., 0., 0., 0., 0., 0.]  # a tie at the top gives nothing
    two = torch.stack([r, torch.linspace(-1, 1, 12, dtype=torch.float64)], -1)
    scaled = two.clone()
    scaled[:4, 1] *= 10.0  # one reward's spread in one group: GDPO's advantage does not see it, the sum's does
    assert torch.allclose(A.decoupled(two, 4, 0.0), A.decoupled(scaled, 4, 0.0))  # eps 0: scale-free
    assert not torch.allclose(A.group_relative(two.sum(-1), 4), A.group_relative(scaled.sum(-1), 4))
    with pytest.raises(ValueError, match="count"):
        A.gpg(r, 4, "all")
    with pytest.raises(ValueError, match="lengths"):
        A.length_weighted(r, n[:3], 4)


# ---------------------------------------------------------------- derivations against the coefficients

def test_the_new_derivations_match_the_coefficients():
    rng = np.random.default_rng(0)
    d = derive("sapo", 2)
    lp, old = rng.normal(size=2), rng.normal(size=2) * 0.3
    gc = d.evaluate(adv=0.8, logp=lp, logp_old=old, tau=1.3)
    want = C.sapo(torch.full((1, 2), 0.8, dtype=torch.float64), torch.tensor([lp]), torch.tensor([old]),
                  torch.ones(1, 2, dtype=torch.float64), 1.3, 1.3)
    np.testing.assert_allclose(gc, want.flatten().numpy(), rtol=1e-12)
    d = derive("vespo", 2)
    gc = d.evaluate(adv=-0.5, logp=lp, logp_old=old, k=3.0, **{"lambda": 2.0})
    want = C.vespo(torch.full((1, 2), -0.5, dtype=torch.float64), torch.tensor([lp]), torch.tensor([old]),
                   torch.ones(1, 2, dtype=torch.float64), 9.0, 9.0, 3.0, 2.0, aggregation="seq-mean-token-mean")
    np.testing.assert_allclose(gc, want.flatten().numpy(), rtol=1e-12)
    d = derive("opo", 1)  # responses of 1 and 2 tokens
    m = torch.tensor([[1., 0.], [1., 1.]], dtype=torch.float64)
    np.testing.assert_allclose(d.evaluate(rewards=[1.0, 0.0], logp=np.zeros(3)),
                               C.opo(torch.tensor([1., 0.], dtype=torch.float64), 2, m)[m.bool()].numpy(), rtol=1e-12)
    d = derive("grpo_sequence_kl_ratio", 3)
    lp, old, ref = (rng.normal(size=3) for _ in range(3))
    gc = d.evaluate(logp=lp, logp_old=old, logp_ref=ref, beta=0.3)
    t = lambda x: torch.tensor([x], dtype=torch.float64)  # noqa: E731
    ratio = CO.ratio_of(t(lp), t(old), torch.ones(1, 3, dtype=torch.float64), "sequence")
    want = CO.kl_term(t(lp), t(ref), torch.ones(1, 3, dtype=torch.float64), 0.3, ratio)
    np.testing.assert_allclose(gc, want.flatten().numpy(), rtol=1e-12)


def test_wrong_derivations_fail():
    """A two-sided clip without its delta stop, GMPO's GC without its clip, SAPO without the gate's slope."""
    two = derive("grpo_two_sided", 1)
    l, lo = two.symbols["logp"], two.symbols["logp_old"]
    a = two.symbols["adv"]
    r = sp.exp(l[0] - lo[0])
    plain = sp.Piecewise((0, ((a > 0) & (r > 1 + DO.EPS_HIGH)) | ((a < 0) & (r < 1 - DO.EPS_LOW))), (r * a, True))
    sapo = derive("sapo", 1)
    gmpo = derive("gmpo", 1)
    for d, hand in ((two, (plain,)), (sapo, (sapo.symbols["adv"] * sp.exp(sapo.symbols["logp"][0]),)),
                    (gmpo, (gmpo.symbols["adv"],))):
        with pytest.raises(AssertionError, match="differs from the hand form"):
            check(dataclasses.replace(d, hand=hand))


# ---------------------------------------------------------------- what the sampler records

@pytest.fixture(scope="module")
def lab():
    return make_lab("tiny", seed=0)


def test_the_sampler_records_budget_end_and_entropy(lab):
    torch.manual_seed(0)
    batch = sample(lab.policy, lab.tokenizer, lab.rl_problems[:6], group_size=2, max_new_tokens=9)
    assert batch.budget.tolist() == [9] * 12
    eos = lab.tokenizer.eos_token_id
    last = batch.input_ids.gather(1, (batch.prompt_len + batch.response_lengths - 1)[:, None]).squeeze(1)
    assert batch.ended.tolist() == (last == eos).tolist() and batch.truncated.any() and batch.ended.any()
    with torch.no_grad():  # the entropy recomputed from a full forward of the policy
        logits = lab.policy(input_ids=batch.input_ids, attention_mask=batch.attention_mask).logits[:, :-1]
    logp = logits.float().log_softmax(-1)
    H = -(logp.exp() * logp).sum(-1) * batch.mask
    assert torch.allclose(batch.entropy, H, atol=1e-5) and (batch.entropy[batch.mask > 0] > 0).all()
    assert torch.allclose(token_logp(lab.policy, batch.input_ids, batch.attention_mask) * batch.mask, batch.logp,
                          atol=1e-5)
    part = batch.select([2, 3], group_size=2)
    assert part.ended.tolist() == batch.ended[2:4].tolist() and torch.equal(part.entropy, batch.entropy[2:4])


def test_the_overlong_penalty_reads_each_rows_budget(lab):
    """A batch gathered from two draws with different budgets: each row is penalised against its own."""
    torch.manual_seed(1)
    a = sample(lab.policy, lab.tokenizer, lab.rl_problems[:4], group_size=2, max_new_tokens=8)
    b = sample(lab.policy, lab.tokenizer, lab.rl_problems[4:8], group_size=2, max_new_tokens=14)
    both = cat_rollouts([a, b], pad_token_id=lab.tokenizer.pad_token_id)
    reward = OverlongReward()
    lengths = both.mask.sum(-1)
    want = torch.cat([overlong_penalty(lengths[:8], 8, 4), overlong_penalty(lengths[8:], 14, 4)])
    assert torch.allclose(reward(both) - reward.base(both), want.to(reward(both)))
    assert reward.budget(both) == 14
    recomputed = overlong_penalty(lengths, reward.budget(both), 4)  # the slip: one budget for every row
    assert not torch.allclose(recomputed, want)
    given = both.select(list(range(len(both))), group_size=2)
    given = dataclasses.replace(given, budget=None)
    with pytest.raises(ValueError, match="budget"):
        reward(given)


# ---------------------------------------------------------------- the maps

def test_to_trl_and_from_trl_agree():
    for name, over in (("grpo", {}), ("grpo", {"aggregation": "batch-token-mean", "delta": 1.5, "adv_eps": 1e-4}),
                       ("grpo", {"scale_rewards": "none", "aggregation": "constant", "max_len": 64.0}),
                       ("grpo", {"importance_sampling_level": "sequence", "aggregation": "constant", "max_len": 1.0}),
                       ("cispo", {"aggregation": "batch-token-mean"}), ("sapo", {}), ("vespo", {})):
        out = peers.to_trl(name, **over)
        back, settings_ = peers.from_trl(**{k: v for k, v in out.config.items() if k in peers.TRL_DEFAULTS})
        hp = dataclasses.replace(METHODS[name].hparams, **{k: v for k, v in over.items()
                                                           if hasattr(METHODS[name].hparams, k)})
        assert back == name
        for k, v in settings_.items():
            if hasattr(hp, k) and k != "adv_eps" and (k != "max_len" or hp.aggregation == "constant"):
                assert getattr(hp, k) == v or (k == "clip_eps_high" and getattr(hp, k) is None), (name, k)
        assert any("1e-4" in x for x in out.differences) == (over.get("adv_eps", 1e-6) != 1e-4)
    with pytest.raises(ValueError, match="no GRPOConfig"):
        peers.to_trl("ppo")


def test_every_policy_gradient_method_is_listed_by_the_cli(capsys):
    from unified_rl.cli import main
    main(["methods"])
    out = capsys.readouterr().out
    assert all(m.name in out for m in POLICY_GRADIENT) and all(n in METHODS for n in NEW)
    assert math.isfinite(len(out))
