"""The preference family's parts in any composition: scores x loss x norm, proven as the policy-gradient parts are.

A seeded sample of random preference compositions (every score, every loss, both norms, ORPO's sft term added to
some, random settings, ragged float64 pairs or labelled batches at small and large log-ratios) compares autograd
of the composed objective (each loss's term written from its paper) with the gradient of eq 5's surrogate with the
composed coefficient (each loss's a+ and a-, each score's k); planted slips (a GC's sign, the stop-gradient on
KTO's z0, the sum norm's |o|, AOT's ranks) fail it; a composition holding each part goes through the model
oracle on the lab's transformer, and doubling that part there is seen. The pages' objectives are held apart
from their coefficients in tests/test_parts.py (every registry's parts).
"""

import dataclasses
import functools
import random

import pytest
import torch

from unified_rl import methods, parts
from unified_rl.paradigm import step_from_tensors, surrogate_loss
from unified_rl.parts import PAIR_LOSSES, PAIR_SCORES, PairComposition, pair_settings_class
from unified_rl.parts.pair_scores import NORMS
from unified_rl.presets import RLConfig

N_COMPOSITIONS = 160
SPREAD = {"label_smoothing": (1e-3, 0.1, 0.3), "discopop_tau": (0.05, 0.5, 2.0), "gamma": (-1.0, 0.0, 1.5),
          "lam": (0.0, 0.1, 1.0), "beta": (0.05, 0.5, 2.0)}
"""Values of the settings (by the parts' field names) that reach each regime: label smoothing inside every loss's
range, a DiscoPOP blend from sharp to flat, SimPO's margin of either sign, ORPO's weight off and on."""


def random_setting(name, f, rng):
    if name in SPREAD:
        return rng.choice(SPREAD[name])
    if "choices" in f.metadata:
        return rng.choice(f.metadata["choices"])
    return f.default * rng.choice((0.5, 1.0, 2.0)) if isinstance(f.default, float) else f.default


def batch(data, uses_ref, rng, g):
    """(logp, logp_ref, mask, rewards) of B pairs (chosen rows, then rejected) or B labelled rows and B mismatched."""
    B, T = rng.choice((2, 3, 5)), rng.choice((3, 6, 9))
    mask = torch.zeros(2 * B, T, dtype=torch.float64)
    for i in range(2 * B):  # ragged: a prompt of 0-2 tokens, then a response of 1 or more
        start = rng.randrange(3)
        mask[i, start:start + rng.randint(1, T - start)] = 1
    logp = -(torch.rand(2 * B, T, generator=g, dtype=torch.float64) * 2.5 + 0.01)  # log-probs < 0
    spread = rng.choice((0.3, 3.0))  # log-ratios small and large (past hinge's 1/beta and the targets)
    ref = (logp + spread * torch.randn(2 * B, T, generator=g, dtype=torch.float64)) if uses_ref else None
    if data == "pairs":
        rewards = torch.tensor([1.0] * B + [0.0] * B, dtype=torch.float64)
    else:  # labels of both kinds among the labelled rows; the mismatched rows' rewards are not read
        labels = [1.0, 0.0] + [float(rng.random() < 0.5) for _ in range(B - 2)]
        rewards = torch.tensor(labels + [0.0] * B, dtype=torch.float64)
    return logp, ref, mask, rewards


@functools.lru_cache(maxsize=None)
def random_composition(seed):
    """(PairComposition, its settings, a function -> (step, logp), a readable description)."""
    rng = random.Random(seed)
    loss = rng.choice(sorted(PAIR_LOSSES))
    scores = rng.choice(PAIR_LOSSES[loss].extra.get("scores") or sorted(PAIR_SCORES))
    data = PAIR_LOSSES[loss].extra.get("data", "pairs")
    extra = ("sft",) if data == "pairs" and loss != "sft" and rng.random() < 0.25 else ()
    comp = PairComposition(scores, loss, extra, rng.choice(NORMS), norms=NORMS)
    cls = pair_settings_class("Random", comp)
    hp = cls(**{f.name: random_setting(f.name.removeprefix("pair_"), f, rng) for f in dataclasses.fields(cls)})
    g = torch.Generator().manual_seed(seed)
    logp0, ref, mask, rewards = batch(data, comp.uses_ref, rng, g)

    def step():
        logp = logp0.clone().requires_grad_()
        return step_from_tensors(logp, mask, RLConfig(), logp_ref=ref, scores=rewards, hp=hp), logp
    said = f"{scores} x {loss}{''.join(' + ' + e for e in extra)}, B={mask.shape[0] // 2}, T={mask.shape[1]}; {hp}"
    return comp, step, said


