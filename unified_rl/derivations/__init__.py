"""Each method's objective J written in sympy, and its gradient coefficient derived from it.

GC(q, o, t) = |o| * dJ / d log pi_theta(o_t | q, o_<t) (docs/ARCHITECTURE.md). J is written for one
sample in per-token log-prob symbols (ell_t = log pi_theta(o_t), ell^old_t, ell^ref_t), sympy
differentiates it, and `check` proves the result equal to the hand-derived form and relates it to
the GC the paper prints.

    d = derive("dpo")      # a Derivation (NAMES lists every derivation): objective, gc, hand, printed, notes
    check(d)               # AssertionError with a readable message if any claim fails
    d                      # in a notebook: renders J, the derived GC and the printed form

`paper` holds DeepSeekMath's six methods (appendix A.1, eq 6-21); every other derivation sits on the page of the
part it is about (unified_rl/parts/: a part's `derivation`, and the REGISTRY names its page adds in
`derivations=`), the preference family's too (parts/pair_losses/: ipo, simpo, kto, orpo, and dpo_NAME for each
loss_type of TRL's DPOTrainer); `core` is the shared machinery.
"""
from . import paper
from .core import (BETA, EPS, Derivation, check_derivation, clip, clipped_gc, outcome_advantage,
                   sigmoid)

_OWN = dict(paper.REGISTRY)  # the paper's six
_REGISTRY = {}


def parts_derivations():
    """{REGISTRY name: derivation} of the parts' pages, in axis order: each part's `derivations=` (named as the
    notebooks derive them), and a part's own `derivation` under the part's name where no entry holds it yet."""
    from ..parts import REGISTRIES  # the pages import this package's core: read them once it is loaded
    found, taken = {}, dict(_OWN)
    named = [(name, fn, part) for registry in REGISTRIES.values() for part in registry.values()
             for name, fn in part.extra.get("derivations", {}).items()]
    for name, fn, part in named:
        if found.setdefault(name, fn) is not fn or name in taken:
            raise ValueError(f"derivation {name!r} is registered twice ({part.axis} {part.name!r})")
    held = {id(fn) for fn in (*taken.values(), *found.values())}
    for registry in REGISTRIES.values():
        for part in registry.values():
            if part.derivation is not None and id(part.derivation) not in held:
                if part.name in found or part.name in taken:
                    raise ValueError(f"{part.axis} {part.name!r}: its derivation's name is another's")
                found[part.name] = part.derivation
                held.add(id(part.derivation))
    return found


def _registry():
    if not _REGISTRY:
        _REGISTRY.update({**_OWN, **parts_derivations()})
    return _REGISTRY


def __getattr__(name):
    """REGISTRY (name -> n_tokens -> Derivation) and NAMES, built on first use: the parts' pages hold most entries."""
    if name == "REGISTRY":
        return _registry()
    if name == "NAMES":
        return tuple(_registry())
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


_DERIVED = {}
"""(derivation function, n_tokens, options) -> its Derivation: sympy's simplification takes up to
seconds, and a Derivation is frozen, so a second request in the same process is the same object."""


def derive(method, n_tokens=3, **options):
    """The Derivation of one method (see NAMES) with n_tokens per response (derived once per process)."""
    registry = _OWN if method in _OWN else _registry()  # the paper's need no torch
    if method not in registry:
        raise ValueError(f"unknown method {method!r}; known: {', '.join(registry)}")
    if not isinstance(n_tokens, int) or isinstance(n_tokens, bool) or n_tokens < 1:
        raise ValueError(f"n_tokens must be a positive int, got {n_tokens!r}")
    try:
        key = (registry[method], n_tokens, tuple(sorted(options.items())))
        hash(key)
    except TypeError:  # an option that is not hashable: derived afresh
        return registry[method](n_tokens, **options)
    if key not in _DERIVED:
        _DERIVED[key] = registry[method](n_tokens, **options)
    return _DERIVED[key]


def check(method, n_tokens=3):
    """Prove the derived GC equals the hand form, and every claim; AssertionError says which fails."""
    return check_derivation(derive(method, n_tokens) if isinstance(method, str) else method)


__all__ = ["BETA", "EPS", "Derivation", "NAMES", "REGISTRY", "check", "check_derivation", "clip", "clipped_gc",
           "derive", "outcome_advantage", "paper", "parts_derivations", "sigmoid"]
