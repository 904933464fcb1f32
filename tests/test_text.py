"""The derivations' prose (notes, claim statements, case names) is `unified_rl.text.Text`: the English
str as a value, shown in Chinese once the course sets the language to "zh".

Every Text of every derivation must have Chinese with the same {fields}; its English value must be
byte for byte what the derivations printed before they returned Text (fixed strings below); in
Chinese print() shows the translation while the value (==, hash, repr, +, JSON, pickle) stays English.
"""

import copy
import functools
import json
import pickle
import re
import subprocess
import sys

import pytest

from unified_rl import derivations, text
from unified_rl.course import catalogue, i18n
from unified_rl.course.i18n import SENTENCES as ALL_SENTENCES
from unified_rl.course.to_translate import TO_TRANSLATE
from unified_rl.text import Text

SENTENCES = catalogue.sentence_groups()["derivations"]  # the zh catalogue's area #: derivations
HAN = re.compile(r"[\u4e00-\u9fff]")
WORDS = re.compile(r"[A-Za-z]{2,}[,:;]?\s+(?:[A-Za-z]{2,}|[a-z])\b")  # as tests/test_sentences.py


@pytest.fixture(autouse=True)
def english_after():
    yield
    i18n.set_language("en")


def _walk(t, out):
    out.append(t)
    for v in t.fields.values():
        if isinstance(v, Text):
            _walk(v, out)


def shown(d):
    """Every piece of prose of a Derivation: (where, value) for its notes, claim statements, case names."""
    return ([(f"{d.method} note {i}", n) for i, n in enumerate(d.notes)]
            + [(f"{d.method} claim {i}", c) for i, (c, _) in enumerate(d.claims)]
            + [(f"{d.method} case {i}", c) for i, (c, _) in enumerate(d.cases)])


@functools.lru_cache(maxsize=None)
def all_texts():
    """Every derivation (n_tokens 1, 2 and 3, as the notebooks and tests derive them) and its Text, nested too.
    Derived once, by the first test that asks (seconds of sympy: not while pytest collects this file)."""
    found = []
    for name in derivations.NAMES:
        for n in (1, 2, 3):
            for where, value in shown(derivations.derive(name, n)):
                found.append((where, value))
    return found



def problems(texts, sentences, to_translate=TO_TRANSLATE):
    """Readable lines for every Text whose template has no Chinese (and is not listed as still to
    translate, unified_rl/course/to_translate.py) or a Chinese with other fields."""
    out = []
    for where, value in texts:
        if not isinstance(value, Text):
            out.append(f"{where}: a plain {type(value).__name__}, not a Text: {value!r}")
            continue
        nested = []
        _walk(value, nested)
        for t in nested:
            zh = sentences.get(t.template)
            if zh is None:
                if t.template not in to_translate:
                    out.append(f"{where}: no Chinese for {t.template!r} (translate it in "
                               "unified_rl/course/locale/zh/LC_MESSAGES/unified_rl.po, #: derivations, "
                               "or list it in unified_rl/course/to_translate.py)")
            elif i18n.fields(zh) != i18n.fields(t.template):
                out.append(f"{where}: fields differ: {t.template!r} {i18n.fields(t.template)} vs "
                           f"{zh!r} {i18n.fields(zh)}")
            elif set(i18n.fields(t.template)) != set(t.fields):
                out.append(f"{where}: {t.template!r} is given {sorted(t.fields)}")
    return sorted(set(out))


def test_every_text_of_every_derivation_has_chinese_with_the_same_fields():
    ALL = all_texts()
    assert len(ALL) > 300  # 27 derivations x 3 lengths, 3-40 pieces of prose each
    found = problems(ALL, SENTENCES)
    assert not found, "\n".join(found)


