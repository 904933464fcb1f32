"""Every part of eq 5's coefficient, proven on its own and in any composition.

Three independent computations meet here: a part's objective term, written from its paper; its tensor function,
which the coefficient composes; and its sympy derivation. The objective's code is read (its AST) to hold it apart
from the coefficient's; every part's derivation is proved; a seeded sample of random compositions (every axis
varied, random settings, ragged float64 batches on- and off-policy, rewards with ties and all-equal groups)
compares autograd of the composed objective with the gradient of eq 5's surrogate with the composed
coefficient; and a composition holding each part goes through the model oracle on the lab's transformer.
"""

import ast
import dataclasses
import functools
import inspect
import random
import sys
import types

import pytest
import torch

from unified_rl import derivations, methods, parts
from unified_rl.paradigm import step_from_tensors, surrogate_loss
from unified_rl.parts import (ADVANTAGES, AGGREGATIONS, AXES, KL_TERMS, MASKS, POLICY_TERMS, REGISTRIES, TERMS,
                              Composition, PairView, View)
from unified_rl.presets import get_preset

ALL_PARTS = [p for r in REGISTRIES.values() for p in r.values()]
IDS = [f"{p.axis}:{p.name}" for p in ALL_PARTS]
RL = {axis: r for axis, r in REGISTRIES.items() if axis in AXES}  # a reinforcement-learning composition's axes
"""The preference family's axes (PAIR_SCORES, PAIR_LOSSES) have their random compositions in test_pair_parts.py."""


# ---------------------------------------------------------------- the objective's code is its own

@functools.lru_cache(maxsize=None)
def _module_tree(module):
    return ast.parse(inspect.getsource(sys.modules[module]))


def source_node(fn):
    """The ast node of a function or lambda (a lambda told apart from its neighbours on a line by its columns)."""
    code, tree = fn.__code__, _module_tree(fn.__module__)
    if fn.__name__ != "<lambda>":
        return next(n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and n.name == fn.__name__
                    and code.co_firstlineno in (n.lineno, *(d.lineno for d in n.decorator_list)))
    start = min((line, col) for line, _, col, end in code.co_positions() if line is not None and end)
    around = [n for n in ast.walk(tree) if isinstance(n, ast.Lambda)
              and (n.lineno, n.col_offset) <= start <= (n.end_lineno, n.end_col_offset)]
    return max(around, key=lambda n: (n.lineno, n.col_offset))  # the innermost


def _named(node, fn, local):
    """What a name in fn's code refers to: NAME, BASE.ATTR, BASE["KEY"] (v.NAME: a View method), else None."""
    if isinstance(node, ast.Name):
        if node.id in local:
            return None
        cells = dict(zip(fn.__code__.co_freevars, (c.cell_contents for c in fn.__closure__ or ())))
        return cells.get(node.id, fn.__globals__.get(node.id))
    if isinstance(node, ast.Attribute):
        if isinstance(node.value, ast.Name) and node.value.id == "v":
            return getattr(View, node.attr, None) or getattr(PairView, node.attr, None)  # a part reads either
        base = _named(node.value, fn, local)
        return None if base is None else getattr(base, node.attr, None)
    if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant):
        base = _named(node.value, fn, local)
        return base.get(node.slice.value) if isinstance(base, dict) else None
    return None


