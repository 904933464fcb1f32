"""Each method's objective J written in sympy, and its gradient coefficient derived from it.

GC(q, o, t) = |o| * dJ / d log pi_theta(o_t | q, o_<t) (docs/ARCHITECTURE.md). J is written for one
sample in per-token log-prob symbols (ell_t = log pi_theta(o_t), ell^old_t, ell^ref_t), sympy
differentiates it, and `check` proves the result equal to the hand-derived form and relates it to
the GC the paper prints.

    d = derive("dpo")      # a Derivation (NAMES lists every derivation): objective, gc, hand, printed, notes
    check(d)               # AssertionError with a readable message if any claim fails
    d                      # in a notebook: renders J, the derived GC and the printed form

`paper` holds DeepSeekMath's six methods (appendix A.1, eq 6-21); `core` the shared machinery.
"""
from . import paper
from . import preference
from . import policy_gradient
from . import dpo_losses
from .core import (BETA, EPS, Derivation, check_derivation, clip, clipped_gc, outcome_advantage,
                   sigmoid)

REGISTRY = {**paper.REGISTRY}
REGISTRY.update(preference.REGISTRY)  # IPO, SimPO, KTO, ORPO
REGISTRY.update(policy_gradient.REGISTRY)  # Dr. GRPO, DAPO, GSPO, CISPO, RLOO, REINFORCE++, ReMax, aggregation, KL terms
# -- GRPO's options, the methods TRL and verl ship
from . import aggregations, baselines, options, ratio_shapes  # noqa: E402
REGISTRY.update(aggregations.REGISTRY)  # every aggregation of parts/aggregations.py
REGISTRY.update(options.REGISTRY)  # two-sided clip, the sequence-level KL correction, the kept tokens
REGISTRY.update(ratio_shapes.REGISTRY)  # SAPO, VESPO, LUSPO, GMPO, Clip-Cov, KL-Cov
REGISTRY.update(baselines.REGISTRY)  # GPG, OPO, Pass@k training, GDPO
REGISTRY.update(dpo_losses.REGISTRY)  # every loss_type of TRL's DPOTrainer, dpo_NAME
NAMES = tuple(REGISTRY)


_DERIVED = {}
"""(derivation function, n_tokens, options) -> its Derivation: sympy's simplification takes up to
seconds, and a Derivation is frozen, so a second request in the same process is the same object."""


def derive(method, n_tokens=3, **options):
    """The Derivation of one method (see NAMES) with n_tokens per response (derived once per process)."""
    if method not in REGISTRY:
        raise ValueError(f"unknown method {method!r}; known: {', '.join(NAMES)}")
    if not isinstance(n_tokens, int) or isinstance(n_tokens, bool) or n_tokens < 1:
        raise ValueError(f"n_tokens must be a positive int, got {n_tokens!r}")
    try:
        key = (REGISTRY[method], n_tokens, tuple(sorted(options.items())))
        hash(key)
    except TypeError:  # an option that is not hashable: derived afresh
        return REGISTRY[method](n_tokens, **options)
    if key not in _DERIVED:
        _DERIVED[key] = REGISTRY[method](n_tokens, **options)
    return _DERIVED[key]


def check(method, n_tokens=3):
    """Prove the derived GC equals the hand form, and every claim; AssertionError says which fails."""
    return check_derivation(derive(method, n_tokens) if isinstance(method, str) else method)


__all__ = ["BETA", "EPS", "Derivation", "NAMES", "REGISTRY", "check", "clip", "clipped_gc", "derive",
           "outcome_advantage", "paper", "sigmoid"]
