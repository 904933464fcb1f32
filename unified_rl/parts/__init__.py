"""Parts: eq 5's coefficient along its axes, each part one page, any composition proven.

    from unified_rl import parts
    parts.ADVANTAGES, parts.POLICY_TERMS, parts.KL_TERMS, parts.AGGREGATIONS, parts.MASKS   # name -> Part
    m = parts.compose(advantage="rloo", policy="cispo", kl=None, aggregation="token-mean")  # -> paradigm.Method
    parts.PAIR_SCORES, parts.PAIR_LOSSES                                      # the preference family's axes
    m = parts.compose_pairs("log_ratio", "hinge", norm="sum", pair_beta=0.3)   # -> paradigm.Method

A method is a choice along independent axes (DeepSeekMath eq 5): where (q, o) come from (`data/`), how o is
scored (`rewards/`), and how the score becomes each token's coefficient: an advantage estimator, a policy term
(how the ratio to the sampler weighs each token), a KL term (in the loss or in the reward), an aggregation and
token masks. Each part is registered where it is defined, with its tensor function, its objective term written
independently from its paper, its sympy derivation and its citation; `Composition` puts them together
(composition.py). Where verl registers a part, its name is verl's and so is its arithmetic.
`compose` builds a `Method` (data source and reward included), so it loads the lab; importing `parts` does not.
"""

from . import advantages, aggregations, extra_terms, kl_terms, masks, policy_terms, sampler_corrections  # noqa: F401  (each page registers its parts)
from . import pair_losses, pair_scores  # noqa: F401  (the preference family's parts)
from .composition import Composition, settings_class
from .pair_composition import PairComposition, pair_settings_class
from .pair_view import PairView
from .registry import (ADVANTAGES, AGGREGATIONS, AXES, KL_TERMS, MASKS, PAIR_AXES, PAIR_LOSSES, PAIR_SCORES,
                       POLICY_TERMS, REGISTRIES, TERMS, Part, Registry)
from .view import View


def compose(advantage, policy, kl=None, aggregation="seq-mean-token-mean", **options):
    """A `paradigm.Method` of one part per axis: usable wherever a METHODS entry is (train, CLI, verify, ...).

    options: kl_in ("loss" or "reward"), masks (names of MASKS), name, data_source, reward, section defaults
    (`defaults=`), citation (`paper=`), summary, and any setting of the chosen parts (e.g. clip_eps_high=0.28).
    """
    from ..methods.table import compose as compose_method  # the lab: data sources, rewards, the critic
    return compose_method(advantage=advantage, policy=policy, kl=kl, aggregation=aggregation, **options)


def compose_pairs(scores, loss, norm="mean", **options):
    """A `paradigm.Method` of the preference family: how each response is scored (PAIR_SCORES), the loss of the
    scores (PAIR_LOSSES) and the norm ("mean" or "sum" over its tokens); usable wherever a METHODS entry is.

    options: extra (losses added to J: ORPO's sft), losses / norms (what a setting may choose), name, reward,
    section defaults (`defaults=`), citation (`paper=`), summary, and any setting of the parts by its name
    (pair_beta=0.3, pair_label_smoothing=0.1: `{prefix}_{field}`, prefix "pair" unless given).
    """
    from ..methods.preference import compose_pairs as compose_method  # the lab: data sources, rewards
    return compose_method(scores, loss, norm, **options)


__all__ = ["ADVANTAGES", "AGGREGATIONS", "AXES", "Composition", "KL_TERMS", "MASKS", "PAIR_AXES", "PAIR_LOSSES",
           "PAIR_SCORES", "POLICY_TERMS", "TERMS", "PairComposition", "PairView", "Part", "REGISTRIES", "Registry",
           "View", "compose", "compose_pairs", "pair_settings_class", "settings_class"]