def test_every_chinese_is_used_and_agrees_with_the_notebook_sentences():
    used = {t.template for _, v in all_texts() for t in (lambda acc: (_walk(v, acc), acc)[1])([])}
    assert not set(SENTENCES) - used, f"translations nothing uses: {sorted(set(SENTENCES) - used)}"
    assert all(ALL_SENTENCES[en] == zh for en, zh in SENTENCES.items())  # the merged table holds the same
    no_han = [en for en, zh in SENTENCES.items() if WORDS.search(en) and not HAN.search(zh)]
    assert not no_han, f"translations without Chinese: {no_han}"


def test_the_check_reports_a_missing_or_changed_translation():
    dpo = shown(derivations.derive("dpo", 2))
    missing = {k: v for k, v in SENTENCES.items() if k != "rejected"}
    assert any("no Chinese for 'rejected'" in p for p in problems(dpo, missing))
    assert not problems(dpo, missing, to_translate={"rejected": "dpo"})  # listed as still to translate: accepted
    claim = "exact / printed = beta on {side} tokens once eq 14's per-token arguments are the sequence means"
    renamed = {**SENTENCES, claim: SENTENCES[claim].replace("{side}", "{sides}")}
    assert any("fields differ" in p and "sides" in p for p in problems(dpo, renamed))
    assert any("not a Text" in p for p in problems([("x", "plain English note")], SENTENCES))
    assert not problems(dpo, SENTENCES)


# the old f-string output of the derivations, copied from the code before it returned Text
BEFORE = [
    ("sft", 3, "cases", 0, "for all values"),
    ("sft", 3, "notes", 0, "Exact: the GC of eq 7 is 1 on every token."),
    ("dpo", 3, "claims", 1, "exact / printed = beta on rejected tokens once eq 14's per-token arguments "
                            "are the sequence means"),
    ("dpo", 3, "notes", 2, "Eq 12-14 condition on o_{<=t}; o_{<t} is meant."),
    ("ppo", 3, "claims", 1, "at pi_old = pi_theta token 2's GC is A_t (eq 17, 18)"),
    ("ppo_clip", 1, "cases", 8, "A = 0, r < 1-eps"),
    ("grpo", 3, "claims", 4, "at pi_old = pi_theta token 2,2's GC is eq 21"),
    ("grpo", 3, "notes", 3, "Eq 20 writes {o_t}_{t=1}^G for {o_i}_{i=1}^G and drops q from pi(o_{i,t} | o_{i,<t}); "
                            "eq 19 conditions on o_{i,<=t} where o_{i,<t} is meant."),
    ("aggregation_token_mean", 2, "notes", 0, "Per-token terms A_i ell_{i,t} aggregated by token-mean; two responses "
     "of 2 and 3 tokens. The GC is A_i times the row factor w_i of parts/aggregations.py."),
    ("dapo", 1, "cases", 4, "A < 0, 1-eps_low < r < 1+eps_high"),
    ("gspo", 2, "claims", 1, "response token 4 has the GC of token 3"),
    ("dr_grpo", 1, "claims", 2, "at pi_old = pi_theta token 3's GC is |o_i|/L (R_i - mean R + KL term)"),
    ("reinforce_pp", 3, "claims", 2, "at pi_old = pi_theta token 3's GC is the normalised return A_t"),
    ("kl_k3_loss", 1, "claims", 1, "E_pi[GC grad log pi] = -beta grad KL forward (d/dz_2)"),
    ("kl_k1_loss", 1, "claims", 2, "E_pi[GC grad log pi] = 0 (d/dz_3)"),
    ("kl_k1_loss", 1, "notes", 0, "The claims sum over every token of a 3-token vocabulary (pi = softmax(z), "
                                  "pi_ref = softmax(w)), on-policy: the expected gradient is zero."),
    ("kl_k2_loss", 1, "notes", 0, "The claims sum over every token of a 3-token vocabulary (pi = softmax(z), "
     "pi_ref = softmax(w)), on-policy: the expected gradient is minus beta times the gradient of the reverse KL."),
    ("kto", 3, "claims", 2, "the GC is the same on every desirable token (token 3 = token 1)"),
    ("simpo", 2, "claims", 2, "the GC is the same on every rejected token (token 2 = token 1)"),
]


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("name, n, part, i, old", BEFORE, ids=[f"{b[0]}-{b[2]}{b[3]}" for b in BEFORE])
def test_the_english_value_is_the_old_output(name, n, part, i, old, lang):
    i18n.set_language(lang)  # the value does not depend on the language it is derived in
    item = getattr(derivations.derive(name, n), part)[i]
    value = item if part == "notes" else item[0]
    assert isinstance(value, Text) and value == old and text.english(value) == old
    i18n.set_language("en")
    assert str(value) == old and f"{value}" == old and type(str(value)) is str


