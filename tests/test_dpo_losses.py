"""Every loss_type of TRL's DPOTrainer (a page each: parts/pair_losses/) against its objective, its derivation and
the model oracle; each planted slip in a GC must be caught. TRL's own code is the oracle in test_trl_preference.py.

The coefficient and the objective are independent: autograd of J (each loss page's objective, the papers'
losses) must equal the gradient of eq 5's surrogate with the hand-derived GC, on ragged float64 pairs,
for both conventions (per-token mean and summed log-ratios) and at margins small and large (past hinge's
1/beta and EXO's, NCA's and IPO's targets).
"""

import dataclasses
import sys
import types

import numpy as np
import pytest
import torch

from unified_rl import coefficients as C, objectives as O, verify, wiring
from unified_rl.coefficients import dpo_losses as CD
from unified_rl.coefficients.dpo_losses import LOSS_TYPES, NORMS
from unified_rl.derivations import check, derive
from unified_rl.lab import make_lab
from unified_rl.methods import METHODS
from unified_rl.paradigm import surrogate_loss
from unified_rl.parts import PAIR_LOSSES, PAIR_SCORES, Registry

B, T = 6, 7
SETTINGS = dict(label_smoothing=0.1, discopop_tau=0.05)


def pairs_of(seed, spread):
    """Ragged chosen and rejected rows (lengths 1..T), log-probs < 0, log-ratios of size ~spread."""
    g = torch.Generator().manual_seed(seed)
    lengths = torch.randint(1, T + 1, (2, B), generator=g)
    mc, mr = [(torch.arange(T)[None] < n[:, None]).double() for n in lengths]
    rc, rr = (-2 * torch.rand(B, T, generator=g, dtype=torch.float64) for _ in range(2))
    lc = (rc + spread * torch.randn(B, T, generator=g, dtype=torch.float64)).clamp(max=-0.01)
    lr = (rr + spread * torch.randn(B, T, generator=g, dtype=torch.float64)).clamp(max=-0.01)
    return lc, rc, mc, lr, rr, mr


def gap(coef_fn, loss_type, norm, data, beta=0.3):
    """max |grad J - grad surrogate| / max |grad J| with the GC `coef_fn` gives (chosen and rejected rows)."""
    lc0, rc, mc, lr0, rr, mr = data
    lc, lr = lc0.clone().requires_grad_(), lr0.clone().requires_grad_()
    J = O.dpo_loss(loss_type, lc, rc, mc, lr, rr, mr, beta, norm=norm, **SETTINGS)
    cc, cr = coef_fn(loss_type, lc, rc, mc, lr, rr, mr, beta, norm=norm, **SETTINGS)
    assert not cc.requires_grad and not cr.requires_grad
    assert (cc[mc == 0] == 0).all() and (cr[mr == 0] == 0).all()
    surrogate = surrogate_loss(lc, cc, mc) + surrogate_loss(lr, cr, mr)  # eq 13's two eq-5 terms
    g_j = torch.cat([g.flatten() for g in torch.autograd.grad(J, (lc, lr), allow_unused=True, materialize_grads=True)])
    g_s = torch.cat([g.flatten() for g in torch.autograd.grad(-surrogate, (lc, lr))])
    assert g_j.abs().max() > 0, "a zero gradient proves nothing"
    return ((g_j - g_s).abs().max() / g_j.abs().max()).item()


DATA = {"small": pairs_of(0, 0.3), "large": pairs_of(1, 3.0)}


@pytest.mark.parametrize("spread", list(DATA))
@pytest.mark.parametrize("norm", NORMS)
@pytest.mark.parametrize("loss_type", LOSS_TYPES)
def test_every_gc_is_the_gradient_of_its_objective(loss_type, norm, spread):
    assert gap(CD.dpo_loss, loss_type, norm, DATA[spread]) < 1e-12


def test_the_data_reach_every_regime():
    """The margins straddle hinge's 1/beta and IPO's target, so both sides of each kink are compared."""
    lc, rc, mc, lr, rr, mr = DATA["large"]
    u = 0.3 * (((lc - rc) * mc).sum(-1) - ((lr - rr) * mr).sum(-1))
    assert (u < 1).any() and (u > 1).any()


# ---------------------------------------------------------------- planted slips