def relative_error(comp, step, logp):
    """(max |grad J - grad of -surrogate(coefficient)| over the larger one's max, that max); (0, 0) where both are 0."""
    coef = comp.coefficient(step)
    (g_obj,) = torch.autograd.grad(comp.objective(step), logp, allow_unused=True, materialize_grads=True)
    (g_gc,) = torch.autograd.grad(-surrogate_loss(logp, coef, step.batch.mask), logp)
    if not (torch.isfinite(g_obj).all() and torch.isfinite(g_gc).all()):
        return float("inf"), float("inf")
    scale = max(g_gc.abs().max().item(), g_obj.abs().max().item())
    return (0.0 if scale == 0 else (g_obj - g_gc).abs().max().item() / scale), scale


def run_oracle(seeds):
    """{seed: (relative error, the larger gradient's max, description)}, {seed: ValueError}."""
    errors, refused = {}, {}
    for seed in seeds:
        try:
            comp, step, said = random_composition(seed)
            errors[seed] = (*relative_error(comp, *step()), said)
        except ValueError as e:
            refused[seed] = str(e)
    return errors, refused


SEEDS = range(N_COMPOSITIONS)


@functools.lru_cache(maxsize=None)
def oracle_on_every_seed():
    return run_oracle(SEEDS)


def test_random_compositions_equal_their_objectives_gradient():
    errors, refused = oracle_on_every_seed()
    bad = {s: f"{e:.3g}: {said}" for s, (e, _, said) in errors.items() if not e <= 1e-10}
    assert not bad, "\n".join(f"seed {s}: {b}" for s, b in bad.items())
    assert not refused and len(errors) == N_COMPOSITIONS >= 100, refused
    assert sum(scale > 0 for _, scale, _ in errors.values()) > 0.9 * len(errors)  # most have a gradient to compare


def test_the_sample_varies_every_axis():
    seen = {"scores": set(), "loss": set(), "norm": set(), "extra": set()}
    for seed in SEEDS:
        comp, step, _ = random_composition(seed)
        losses, norm = comp.chosen(step()[0].hp)
        seen["scores"].add(comp.scores), seen["loss"].add(comp.loss), seen["norm"].add(norm)
        seen["extra"].update(comp.extra)
    assert seen == {"scores": set(PAIR_SCORES), "loss": set(PAIR_LOSSES), "norm": set(NORMS), "extra": {"sft"}}, seen


@functools.lru_cache(maxsize=None)
def names_in(seed):
    comp = random_composition(seed)[0]
    return {comp.scores, comp.loss, *comp.extra}


def _undetached(objective):
    """The objective with every .detach() a no-op while it runs: a stop-gradient forgotten."""
    def planted(*args):
        real = torch.Tensor.detach
        torch.Tensor.detach = lambda self: self
        try:
            return objective(*args)
        finally:
            torch.Tensor.detach = real
    return planted


def _unsorted_aot(gc):
    """AOT's push taken at each pair's own margin, not at the rank it holds."""
    from unified_rl.parts.pair_losses.aot import aot_g

    def planted(v):
        a = aot_g(v.p1 - v.p2 - (v.r1 - v.r2), v.setting("beta"), v.setting("label_smoothing"))
        return a, -a
    return planted