def test_in_chinese_print_shows_chinese_and_english_again_after(capsys):
    i18n.set_language("zh")
    for where, value in all_texts():
        print(value)
        out = capsys.readouterr().out.rstrip("\n")
        if value.template in TO_TRANSLATE and value.template not in SENTENCES:  # no Chinese yet: shown in English
            assert out == text.english(value), where
            continue
        zh = SENTENCES[value.template]
        if WORDS.search(value.template):
            assert HAN.search(out) and out != value, (where, out)
        assert out == f"{value}" == str(value), where
        assert out == zh.format(**value.fields), where
    dpo = derivations.derive("dpo", 2)
    print("proved:", dpo.claims[0][0])  # a nested word (chosen) is shown in Chinese too
    assert "被选中" in capsys.readouterr().out
    i18n.set_language("en")
    for where, value in all_texts():
        print(value)
        assert capsys.readouterr().out == text.english(value) + "\n", where


def test_a_text_is_its_english_str_in_every_other_way():
    i18n.set_language("zh")
    value = derivations.derive("dpo", 2).claims[0][0]
    english = "exact / printed = beta on chosen tokens once eq 14's per-token arguments are the sequence means"
    assert str(value) != english and HAN.search(str(value))
    assert value == english and hash(value) == hash(english) and repr(value) == repr(english)
    assert value + "!" == english + "!" and value[:5] == english[:5] and len(value) == len(english)
    assert json.dumps(value) == json.dumps(english) and json.dumps({"c": value}) == json.dumps({"c": english})
    back = pickle.loads(pickle.dumps(value))
    assert back == english and type(back) is str
    assert copy.deepcopy(value) == english and value in {english} and english in (value,)
    assert "-".join([value]) == english  # str operations see the English value
    assert f"{value:.4}" == str(value)[:4]


def test_the_translator_hook():
    assert text.translate("for all values", {}) is None  # English: none installed
    i18n.set_language("zh")
    assert text.translate("for all values", {}) == "对所有取值"
    assert text.translate("not a derivation sentence", {}) is None
    assert str(Text("not a derivation sentence {x}", x=1)) == "not a derivation sentence 1"  # no Chinese: English
    i18n.set_language("en")
    assert text.translate("for all values", {}) is None
    with pytest.raises(ValueError, match="callable"):
        text.set_translator("zh")
    with pytest.raises(ValueError, match="needs the field"):
        Text("token {t}'s GC")
    with pytest.raises(ValueError, match="template must be a str"):
        Text(3)
    text.set_translator(lambda template, fields: "[{x}]".format(**fields) if "x" in fields else "Z")
    try:  # a nested Text is translated inside its translated sentence; the value stays English
        nested = Text("value {x}", x=Text("for all values"))
        assert str(nested) == "[Z]" and nested == "value for all values"
    finally:
        text.set_translator(None)


def test_a_chinese_with_a_wrong_field_is_a_clear_error(monkeypatch):
    monkeypatch.setattr(i18n, "SENTENCES", {**i18n.SENTENCES, "token {t} test": "token {k} 测试"})
    i18n.set_language("zh")
    with pytest.raises(ValueError, match="needs the field 'k'"):
        str(Text("token {t} test", t=1))


def test_the_core_loads_no_course_module():
    code = ("import sys, unified_rl.derivations as d; d.derive('dpo'); "
            "print(sorted(m for m in sys.modules if m.startswith('unified_rl.course')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]", out.stdout