def _page(name, registry=PAIR_LOSSES):
    return sys.modules[registry[name].gc.__module__]


def mutant(page, old, new):
    """A part's page (parts/pair_losses/NAME.py, parts/pair_scores.py) with one slip planted (`old` replaced by
    `new`), run as a module of its own that registers its parts in registries of its own."""
    import inspect

    src = inspect.getsource(page)
    assert src.count(old) == 1, f"the slip's anchor {old!r} is not in the source once: update the control"
    mod = types.ModuleType(page.__name__ + "_mutant")
    mod.__package__ = page.__package__
    mod.PAIR_LOSSES, mod.PAIR_SCORES = Registry("pair_loss"), Registry("pair_scores")
    src = src.replace("from ..registry import PAIR_LOSSES\n", "").replace("from .registry import PAIR_SCORES\n", "")
    exec(compile(src.replace(old, new), "mutant", "exec"), mod.__dict__)
    return mod


SLIPS = {  # the page, the slip and the loss type it hits
    "sigmoid without beta": ("sigmoid", "a = beta * torch.sigmoid(-(beta", "a = torch.sigmoid(-(beta", "sigmoid"),
    "hinge without beta": ("hinge", "a = beta * (u < 1)", "a = (u < 1)", "hinge"),
    "ipo without the 2": ("ipo", "a = 1 / beta - 2 * (s1 - s2)", "a = 1 / beta - (s1 - s2)", "ipo"),
    "exo without its target": ("exo_pair", "(math.log((1 - eps) / eps) - u)", "(-u)", "exo_pair"),
    "nca's half dropped": ("nca_pair", "(torch.sigmoid(-r1) - torch.sigmoid(r1) / 2)",
                           "(torch.sigmoid(-r1) - torch.sigmoid(r1))", "nca_pair"),
    "robust without 1/(1-2eps)": ("robust", "eps * torch.sigmoid(u)) / (1 - 2 * eps)", "eps * torch.sigmoid(u))",
                                  "robust"),
    "bco's rejected sign": ("bco_pair", "-beta * torch.sigmoid(beta * s2)", "-beta * torch.sigmoid(-beta * s2)",
                            "bco_pair"),
    "sppo's rejected target": ("sppo_hard", "-(1 / beta + 2 * s2)", "-(1 / beta - 2 * s2)", "sppo_hard"),
    "aot unsorted": ("aot", "a = placed(aot_g(pol_sorted - ref_sorted, beta, eps), order)",
                     "a = aot_g(v.p1 - v.p2 - (v.r1 - v.r2), beta, eps)", "aot"),
    "aot_unpaired, one rank for both": ("aot_unpaired", "-placed(a, order_r)", "-placed(a, order_c)", "aot_unpaired"),
    "apo_zero's rejected read off the chosen": ("apo_zero", "-beta * dsig(beta * s2)", "-beta * dsig(beta * s1)",
                                                "apo_zero"),
    "apo_down's anchor dropped": ("apo_down", "beta * (dsig(u) - dsig(beta * s1))", "beta * dsig(u)", "apo_down"),
    "discopop's weight held fixed": ("discopop", " - dm_blend / tau", "", "discopop"),
    "sft without the token mean": ("sft", "a = a / chosen_length(v.n1, v.across)", "a = a", "sft"),
    "sums without |o|": ("score:log_ratio", "(torch.ones_like(n), n)", "(torch.ones_like(n), torch.ones_like(n))",
                         "sigmoid"),
}


@pytest.mark.parametrize("slip", list(SLIPS))
def test_a_planted_slip_is_caught(slip, monkeypatch):
    where, old, new, loss_type = SLIPS[slip]
    page = _page(where.split(":")[1], PAIR_SCORES) if where.startswith("score:") else _page(where)
    planted = mutant(page, old, new)
    for registry, own in ((PAIR_LOSSES, planted.PAIR_LOSSES), (PAIR_SCORES, planted.PAIR_SCORES)):
        for name, part in own.items():
            monkeypatch.setitem(registry, name, part)
    worst = max(gap(CD.dpo_loss, loss_type, norm, data) for norm in NORMS for data in DATA.values())
    assert worst > 1e-3, (slip, worst)


