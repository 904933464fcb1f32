"""Prose the core returns (a derivation's notes, claims, case names) that a course can show translated.

`Text(template, **fields)` IS the English string `template.format(**fields)`: comparisons, hashing,
`+`, slicing, `repr`, pickling and JSON all see that English value, so nothing that reads it changes.
It also keeps `template` and `fields`, and when it is shown (`print`, `str()`, f-strings, `format`)
it asks the installed translator for the same sentence in another language. The core installs none;
the course layer does (`unified_rl.course.i18n.set_language`), so the core never imports the course.

A field may itself be a Text (a word chosen at run time, e.g. "chosen" / "rejected"): the English
value formats it in English, a translation formats it translated.
"""

_hook = {"translator": None}


def set_translator(fn):
    """Install fn(template, fields) -> str or None (None: no translation, show English); None removes it."""
    if fn is not None and not callable(fn):
        raise ValueError(f"a translator must be callable or None, got {type(fn).__name__}")
    _hook["translator"] = fn


def translate(template, fields):
    """The installed translator's text for template formatted with fields, or None (show English)."""
    fn = _hook["translator"]
    return None if fn is None else fn(template, fields)


def english(x):
    """x as a plain str in English (a Text's value; anything else through str())."""
    return str.__str__(x) if isinstance(x, str) else str(x)


class Text(str):
    """An English sentence (the str value) that is shown in the current language (`__str__`)."""

    def __new__(cls, template, **fields):
        if not isinstance(template, str):
            raise ValueError(f"a Text template must be a str, got {type(template).__name__}")
        plain = {k: english(v) if isinstance(v, Text) else v for k, v in fields.items()}
        try:
            value = template.format(**plain)
        except (KeyError, IndexError) as e:
            raise ValueError(f"Text {template!r} needs the field {e}; given {sorted(fields)}") from None
        self = super().__new__(cls, value)
        self.template, self.fields = str(template), dict(fields)
        return self

    def __str__(self):
        shown = translate(self.template, self.fields)
        return english(self) if shown is None else shown

    def __format__(self, spec):
        return format(str(self), spec)

    def __repr__(self):
        return str.__repr__(self)

    def __reduce__(self):  # pickles as the English str it is (loads as a plain str)
        return (str, (english(self),))

    def __copy__(self):
        return self

    def __deepcopy__(self, memo):
        return self