SLIPS = {"bco_pair's GC with the wrong sign": (PAIR_LOSSES, "bco_pair", "gc", lambda gc: lambda v: tuple(-a for a in gc(v))),
         "KTO's z0 not held fixed": (PAIR_LOSSES, "kto", "objective", _undetached),
         "the sum norm's |o| dropped": (PAIR_SCORES, "log_ratio", "gc",
                                        lambda gc: lambda v: (gc(v)[0], torch.ones_like(gc(v)[1]))),
         "AOT at each pair's own margin": (PAIR_LOSSES, "aot", "gc", _unsorted_aot)}


@pytest.mark.parametrize("slip", SLIPS)
def test_a_slip_in_one_part_fails_the_oracle(slip, monkeypatch):
    registry, name, side, plant = SLIPS[slip]
    monkeypatch.setitem(registry, name, dataclasses.replace(registry[name], **{side: plant(getattr(registry[name], side))}))
    seeds = [s for s in SEEDS if name in names_in(s)][:12]
    errors, _ = run_oracle(seeds)
    assert len(errors) >= 3 and max(e for e, _, _ in errors.values()) > 1e-3, (slip, errors)


def test_the_independence_check_sees_a_pair_objective_that_calls_coefficient_code():
    """tests/test_parts.py holds every registry's objectives apart from their coefficients: a planted KTO
    objective that takes z0 from the coefficient's reference_point, and a score written with score(), are caught."""
    from test_parts import coefficient_side, leaks
    from unified_rl.parts import pair_scores
    from unified_rl.parts.pair_losses import kto
    gc_side = coefficient_side()
    assert not leaks(PAIR_LOSSES["kto"], gc_side) and not leaks(PAIR_SCORES["log_ratio"], gc_side)

    def z0_of_the_coefficient(v):
        return kto.value_loss(v.s1, v.labels, kto.reference_point(v.s2), 0.1, 1.0, 1.0)

    def score_of_the_coefficient(v):
        return pair_scores.score(v.logp, v.mask, v.norm, v.logp_ref)[0]
    planted = dataclasses.replace(PAIR_LOSSES["kto"], objective=z0_of_the_coefficient)
    assert any("reference_point" in why for why in leaks(planted, gc_side))
    planted = dataclasses.replace(PAIR_SCORES["log_ratio"], objective=score_of_the_coefficient)
    assert any("pair_scores.score" in why for why in leaks(planted, gc_side))


def test_a_composition_the_parts_cannot_compute_is_refused_when_it_is_made():
    with pytest.raises(ValueError, match="reads its scores as logp scores"):
        PairComposition("log_ratio", "odds_ratio")
    with pytest.raises(ValueError, match="read different batches"):
        PairComposition("log_ratio", "kto", extra=("sft",))
    with pytest.raises(ValueError, match="unknown norm"):
        PairComposition("logp", "simpo", norm="max")
    with pytest.raises(ValueError, match="unknown pair_loss 'sigmod'.*did you mean 'sigmoid'"):
        PairComposition("log_ratio", "sigmod")


# ---------------------------------------------------------------- every part under the model oracle

def covering_compositions():
    """{name: (scores, loss, norm, extra)}: composition i holds the i-th loss, a score it reads and a norm, so each
    part (sft as a loss and as ORPO's added term) is in one."""
    out = {}
    for i, loss in enumerate(sorted(PAIR_LOSSES)):
        allowed = PAIR_LOSSES[loss].extra.get("scores") or sorted(PAIR_SCORES)
        pairs = PAIR_LOSSES[loss].extra.get("data", "pairs") == "pairs"
        out[f"pair-cover-{i}"] = (allowed[i % len(allowed)], loss, NORMS[i % 2],
                                  ("sft",) if pairs and loss != "sft" and i % 3 == 0 else ())
    return out


def test_the_covering_compositions_hold_every_part():
    held = {s for s, _, _, _ in covering_compositions().values()} | {l for _, l, _, _ in covering_compositions().values()}
    assert held == set(PAIR_SCORES) | set(PAIR_LOSSES)