def test_every_loss_type_has_a_planted_slip():
    assert {s[3] for s in SLIPS.values()} >= set(LOSS_TYPES) - {"sigmoid_norm"}


# ---------------------------------------------------------------- what each is, exactly

def test_the_defaults_are_the_paper_and_the_package():
    lc, rc, mc, lr, rr, mr = DATA["small"]
    want = C.dpo(lc, rc, mc, lr, rr, mr, 0.3)
    for loss_type, norm in (("sigmoid", "mean"), ("sigmoid_norm", "mean"), ("sigmoid_norm", "sum")):
        got = CD.dpo_loss(loss_type, lc, rc, mc, lr, rr, mr, 0.3, norm=norm)
        assert all(torch.equal(a, b) for a, b in zip(got, want))
    ipo = CD.dpo_loss("ipo", lc, rc, mc, lr, rr, mr, 0.3, norm="mean")  # beta in tau's place, as TRL has it
    assert all(torch.allclose(a, b, rtol=1e-14) for a, b in zip(ipo, C.ipo(lc, rc, mc, lr, rr, mr, tau=0.3)))
    sft = CD.dpo_loss("sft", lc, rc, mc, lr, rr, mr, 0.3, norm="mean")
    assert torch.equal(sft[0], C.sft(mc)) and (sft[1] == 0).all()
    robust0 = CD.dpo_loss("robust", lc, rc, mc, lr, rr, mr, 0.3, norm="sum", label_smoothing=0.0)
    assert all(torch.allclose(a, b) for a, b in zip(robust0, CD.dpo_loss("sigmoid", lc, rc, mc, lr, rr, mr, 0.3, norm="sum")))


def test_a_weighted_mix_is_the_weighted_sum():
    data = DATA["large"]
    terms = (("sigmoid", "sum", 0.8), ("bco_pair", "sum", 0.2), ("sft", "sum", 1.0))
    cc, cr = C.dpo_weighted(terms, *data, 0.3)
    parts = [(w, CD.dpo_loss(t, *data, 0.3, norm=n)) for t, n, w in terms]
    assert torch.allclose(cc, sum(w * p[0] for w, p in parts)) and torch.allclose(cr, sum(w * p[1] for w, p in parts))
    lc0, rc, mc, lr0, rr, mr = data
    lc, lr = lc0.clone().requires_grad_(), lr0.clone().requires_grad_()
    J = O.dpo_weighted(terms, lc, rc, mc, lr, rr, mr, 0.3)
    g_j = torch.autograd.grad(J, (lc, lr))
    g_s = torch.autograd.grad(-(surrogate_loss(lc, cc, mc) + surrogate_loss(lr, cr, mr)), (lc, lr))
    assert max((a - b).abs().max().item() for a, b in zip(g_j, g_s)) < 1e-13
    with pytest.raises(ValueError, match="terms is empty"):
        C.dpo_weighted((), *data, 0.3)


@pytest.mark.parametrize("bad,match", [
    (dict(loss_type="sigmoid_nrom"), "unknown DPO loss_type"), (dict(norm="token"), "unknown norm"),
    (dict(loss_type="robust", label_smoothing=0.5), "robust needs label_smoothing"),
    (dict(loss_type="exo_pair", label_smoothing=0.0), "exo_pair needs label_smoothing"),
    (dict(loss_type="ipo", beta=0.0), "ipo needs beta > 0"), (dict(discopop_tau=0.0), "discopop_tau must be > 0"),
    (dict(beta=float("nan")), "beta"), (dict(label_smoothing=-0.1), "label_smoothing")])
def test_bad_settings_are_named(bad, match):
    args = dict(loss_type="sigmoid", beta=0.3, norm="sum", label_smoothing=0.1, discopop_tau=0.05) | bad
    lc, rc, mc, lr, rr, mr = DATA["small"]
    with pytest.raises(ValueError, match=match):
        CD.dpo_loss(args.pop("loss_type"), lc, rc, mc, lr, rr, mr, **args)
    with pytest.raises(ValueError, match="pairs are needed"):
        CD.dpo_loss("hinge", lc, rc, mc, lr[:2], rr[:2], mr[:2], 0.3)


