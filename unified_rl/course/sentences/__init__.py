"""The notebooks' printed sentences in Chinese: {English template: Chinese template}, one module per notebook.

`i18n.tr(english, **fields)` looks a sentence up here (English is the fallback, and the key). A
sentence printed by two notebooks may be listed in both, with the same Chinese; listing it with two
different translations is an error. The {fields} and their format specs are the English ones
(tests/test_sentences.py); a literal brace is doubled ("{{", "}}").
"""

import pkgutil
from importlib import import_module


def _merge():
    merged = {}
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        for en, zh in import_module(f"{__name__}.{info.name}").SENTENCES.items():
            if merged.get(en, zh) != zh:
                raise ValueError(f"sentence {en!r} has two translations ({info.name}): {merged[en]!r} and {zh!r}")
            merged[en] = zh
    return merged


SENTENCES = _merge()
