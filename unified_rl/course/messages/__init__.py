"""The message catalogue: {key: (English, Chinese)}, one data module per area, merged here.

A key names its area first ("check.", "nb05.", "w.", "plot.", "nb_grpo." ...); a key defined twice is an error.
"""

from importlib import import_module

_AREAS = ("core", "plots", "widgets", "widgets2", "nb_helpers", "nb_helpers2",
          "ex_a", "ex_b", "ex_c", "ex_d")


def _merge():
    merged = {}
    for area in _AREAS:
        try:
            part = import_module(f"{__name__}.{area}").MESSAGES
        except ModuleNotFoundError as e:
            if e.name != f"{__name__}.{area}":
                raise
            continue
        twice = set(part) & set(merged)
        if twice:
            raise ValueError(f"message keys defined twice ({area}): {sorted(twice)}")
        merged.update(part)
    return merged


CATALOGUE = _merge()