def test_a_run_refuses_an_unknown_option_before_it_starts():
    preset = make_lab("tiny").preset
    for over, match in (({"dpo_loss": "sigmod"}, "unknown DPO loss_type"), ({"dpo_norm": "avg"}, "unknown norm"),
                        ({"kto_loss": "apo"}, "unknown KTO loss_type")):
        name = "kto" if "kto_loss" in over else "dpo"
        with pytest.raises(ValueError, match=match):
            wiring.configure(METHODS[name], preset, over)


# ---------------------------------------------------------------- the derivations

def pair_values(n, pairs=1, seed=0):
    rng = np.random.default_rng(seed)
    v = {"logp_chosen": -rng.uniform(0.1, 2, n * pairs), "logp_ref_chosen": -rng.uniform(0.1, 2, n * pairs),
         "logp_rejected": -rng.uniform(0.1, 2, (n + 1) * pairs), "logp_ref_rejected": -rng.uniform(0.1, 2, (n + 1) * pairs)}
    return v


def as_rows(x, n, pairs):
    """A flat list of pairs x n tokens as (pairs, n) float64 rows."""
    return torch.tensor(np.asarray(x).reshape(pairs, n))


SLOW_DERIVATIONS = {"exo_pair", "discopop", "aot", "aot_unpaired"}


@pytest.mark.parametrize("norm", NORMS)
@pytest.mark.parametrize("loss_type", [pytest.param(t, marks=pytest.mark.slow) if t in SLOW_DERIVATIONS else t
                                       for t in LOSS_TYPES])
def test_each_derivation_gives_the_package_gc(loss_type, norm):
    """sympy's derived GC, evaluated, equals coefficients.dpo_loss on the same pair (AOT: two pairs)."""
    n, pairs = (1, 2) if loss_type.startswith("aot") else (2, 1)
    d = derive(f"dpo_{loss_type}", n, norm=norm)
    check(d)
    v = pair_values(n, pairs, seed=3)
    beta, eps, tau = 0.7, 0.1, 0.5
    extra = {k: val for k, val in (("beta", beta), ("label_smoothing", eps), ("discopop_tau", tau)) if k in d.symbols}
    got = d.evaluate(**{k: v[k] for k in d.symbols if k in v}, **extra)
    rows = [as_rows(v[k], n + (1 if "rejected" in k else 0), pairs) for k in
            ("logp_chosen", "logp_ref_chosen", "logp_rejected", "logp_ref_rejected")]
    masks = [torch.ones(pairs, n, dtype=torch.float64), torch.ones(pairs, n + 1, dtype=torch.float64)]
    cc, cr = CD.dpo_loss(loss_type, rows[0], rows[1], masks[0], rows[2], rows[3], masks[1], beta, norm=norm,
                         label_smoothing=eps, discopop_tau=tau)
    want = np.concatenate([cc.numpy().ravel(), cr.numpy().ravel()]) if loss_type != "sft" else cc.numpy().ravel()
    np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-14)


def test_a_wrong_hand_form_fails_its_derivation():
    """AOT's GC taken at the pair's own margin, not at the rank it holds: wrong when the orders cross."""
    d = derive("dpo_aot", 1)
    own = dataclasses.replace(d, hand=(d.hand[1], d.hand[0]) + d.hand[2:])
    with pytest.raises(AssertionError, match="differs from the hand form"):
        check(own)
    hinge = derive("dpo_hinge", 1)
    with pytest.raises(AssertionError):
        check(dataclasses.replace(hinge, hand=tuple(h / hinge.symbols["beta"] for h in hinge.hand)))


# ---------------------------------------------------------------- KTO's conventions

