"""A composition in words, for the course's tables and explorers: its parts by name, their summaries.

`label(method)` writes a method's coefficient as the parts it composes ("grpo × vanilla × k3", the KL's place
and a non-default aggregation named), `summary(part)` a part's one-line summary in the current language
(catalogue key part.summary.AXIS.NAME, the catalogue's area `#: parts`; English while it has none).
"""

from unified_rl import parts
from unified_rl.course.i18n import t, t_of

DEFAULT_AGGREGATION = "seq-mean-token-mean"  # DeepSeekMath's eq 19: the label names any other


def label(method, aggregation=None):
    """'grpo × vanilla × k3' for a Method built from the policy-gradient parts (or a parts.Composition); None for
    one that is not (DPO and its family: their tables show their equations). aggregation: the setting shown
    (default: the method's own)."""
    comp = method if isinstance(method, parts.Composition) else getattr(method, "composition", None)
    if not isinstance(comp, parts.Composition):
        return None
    pieces = [comp.advantage, comp.policy]
    if comp.kl is not None:
        pieces.append(comp.kl if comp.kl_in == "loss" else t("parts.kl_in_reward", kl=comp.kl))
    if aggregation is None:
        hp = comp.settings if comp.settings is not None else getattr(method, "hparams", None)
        aggregation = getattr(hp, "aggregation", DEFAULT_AGGREGATION)
    if aggregation != DEFAULT_AGGREGATION:
        pieces.append(aggregation)
    return " × ".join(pieces)


def summary(part):
    """A Part's summary in the current language (its English where the catalogue has no entry for it)."""
    return t_of(f"part.summary.{part.axis}.{part.name}", part.summary)
