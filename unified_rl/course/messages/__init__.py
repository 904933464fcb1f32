"""The message catalogue: {key: (English, Chinese)}, one data module per area, merged here.

A key names its area first ("check.", "nb05.", "w.", "plot.", "nb_grpo." ...); a key defined twice is
an error. Messages are `str.format` templates: a literal brace is doubled ("{{", "}}").
"""

import pkgutil
from importlib import import_module


def _merge():
    merged = {}
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        part = import_module(f"{__name__}.{info.name}").MESSAGES
        twice = set(part) & set(merged)
        if twice:
            raise ValueError(f"message keys defined twice ({info.name}): {sorted(twice)}")
        merged.update(part)
    return merged


CATALOGUE = _merge()
