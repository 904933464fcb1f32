"""The course's languages: one gettext catalogue, English and Chinese (中文版), English the fallback.

Every sentence the course modules show a learner (exercise feedback, hints, solutions' prose, widget
labels, plot titles and axis labels, the nb_* helpers' printed sentences) is a key of the catalogue,
looked up by `t(key, **fields)` in the current language: its English is in
`locale/en/LC_MESSAGES/unified_rl.mo`, its Chinese in `locale/zh/...`, both compiled from the .po beside
them (`unified_rl.course.catalogue`). The notebooks' printed sentences are `tr("English template", **fields)`:
the template is the msgid. The language is "en" unless the environment variable UNIFIED_RL_LANG names
another at import, or `set_language` is called (the Chinese notebooks' first import cell does).

Text fixed when a module is imported (an exercise's title, hints, solution) is a `Msg`: it is looked
up each time it is shown, so switching the language changes what an exercise says next.
The core's prose (a derivation's notes, claims and case names) is `unified_rl.text.Text`: English
as a value, shown in Chinese through the translator `set_language("zh")` installs (its template is a
msgid of the zh catalogue). Equations, numbers and identifiers are never translated; a message's
{fields} are the same in both languages (tests/test_i18n.py). In Chinese, plots use a CJK font (`_use_cjk_font`: the machine's, else the one the package ships).
"""

import os
import warnings
from types import MappingProxyType

from .. import text as core_text
from .catalogue import COMPILE, fields, mo_entries, path  # noqa: F401 (fields: i18n's, for its users)
from .cjk_font import cjk_families


def _read(lang):
    """{msgid: msgstr} of language `lang`'s compiled catalogue, read by gettext."""
    try:
        with open(path(lang, "mo"), "rb") as f:
            return mo_entries(f.read())
    except FileNotFoundError:
        raise FileNotFoundError(f"the course's catalogue {path(lang, 'mo')} is missing: build it with {COMPILE}") from None


_ENGLISH, _CHINESE = _read("en"), _read("zh")
# read-only views: {key: (English, Chinese)} of the keyed messages (the en catalogue's msgids), and
# {English template: Chinese} of the sentences (the zh catalogue's other msgids)
CATALOGUE = MappingProxyType({key: (en, _CHINESE.get(key, "")) for key, en in _ENGLISH.items()})
SENTENCES = MappingProxyType({en: zh for en, zh in _CHINESE.items() if en not in _ENGLISH})
LANGUAGES = ("en", "zh")
_state = {"lang": "en", "rc": None, "warned": False}


def _check_language(lang):
    if lang not in LANGUAGES:
        raise ValueError(f"unknown language {lang!r}: use one of {', '.join(map(repr, LANGUAGES))}")
    return lang


def get_language():
    """The current language, "en" or "zh"."""
    return _state["lang"]


def set_language(lang):
    """Speak `lang` ("en" or "zh") from now on; in Chinese, plots switch to a CJK font (back on "en")."""
    _check_language(lang)
    _state["lang"] = lang
    core_text.set_translator(_translate if lang == "zh" else None)  # the core's Text: derivations' notes
    _use_cjk_font(lang == "zh")
    return lang


def _translate(template, values):
    """The Chinese of a core `unified_rl.text.Text` (its template looked up in SENTENCES), or None (English)."""
    zh = SENTENCES.get(template)
    if zh is None:
        return None
    try:
        return zh.format(**values)
    except (KeyError, IndexError) as e:
        raise ValueError(f"the Chinese of {template!r} needs the field {e}; given {sorted(values)}") from None


def t(key, **values):
    """The message `key` in the current language (English where it has no Chinese), formatted with `values`."""
    entry = CATALOGUE.get(key)
    if entry is None:
        raise ValueError(f"unknown message key {key!r} (not in the catalogue, unified_rl/course/locale)")
    en, zh = entry
    text = zh if _state["lang"] == "zh" and zh else en
    try:
        return text.format(**values)
    except (KeyError, IndexError) as e:
        raise ValueError(f"message {key!r} needs the field {e}; given {sorted(values)}") from None


def tr(english, **values):
    """A sentence a notebook prints, in the current language: `english` is the sentence itself (a
    `str.format` template; gettext's msgid), its Chinese is in the zh catalogue.

    The notebooks' code is the same in both editions (tests/test_zh_edition.py), so a sentence they
    print is written `print(tr("mean {mean:.4f}", mean=m))`: in English it is the template, formatted;
    in Chinese its translation, formatted with the same fields. tests/test_sentences.py checks that
    every tr() in a notebook has its translation with the same fields, and that no printed English
    sentence bypasses tr()."""
    if not isinstance(english, str):
        raise ValueError(f"tr() takes the English sentence as a str, got {type(english).__name__}")
    text = SENTENCES.get(english, english) if _state["lang"] == "zh" else english
    try:
        return text.format(**values)
    except (KeyError, IndexError) as e:
        raise ValueError(f"sentence {english!r} needs the field {e}; given {sorted(values)}") from None


def t_of(key, english):
    """`english`, a text read from the package (a method's summary, a docstring's first line), in the
    current language: the message `key` while its English is this very text, else `english` itself (a
    text edited in the package shows in English until its catalogue entry follows; tests/test_package_text.py)."""
    entry = CATALOGUE.get(key)
    if entry is None or entry[0].format() != english:
        return english
    return t(key)


class Msg:
    """A message looked up when shown (str(), f-strings), so that it follows the current language."""

    __slots__ = ("key", "values")

    def __init__(self, key, **values):
        if key not in CATALOGUE:
            raise ValueError(f"unknown message key {key!r} (not in the catalogue, unified_rl/course/locale)")
        self.key, self.values = key, values

    def __str__(self):
        return t(self.key, **self.values)

    def __format__(self, spec):
        return format(str(self), spec)

    def __repr__(self):
        return f"Msg({self.key!r})"


def text(x):
    """A Msg as text in the current language; anything else as it is."""
    return str(x) if isinstance(x, Msg) else x


def _use_cjk_font(on):
    """Add CJK fonts to matplotlib's font families as a fallback (on), or restore them (off).

    The machine's CJK font if it has one, else the subset the package ships (`cjk_font`); if even that
    file is gone, say once, in Chinese, what to install, and go on (Chinese labels would show as boxes)."""
    try:
        import matplotlib
    except ImportError:  # plots need matplotlib (the course extra); text works without it
        return
    rc = matplotlib.rcParams
    if not on:
        if _state["rc"] is not None:
            rc.update(_state["rc"])
            _state["rc"] = None
        return
    found = cjk_families()
    if not found:
        if not _state["warned"]:
            _state["warned"] = True
            warnings.warn("找不到中文字体：图中的中文会显示成方框（请安装一个，例如 "
                          "`apt-get install fonts-noto-cjk` 或 `fonts-wqy-microhei`）", stacklevel=3)
        return
    if _state["rc"] is None:
        _state["rc"] = {k: rc[k] for k in ("font.family",)}
    # the usual fonts first (Latin, Greek and math glyphs look as in English), the CJK font for what they lack:
    # matplotlib falls back glyph by glyph along font.family (a generic name like "sans-serif" is one entry)
    family = [f for f in _state["rc"]["font.family"] if f not in found]
    rc["font.family"] = family + found


_env = os.environ.get("UNIFIED_RL_LANG", "").strip()
if _env:
    set_language(_check_language(_env))