def _doubled(registry, part):
    """A copy of `part` named 'slip~NAME' whose tensor function is doubled (a score's: its GC piece k)."""
    if registry is PAIR_SCORES:
        return dataclasses.replace(part, name=f"slip~{part.name}", gc=lambda v: (part.gc(v)[0], 2 * part.gc(v)[1]))
    return dataclasses.replace(part, name=f"slip~{part.name}", gc=lambda v: tuple(2 * a for a in part.gc(v)))


def test_every_part_passes_the_model_oracle_in_a_composition_that_sees_it(monkeypatch):
    """Each covering composition is checked as it is (round-off), and each part doubled in the first composition
    that holds it: the oracle must see that slip."""
    from unified_rl.trainer import make_lab
    from unified_rl.verify import model_oracle
    lab, covering = make_lab("tiny"), covering_compositions()
    variants, slipped = {}, {}
    for name, (scores, loss, norm, extra) in covering.items():
        variants[name] = (scores, loss, norm, extra, None)
        for registry, held in ((PAIR_SCORES, scores), (PAIR_LOSSES, loss)):
            if (registry.axis, held) not in slipped:
                slipped[(registry.axis, held)] = f"{name}:{held}"
                variants[f"{name}:{held}"] = (scores, loss, norm, extra, (registry, held))
    for key, (scores, loss, norm, extra, slip) in variants.items():
        if slip is not None:
            monkeypatch.setitem(slip[0], f"slip~{slip[1]}", _doubled(slip[0], slip[0][slip[1]]))
            scores, loss = (f"slip~{scores}", loss) if slip[0] is PAIR_SCORES else (scores, f"slip~{loss}")
        monkeypatch.setitem(methods.METHODS, key, parts.compose_pairs(scores, loss, norm, extra=extra, name=key))
    diffs = model_oracle(lab.policy, lab.tokenizer, lab.rl_problems, methods=list(variants), relative=True)
    clean = {k: diffs[k] for k in covering}
    assert max(clean.values()) < 1e-10, clean
    unseen = {part: diffs[key] for part, key in slipped.items() if diffs[key] < 1e-6}
    assert not unseen, unseen
    assert set(slipped) == {(r.axis, n) for r in (PAIR_SCORES, PAIR_LOSSES) for n in r if "~" not in n}


def test_sfts_token_mean_is_the_whole_batchs_on_split_ranks():
    """sft under the sum norm averages over every chosen token of the batch (TRL's): two simulated ranks, each
    holding two of the four pairs, their chosen responses 1 and 2 tokens long on one rank and 4 and 5 on the other,
    give the rows one process gives; with each rank's own mean length (the control, World.local_normalisers) they
    differ by far more than round-off, by construction."""
    from unified_rl import distributed
    T = 5
    lengths = [1, 2, 4, 5, 3, 3, 3, 3]  # the chosen rows of both ranks, then their rejected partners
    mask = torch.tensor([[1.0] * n + [0.0] * (T - n) for n in lengths], dtype=torch.float64)
    logp = -torch.rand(8, T, generator=torch.Generator().manual_seed(0), dtype=torch.float64) * mask
    m = methods.METHODS["dpo"]
    hp = dataclasses.replace(m.hparams, dpo_loss="sft", dpo_norm="sum")

    def gc(rows, across):
        return m.coefficient(step_from_tensors(logp[rows], mask[rows], RLConfig(), logp_ref=logp[rows] - 0.1,
                                               hp=hp, across=across))
    whole = gc(list(range(8)), None)
    shares = {0: [0, 1, 4, 5], 1: [2, 3, 6, 7]}  # each rank: its chosen rows, then their rejected partners

    def ranks():
        r = distributed.current().rank
        return gc(shares[r], distributed.across())
    for local, same in ((False, True), (True, False)):
        got = distributed.simulate(ranks, 2, local_normalisers=local)
        gap = max(float((got[r] - whole[shares[r]]).abs().max()) for r in (0, 1))
        assert (gap < 1e-12) if same else (gap > 0.1 * float(whole.abs().max())), (local, gap)