def test_kto_on_sums_is_the_gradient_of_its_objective_and_apo_zero_unpaired_is_z0_zero():
    lc0, rc, mc, _, _, _ = DATA["large"]
    desirable = torch.tensor([1.0, 0, 1, 1, 0, 0], dtype=torch.float64)
    for norm, z0 in (("sum", 1.3), ("mean", 0.2), ("sum", 0.0)):
        lp = lc0.clone().requires_grad_()
        J = O.kto(lp, rc, mc, desirable, z0, 0.05, 2.0, 1.0, norm=norm)
        coef = C.kto(lp, rc, mc, desirable, z0, 0.05, 2.0, 1.0, norm=norm)
        g_j, g_s = torch.autograd.grad(J, lp)[0], torch.autograd.grad(-surrogate_loss(lp, coef, mc), lp)[0]
        assert (g_j - g_s).abs().max() < 1e-14 * max(1.0, g_j.abs().max().item())
    x = ((lc0 - rc) * mc).sum(-1)  # (B,) the summed log-ratio TRL's KTO reads
    assert C.kto_reference_point(lc0, rc, mc, norm="sum") == x.mean().clamp(min=0)
    zero = C.kto(lc0, rc, mc, desirable, 0.0, 0.05, 2.0, 1.0, norm="sum")
    s = torch.sigmoid(0.05 * x)
    apo = torch.where(desirable > 0, 2.0 * 0.05 * s * (1 - s), -1.0 * 0.05 * s * (1 - s)) * mc.sum(-1)  # APO-zero
    assert torch.allclose(zero, apo[:, None] * mc, rtol=1e-14)


# ---------------------------------------------------------------- the model oracle, every option

@pytest.fixture(scope="module")
def tiny_lab():
    torch.manual_seed(0)
    lab = make_lab("tiny", seed=0)
    with torch.no_grad():
        for p in lab.policy.parameters():
            p.add_(0.3 * torch.randn_like(p))
    return lab


OPTIONS = [("dpo", {"dpo_loss": t, "dpo_norm": n, "dpo_label_smoothing": 0.1}) for t in LOSS_TYPES for n in NORMS]
OPTIONS += [("kto", {"kto_loss": t, "kto_norm": n}) for t in ("kto", "apo_zero_unpaired") for n in ("mean", "sum")]


@pytest.mark.parametrize("name,settings", OPTIONS, ids=lambda x: x if isinstance(x, str) else "-".join(map(str, x.values())))
def test_the_model_oracle_checks_every_option(name, settings, tiny_lab, monkeypatch):
    lab = tiny_lab
    d = verify.model_oracle(lab.policy, lab.tokenizer, lab.test_problems, methods=[name], relative=True,
                            settings=settings)[name]
    assert d < 1e-12
    m = METHODS[name]  # the control: the same option's coefficient 1 % too large is seen
    monkeypatch.setitem(METHODS, name, dataclasses.replace(m, coefficient=lambda step: 1.01 * m.coefficient(step)))
    bad = verify.model_oracle(lab.policy, lab.tokenizer, lab.test_problems, methods=[name], relative=True,
                              settings=settings)[name]
    assert bad > 1e-3


def test_the_oracle_refuses_settings_no_method_has(tiny_lab):
    with pytest.raises(ValueError, match="belong to none"):
        verify.model_oracle(tiny_lab.policy, tiny_lab.tokenizer, tiny_lab.test_problems, methods=["grpo"],
                            settings={"dpo_loss": "hinge"})


def test_the_cli_lists_every_option(capsys):
    """`python -m unified_rl methods` names each choice setting under its method, the default first."""
    from unified_rl import cli

    cli.main(["methods"])
    out = capsys.readouterr().out
    assert "dpo_loss = " + " | ".join(LOSS_TYPES) in out and "dpo_norm = mean | sum" in out
    assert "kto_loss = kto | apo_zero_unpaired" in out and "kto_norm = mean | sum" in out


@pytest.mark.parametrize("norm", ["mean", "sum"])
def test_the_kto_derivation_under_either_norm_gives_the_package_gc(norm):
    """KTO's sympy derivation with sums (the paper's, TRL's) or means, evaluated, equals coefficients.kto."""
    d = derive("kto", 2, norm=norm)
    check(d)
    rng = np.random.default_rng(5)
    logp, ref = -rng.uniform(0.1, 2, 4), -rng.uniform(0.1, 2, 4)
    values = dict(z0=0.3, beta=0.8, lam_d=1.5, lam_u=0.7)
    got = d.evaluate(logp=logp, logp_ref=ref, **values)
    want = C.kto(torch.tensor(logp).reshape(2, 2), torch.tensor(ref).reshape(2, 2), torch.ones(2, 2, dtype=torch.float64),
                 torch.tensor([1.0, 0.0], dtype=torch.float64), norm=norm, **values)
    np.testing.assert_allclose(got, want.numpy().ravel(), rtol=1e-12)