def referenced(fn):
    """The package's functions and modules fn's code names, and those its package functions name, transitively."""
    seen, todo = {fn}, [fn]
    while todo:
        f = todo.pop()
        tree = source_node(f)
        local = {a.arg for a in ast.walk(tree.args) if isinstance(a, ast.arg)} | {
            n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
        for node in ast.walk(tree):
            obj = _named(node, f, local) if isinstance(node, (ast.Name, ast.Attribute, ast.Subscript)) else None
            if getattr(obj, "__name__", "").startswith("unified_rl") and isinstance(obj, types.ModuleType):
                seen.add(obj)
            elif inspect.isfunction(obj) and obj.__module__.startswith("unified_rl") and obj not in seen:
                seen.add(obj)
                todo.append(obj)
    return seen


@functools.lru_cache(maxsize=None)
def coefficient_side():
    """Everything a part's tensor function (or KL-in-the-reward function) reaches."""
    return set().union(*(referenced(f) for p in ALL_PARTS for f in (p.gc, p.extra.get("reward")) if f))


PLUMBING = {View.setting, PairView.setting, PairView.halves}  # reading a setting by name, a half of the batch


def leaks(part, gc_side):
    """Why the part's objective side is not its own: [] when it names no coefficient code."""
    out = []
    for obj in (part.objective, part.extra.get("reward_objective")):
        for f in referenced(obj) - {obj} if obj else ():
            where = getattr(f, "__module__", getattr(f, "__name__", ""))
            if where == "unified_rl._checks" or f in PLUMBING:
                continue
            name = f"{where}.{getattr(f, '__qualname__', '')}".rstrip(".")
            if isinstance(f, types.ModuleType) or not where.startswith("unified_rl.parts"):
                out.append(f"names {name}: the package outside parts/ and _checks")
            elif f is part.gc or f in gc_side:
                out.append(f"calls {name}, which the coefficient side calls too")
    return out


@pytest.mark.parametrize("part", ALL_PARTS, ids=IDS)
def test_each_objective_is_written_apart_from_the_coefficient(part):
    assert not leaks(part, coefficient_side()), f"{part.axis} {part.name!r}: {leaks(part, coefficient_side())}"


def test_the_independence_check_sees_an_objective_that_calls_coefficient_code():
    vanilla = POLICY_TERMS["vanilla"]
    calls_gc = dataclasses.replace(vanilla, objective=lambda v, adv: vanilla.gc(v, adv, v.mask) * v.logp)
    from unified_rl.parts.policy_terms.vanilla import clipped  # a coefficient-side helper of the page

    def helper(v, adv):
        return clipped(adv, torch.exp(v.logp - v.logp_old), v.mask, 0.2, 0.2) * v.logp
    from unified_rl import advantages  # the package's coefficient code

    def package(v):
        return advantages.leave_one_out(v.scores, v.group_size)[:, None] * torch.ones_like(v.mask)
    gc_side = coefficient_side() | referenced(vanilla.gc)
    assert any("vanilla" in why and "coefficient side" in why for why in leaks(calls_gc, gc_side))
    assert any("clipped" in why for why in leaks(dataclasses.replace(vanilla, objective=helper), gc_side))
    planted = dataclasses.replace(ADVANTAGES["rloo"], objective=package)
    assert any("outside parts" in why for why in leaks(planted, gc_side))
    assert not leaks(vanilla, gc_side)


# ---------------------------------------------------------------- each part: derivation, citation, summary

@functools.lru_cache(maxsize=None)
def _proved(derive):
    return derivations.check_derivation(derive(1))


@pytest.mark.parametrize("part", ALL_PARTS, ids=IDS)
def test_each_part_has_a_proved_derivation_a_citation_and_a_summary(part):
    assert part.cite.strip() and part.summary.strip(), part.name
    assert callable(part.derivation), f"{part.axis} {part.name!r} has no derivation"
    assert any(fn is part.derivation for fn in derivations.REGISTRY.values())  # derive("NAME") reaches it
    assert _proved(part.derivation)


# ---------------------------------------------------------------- random compositions: objective vs coefficient

N_COMPOSITIONS = 240
SPREAD = {"clip_cov_ratio": (2e-4, 0.05, 0.3), "kl_cov_ratio": (2e-4, 0.05, 0.3), "clip_cov_lb": (-1.0, 0.0, 1.0),
          "clip_cov_ub": (5.0, 0.5), "gspo_clip_eps": (3e-4, 0.1), "gspo_clip_eps_high": (4e-4, 0.1),
          "max_len": (17.0, 5.0)}
"""Values of settings whose defaults alone would leave a branch unvisited on these small batches (Clip-Cov's and
KL-Cov's share of tokens, the covariance window, GSPO's clip at a 0.3 log-ratio jitter); any other float setting
is its default times 0.5, 1 or 2, a bool either, a str or Optional setting any of its field's choices."""


def random_setting(f, rng):
    if f.name in SPREAD:
        return rng.choice(SPREAD[f.name])
    if "choices" in f.metadata:
        return rng.choice(f.metadata["choices"])
    if isinstance(f.default, bool):
        return rng.choice((True, False))
    if isinstance(f.default, float):
        return f.default * rng.choice((0.5, 1.0, 2.0))
    return f.default


@functools.lru_cache(maxsize=None)
def random_composition(seed):
    """(Composition with random settings, a function of off_policy -> (step, logp), a readable description)."""
    rng = random.Random(seed)
    advantage, policy = rng.choice(sorted(ADVANTAGES)), rng.choice(sorted(POLICY_TERMS))
    kl = rng.choice([None, *sorted(KL_TERMS)])
    in_reward = kl and "reward" in KL_TERMS[kl].extra and not ADVANTAGES[advantage].extra.get("no_kl_reward")
    kl_in = rng.choice(("loss", "reward") if in_reward else ("loss",)) if kl else "loss"
    masks = tuple(m for m in sorted(MASKS) if rng.random() < 0.5)
    terms = tuple(t for t in sorted(TERMS) if rng.random() < 0.3)
    comp = Composition(advantage, policy, kl, kl_in, masks, terms=terms)
    cls = parts.settings_class("Random", comp)
    hp = cls(**{f.name: random_setting(f, rng) for f in dataclasses.fields(cls) if f.name != "aggregation"},
             aggregation=rng.choice(sorted(AGGREGATIONS)))
    cfg = dataclasses.replace(get_preset("cpu").rl, beta=rng.choice((0.04, 0.3)), clip_eps=rng.choice((0.1, 0.2)))
    G = 2 if advantage == "remax" else rng.choice((2, 3, 4))  # ReMax's rows are (sampled, greedy) pairs
    B, T = G * rng.choice((1, 2, 3)), rng.choice((4, 6, 8))
    g = torch.Generator().manual_seed(seed)
    mask = torch.zeros(B, T, dtype=torch.float64)
    for i in range(B):  # ragged: each response starts after a prompt of 0-2 tokens and has 1 or more tokens
        start = rng.randrange(3)
        mask[i, start:start + rng.randint(1, T - start)] = 1
    values = (0.0, 1.0) if advantage == "indicator" else (0.0, 0.5, 1.0)  # ties in every group of 3 or more
    scores = torch.tensor([rng.choice(values) for _ in range(B * (2 if advantage == "gdpo" else 1))],
                          dtype=torch.float64).view(B, -1).squeeze(-1)
    if rng.random() < 0.4:  # a group whose answers all score the same: no signal
        scores[:G] = scores[0]
    truncated = torch.tensor([rng.random() < 0.3 for _ in range(B)])
    truncated[rng.randrange(B)] = False  # a row the loss keeps
    noise = lambda scale: scale * torch.randn(B, T, generator=g, dtype=torch.float64)  # noqa: E731
    base = -torch.rand(B, T, generator=g, dtype=torch.float64) * 2 - 0.05
    tensors = dict(logp_ref=base + noise(0.3), scores=scores, adv=noise(1.0) * mask, group_size=G, hp=hp,
                   truncated=truncated, entropy=torch.rand(B, T, generator=g, dtype=torch.float64))
    jitter, sampler = noise(0.3), noise(0.1)  # pi_old off pi_theta; the sampler (vLLM's numerics) off pi_old

    def step(off_policy):
        logp = base.clone().requires_grad_()
        old = base + jitter if off_policy else base
        out = step_from_tensors(logp, mask, cfg, logp_old=old if off_policy else None, **tensors)
        out.batch.logp = old + sampler  # what a sampled Rollout carries: the KL in the reward reads it
        return out, logp
    said = f"{advantage} x {policy} x {kl} ({kl_in}) + {terms} x {hp.aggregation}, masks {masks}, G={G}, B={B}, T={T}; {hp}"
    return comp, step, said


def relative_error(comp, step, logp):
    """(max |grad J - grad of -surrogate(coefficient)| over the larger one's max, that max); (0, 0) where both are 0."""
    coef = comp.coefficient(step)
    J = comp.objective(step)
    (g_obj,) = torch.autograd.grad(J, logp, allow_unused=True) if J.requires_grad else (None,)
    g_obj = torch.zeros_like(logp) if g_obj is None else g_obj
    (g_gc,) = torch.autograd.grad(-surrogate_loss(logp, coef, step.batch.mask), logp)
    if not (torch.isfinite(g_obj).all() and torch.isfinite(g_gc).all()):
        return float("inf"), float("inf")
    scale = max(g_gc.abs().max().item(), g_obj.abs().max().item())
    return (0.0 if scale == 0 else (g_obj - g_gc).abs().max().item() / scale), scale


def run_oracle(seeds):
    """{seed: (worst relative error on- and off-policy, the larger gradient's max, description)}, {seed: ValueError}."""
    errors, refused = {}, {}
    for seed in seeds:
        try:  # a composition the package refuses is refused when it is made, or at its first step
            comp, step, said = random_composition(seed)
            (e_on, s_on), (e_off, s_off) = (relative_error(comp, *step(off)) for off in (False, True))
            errors[seed] = (max(e_on, e_off), max(s_on, s_off), said)
        except ValueError as e:
            refused[seed] = str(e)
    return errors, refused


SEEDS = range(N_COMPOSITIONS)
REFUSALS = ("the gdpo advantage takes no KL in the reward",)
"""Why a composition may be refused: GDPO's reward columns are normalised apart, so no summed KL can enter them."""


@functools.lru_cache(maxsize=None)
def oracle_on_every_seed():
    return run_oracle(SEEDS)


def test_random_compositions_equal_their_objectives_gradient():
    errors, refused = oracle_on_every_seed()
    bad = {s: f"{e:.3g}: {said}" for s, (e, _, said) in errors.items() if not e <= 1e-10}
    assert not bad, "\n".join(f"seed {s}: {b}" for s, b in bad.items())
    assert len(errors) >= 200 and len(refused) <= N_COMPOSITIONS // 10, (len(errors), refused)
    assert all(any(why in msg for why in REFUSALS) for msg in refused.values()), refused
    assert sum(scale > 0 for _, scale, _ in errors.values()) > 0.9 * len(errors)  # most have a gradient to compare


def test_the_sample_varies_every_axis():
    seen = {axis: set() for axis in RL}
    for seed in SEEDS:
        comp, step, _ = random_composition(seed)
        for key, part in comp.parts.items():
            seen[part.axis].add(part.name)
        seen["aggregation"].add(step(False)[0].hp.aggregation)
    assert all(seen[axis] == set(r) for axis, r in RL.items()), seen


@functools.lru_cache(maxsize=None)
def names_in(seed):
    return {p.name for p in random_composition(seed)[0].parts.values()}


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


SLIPS = {"SAPO's GC with the wrong sign": (POLICY_TERMS, "sapo", "gc", lambda gc: lambda *a: -gc(*a)),
         "k2's GC with the wrong sign": (KL_TERMS, "k2", "gc", lambda gc: lambda *a: -gc(*a)),
         "RLOO's baseline over G, not G - 1": (ADVANTAGES, "rloo", "gc",
                                               lambda gc: lambda v: gc(v) * (v.group_size - 1) / v.group_size),
         "CISPO's weight not detached": (POLICY_TERMS, "cispo", "objective", _undetached),
         "VESPO's weight not detached": (POLICY_TERMS, "vespo", "objective", _undetached)}


@pytest.mark.parametrize("slip", SLIPS)
def test_a_slip_in_one_part_fails_the_oracle(slip, monkeypatch):
    registry, name, side, plant = SLIPS[slip]
    monkeypatch.setitem(registry, name, dataclasses.replace(registry[name], **{side: plant(getattr(registry[name], side))}))
    seeds = [s for s in SEEDS if name in names_in(s)][:12]
    errors, _ = run_oracle(seeds)
    assert len(errors) >= 5 and max(e for e, _, _ in errors.values()) > 1e-3, (slip, errors)


# ---------------------------------------------------------------- every part under the model oracle

def switched_on(part):
    """{setting: value} moving each of the part's settings off its default (a mask's default keeps every token):
    the first other choice, True for a bool."""
    out = {}
    for f in part.fields():
        other = [c for c in f.metadata.get("choices", (True,) if f.default is False else ()) if c != f.default]
        if other:
            out[f.name] = other[0]
    return out


class Spread:
    """The rule's reward plus 0.01 per response token: no ties, so every advantage has a signal (Pass@k's gap
    between the best two answers is 0 under 0/1 rewards wherever two answers of a group are right)."""

    def __call__(self, rollout):
        from unified_rl.rewards import RuleReward
        return RuleReward()(rollout) + 0.01 * rollout.mask.sum(-1)


def covering_compositions():
    """{name: (parts, options)}: composition i takes the i-th part of every axis (cycling), so each part is in one."""
    from unified_rl.rewards import OverlongPenalty, RewardColumns, RuleReward
    axes = {"advantage": sorted(ADVANTAGES), "policy": sorted(POLICY_TERMS), "kl": sorted(KL_TERMS),
            "aggregation": sorted(AGGREGATIONS), "mask": sorted(MASKS), "term": sorted(TERMS)}
    out = {}
    for i in range(max(map(len, axes.values()))):
        a, p, kl, agg, mask, term = (names[i % len(names)] for names in axes.values())
        gae, can = ADVANTAGES[a].extra.get("per_batch") == "gae", "reward" in KL_TERMS[kl].extra and a != "gdpo"
        kl_in = "reward" if (i % 2 or gae) and can else "loss"
        kl = None if gae and not can else kl  # GAE takes a KL in its reward only
        reward = {"indicator": RuleReward(), "gdpo": RewardColumns(RuleReward(), OverlongPenalty())}.get(a, Spread())
        out[f"cover-{i}"] = (dict(advantage=a, policy=p, kl=kl, aggregation=agg),
                             dict(kl_in=kl_in, masks=(mask,), terms=(term,), reward=reward,
                                  **switched_on(MASKS[mask]), **switched_on(TERMS[term])))
    return out


def test_the_covering_compositions_hold_every_part():
    held = {axis: set() for axis in RL}
    for parts_, options in covering_compositions().values():
        for axis in ("advantage", "policy", "kl", "aggregation"):
            held[axis].add(parts_[axis]) if parts_[axis] else None
        held["mask"].update(options["masks"])
        held["term"].update(options.get("terms", ()))
    assert held == {axis: set(r) for axis, r in RL.items()}


def _slipped(registry, part, monkeypatch):
    """A copy of `part` registered as 'slip~NAME' whose tensor function (and a KL's reward estimate) is doubled."""
    doubled = lambda fn: lambda *a: 2 * fn(*a)  # noqa: E731
    extra = {**part.extra, **({"reward": doubled(part.extra["reward"])} if "reward" in part.extra else {})}
    name = f"slip~{part.name}"
    monkeypatch.setitem(registry, name, dataclasses.replace(part, name=name, gc=doubled(part.gc), extra=extra))
    return name


def test_every_part_passes_the_model_oracle_in_a_composition_that_sees_it(monkeypatch):
    """Each covering composition is checked as it is (round-off), and each part doubled in the first composition
    that holds it: the oracle must see that slip, so no part is checked only where its term vanishes."""
    import unified_rl.methods.hooks as hooks
    from unified_rl.trainer import make_lab
    from unified_rl.verify import model_oracle
    real = hooks.process_rewards

    def drawn_steps(tokenizer, batch):  # the untrained model gets every step wrong: score its steps by a coin
        steps, where = real(tokenizer, batch)
        g = torch.Generator().manual_seed(0)
        return torch.randint(0, 2, steps.shape, generator=g).to(steps) * where, where
    monkeypatch.setattr(hooks, "process_rewards", drawn_steps)
    clean, slipped = [], {}  # slipped: (axis, part) -> the oracle's keys of its first composition, it doubled
    for name, (parts_, options) in covering_compositions().items():
        variants = {name: (parts_, options["masks"], options["terms"], None)}
        for axis, registry in RL.items():
            listed = {"mask": options["masks"], "term": options["terms"]}
            for held in listed[axis] if axis in listed else (parts_[axis],) if parts_[axis] else ():
                if (axis, held) in slipped or axis == "kl" and ADVANTAGES[parts_["advantage"]].extra.get("per_batch"):
                    continue  # a per-batch advantage reads its KL reward in the hook, on both sides alike
                slipped[(axis, held)] = []
                slip = _slipped(registry, registry[held], monkeypatch)
                chosen = (parts_, (slip,), options["terms"]) if axis == "mask" else \
                    (parts_, options["masks"], (slip,)) if axis == "term" else \
                    ({**parts_, axis: slip}, options["masks"], options["terms"])
                variants[f"{name}:{axis}:{held}"] = (*chosen, (axis, held))
        for key, (chosen, masks, terms, part) in variants.items():
            m = parts.compose(name=key, **chosen, **{**options, "masks": masks, "terms": terms})
            monkeypatch.setitem(methods.METHODS, key, m)
            keys = [key, f"{key}-clipped"] if m.off_policy else [key]
            clean.extend(keys) if part is None else slipped[part].extend(keys)
    lab = make_lab("tiny")
    diffs = model_oracle(lab.policy, lab.tokenizer, lab.rl_problems, methods=clean + sum(slipped.values(), []),
                         relative=True)
    assert max(diffs[k] for k in clean) < 1e-10, {k: diffs[k] for k in clean}
    unseen = {part: [diffs[k] for k in keys] for part, keys in slipped.items() if max(diffs[k] for k in keys) < 1e-6}
    assert not unseen, unseen
    assert set(slipped) == {(axis, name) for axis, r in RL.items() for name in r if "~" not in name}


def test_a_composition_the_package_cannot_compute_is_refused_when_it_is_made():
    """GDPO's rewards are columns normalised apart: a KL summed into them has no meaning, so the composition is refused
    at once, not at its first step (its objective would otherwise ignore the KL its coefficient refuses)."""
    with pytest.raises(ValueError, match="gdpo advantage takes no KL in the reward"):
        Composition("gdpo", "vanilla", "k1", "reward")
    Composition("gdpo", "vanilla", "k3", "loss")
