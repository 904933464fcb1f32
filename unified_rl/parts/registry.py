"""Registries of parts, one per axis of eq 5's coefficient, each part registered where it is defined.

A part is one choice along one axis: an advantage estimator, a policy term (how the ratio to the sampler
weighs each token), a KL term, an aggregation (how per-token terms become one number) or a token mask; for the
preference family, how each response is scored (`PAIR_SCORES`) and the loss of the two scores (`PAIR_LOSSES`). It
holds, on one page: its tensor function (the GC piece, `gc`), its term of the objective written
independently from its paper (`objective`, the oracle's side), its sympy derivation (`derivation`), its
settings (a frozen dataclass, a docstring per field) and its citation. verl's registries are the anchor
(`@register_adv_est("grpo")`, `@register_policy_loss("vanilla")`): where verl has a part, its name is
verl's and so is its arithmetic; the package's own older names are aliases.
"""

import dataclasses
import difflib
from dataclasses import dataclass, field
from typing import Any, Callable, Optional

AXES = ("advantage", "policy", "kl", "term", "aggregation", "mask")
PAIR_AXES = ("pair_scores", "pair_loss")  # a preference composition's (pair_composition.py)
_REFUSE = object()  # Registry.get without a default refuses an unknown name


@dataclass(frozen=True)
class Part:
    """One part: what the composed coefficient and objective call on a `parts.View`."""

    axis: str
    name: str
    gc: Callable  # the tensor side (the coefficient's), detached
    objective: Callable  # the same term written from its paper, differentiable (the oracle's side)
    cite: str
    summary: str
    settings: Any = None  # a frozen dataclass type of the part's own settings, or None
    derivation: Optional[Callable] = None  # n_tokens -> derivations.Derivation
    aliases: tuple = ()
    ships_in: tuple = ()  # where it ships: "paper", "TRL", "verl", ...
    extra: dict = field(default_factory=dict)  # what an axis adds (a policy term's `reads_old`, a mask's `rows`, ...)

    def fields(self):
        """The part's settings fields (dataclasses.Field), in order."""
        return dataclasses.fields(self.settings) if self.settings is not None else ()


class Registry(dict):
    """name -> Part for one axis; aliases look up the same part; an unknown name is refused with the nearest."""

    def __init__(self, axis):
        super().__init__()
        self.axis = axis
        self.aliases = {}

    def add(self, name, *, gc, objective, cite, summary, settings=None, derivation=None, aliases=(), ships_in=(),
            **extra):
        """Register a part under `name` (and its aliases); returns it."""
        if name in self or name in self.aliases:
            raise ValueError(f"{self.axis} part {name!r} is registered twice")
        part = Part(self.axis, name, gc, objective, cite, summary, settings, derivation, tuple(aliases),
                    tuple(ships_in), extra)
        self[name] = part
        for a in aliases:
            if a in self or a in self.aliases:
                raise ValueError(f"{self.axis} alias {a!r} is taken")
            self.aliases[a] = name
        return part

    def get(self, name, default=_REFUSE):
        """The part called `name` (or an alias of it); ValueError with the nearest names otherwise (or `default`,
        as dict.get, where one is given)."""
        if isinstance(name, Part):
            return name
        if name in self:
            return self[name]
        if name in self.aliases:
            return self[self.aliases[name]]
        if default is not _REFUSE:
            return default
        known = sorted({*self, *self.aliases})
        near = difflib.get_close_matches(str(name), known, n=3)
        hint = f" (did you mean {' or '.join(map(repr, near))}?)" if near else ""
        raise ValueError(f"unknown {self.axis} {name!r}{hint}; choose one of {', '.join(sorted(self))}")


ADVANTAGES = Registry("advantage")
POLICY_TERMS = Registry("policy")
KL_TERMS = Registry("kl")
TERMS = Registry("term")  # regularisers beside the policy term, in the loss (a squared log-ratio, an NLL, ...)
AGGREGATIONS = Registry("aggregation")
MASKS = Registry("mask")
PAIR_SCORES = Registry("pair_scores")  # how each response of a preference batch is scored
PAIR_LOSSES = Registry("pair_loss")  # the loss of the two scores (or of a labelled score and its reference point)
REGISTRIES = {"advantage": ADVANTAGES, "policy": POLICY_TERMS, "kl": KL_TERMS, "term": TERMS,
              "aggregation": AGGREGATIONS, "mask": MASKS, "pair_scores": PAIR_SCORES, "pair_loss": PAIR_LOSSES}
