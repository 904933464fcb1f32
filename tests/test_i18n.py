"""The course speaks English and Chinese: one catalogue, both languages for every message, the same fields.

set_language("zh") must change what an exercise, a hint, a widget and a plot say, and set_language("en")
must give back today's English byte for byte (the English notebooks assert on some of it).
"""

import os
import re
import subprocess
import sys
import warnings

import pytest

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")

from unified_rl.course import cjk_font, i18n  # noqa: E402
from unified_rl.course.i18n import CATALOGUE, Msg, fields, get_language, set_language, t  # noqa: E402

HAN = re.compile(r"[\u4e00-\u9fff]")


@pytest.fixture(autouse=True)
def english_after():
    yield
    set_language("en")


def test_every_message_has_both_languages():
    assert len(CATALOGUE) > 300
    missing = [k for k, (en, zh) in CATALOGUE.items() if not (isinstance(en, str) and en and isinstance(zh, str) and zh)]
    assert not missing, f"messages without both languages: {missing}"


def _fields_differ(catalogue):
    return {k: (fields(en), fields(zh)) for k, (en, zh) in catalogue.items() if fields(en) != fields(zh)}


def test_format_fields_agree():
    """The {fields} of the English and the Chinese message are the same names, for every key."""
    bad = _fields_differ(CATALOGUE)
    assert not bad, f"fields differ between en and zh: {bad}"


def test_fields_detects_a_missing_field():
    """The check above can fail: a Chinese message that drops a field is caught."""
    key = "check.define_var"
    en, zh = CATALOGUE[key]
    assert list(_fields_differ({**CATALOGUE, key: (en, zh.replace("{var}", ""))})) == [key]


def _uncommented(span):
    """A code span as code: a fenced block's `#` comments and the spaces before them dropped."""
    return re.sub(r"[ \t]*#[^\n]*", "", span) if span.startswith("`python") else span


def test_uncommented_keeps_code_and_drops_only_comments():
    assert _uncommented("`python\nx = 1  # one\n`") == _uncommented("`python\nx = 1  # 一\n`") == "`python\nx = 1\n`"
    assert _uncommented("`python\nx = 2  # one\n`") != _uncommented("`python\nx = 1  # one\n`")


def test_chinese_is_chinese_and_keeps_identifiers():
    """Most Chinese messages contain Chinese; every code span of the English survives into the Chinese
    (a code block's comments aside: they are translated, as in the twins)."""
    han = sum(bool(HAN.search(zh)) for _, zh in CATALOGUE.values())
    assert han > 0.8 * len(CATALOGUE)
    code = lambda text: [_uncommented(s) for s in re.findall(r"`[^`]+`", text)]  # noqa: E731
    lost = {k: s for k, (en, zh) in CATALOGUE.items() for s in code(en) if s not in code(zh)}
    assert not lost, f"code spans not kept in the Chinese: {lost}"


def test_language_switch_and_bad_language():
    assert get_language() == "en" and t("check.correct") == "Correct"
    set_language("zh")
    assert get_language() == "zh" and t("check.correct") == "正确"
    with pytest.raises(ValueError, match="'fr'"):
        set_language("fr")
    assert get_language() == "zh"  # a refused language changes nothing


def test_unknown_key_and_missing_field_are_clear_errors():
    with pytest.raises(ValueError, match="unknown message key 'no.such.key'"):
        t("no.such.key")
    with pytest.raises(ValueError, match="unknown message key"):
        Msg("no.such.key")
    with pytest.raises(ValueError, match="needs the field 'var'"):
        t("check.define_var")


def _language_in_a_fresh_process(value):
    env = {**os.environ, "UNIFIED_RL_LANG": value, "PYTHONPATH": os.pathsep.join(sys.path)}
    return subprocess.run([sys.executable, "-c", "from unified_rl.course import i18n; print(i18n.get_language())"],
                          env=env, capture_output=True, text=True, timeout=120)


def test_environment_variable_sets_the_language():
    """UNIFIED_RL_LANG is read at import (in a fresh process: reloading i18n here would orphan the
    messages other modules already hold)."""
    zh = _language_in_a_fresh_process("zh")
    assert zh.returncode == 0 and zh.stdout.strip() == "zh", zh.stderr
    bad = _language_in_a_fresh_process("klingon")
    assert bad.returncode != 0 and "ValueError: unknown language 'klingon'" in bad.stderr


def _feedback(capsys):
    """Verdict, hint and solution of a representative exercise, as printed outside a notebook."""
    from unified_rl.course.ex.nb00_paradigm import q1, q2
    q1.check("data source")
    q1.check("gradient coefficient")
    q2.check(None)
    q2.hint(1)
    q2.hint(2)
    q1.solution()
    q2.solution()
    return capsys.readouterr().out


def test_exercise_feedback_follows_the_language(capsys, monkeypatch):
    monkeypatch.delenv("UNIFIED_RL_SOLUTIONS", raising=False)
    english = _feedback(capsys)
    assert "Q1: GRPO vs online RFT: Incorrect: both sample the current policy (`PolicySamples`)" in english
    assert "Q1: GRPO vs online RFT: Correct\n" in english and "Hint 1/2: The surrogate is" in english
    set_language("zh")
    chinese = _feedback(capsys)
    assert "不正确：两者都从当前策略采样（`PolicySamples`）" in chinese and "：正确\n" in chinese
    assert "提示 1/2：替代损失" in chinese and "尚未作答" in chinese
    assert "d_loss_d_logp = -1 / (2 * 4)" in chinese  # the code of a solution is not translated
    assert not re.search(r"\b(Correct|Incorrect|Hint|Solution)\b", chinese)
    set_language("en")
    assert _feedback(capsys) == english  # byte-identical English again


def test_a_wrong_value_and_a_function_checker_speak_chinese():
    from unified_rl.course.ex.nb00_paradigm import q2, q3
    set_language("zh")
    assert q2.check(-0.25).message == "不正确：-0.25 太小了"
    msg = q3.check(lambda logp, coef, mask: (coef * logp * mask).sum()).message
    assert msg.startswith("不正确：在用例 '") and HAN.search(msg)
    set_language("en")
    assert q2.check(-0.25).message == "Incorrect: -0.25 is too low"


def test_widget_label_and_plot_title_follow_the_language():
    from unified_rl.course import plots, widgets
    ex_en = widgets.dpo_explorer()
    assert ex_en.title == "DPO: the gradient coefficient"
    en_label = ex_en.controls["margin"].description or ex_en.controls["margin"].url_label
    set_language("zh")
    ex_zh = widgets.dpo_explorer()
    assert ex_zh.title == "DPO：梯度系数"
    assert "间隔" in (ex_zh.controls["margin"].description or ex_zh.controls["margin"].url_label)
    assert "被选中 token 上的 GC（+c）" in ex_zh.table.value  # a row of its table
    fig = plots.plot_training([{"step": 0, "accuracy": 0.5}, {"step": 1, "accuracy": 0.7}], keys=("accuracy",))
    ax = fig.axes[0]
    assert ax.get_title() == "批次样本的准确率" and ax.get_xlabel() == "步数"
    set_language("en")
    assert (widgets.dpo_explorer().controls["margin"].description or
            widgets.dpo_explorer().controls["margin"].url_label) == en_label == "margin x⁺ − x⁻"
    fig = plots.plot_training([{"step": 0, "accuracy": 0.5}], keys=("accuracy",))
    assert fig.axes[0].get_title() == "accuracy of the batch's samples" and fig.axes[0].get_xlabel() == "step"


def test_chinese_plots_use_a_cjk_font_and_restore_english(monkeypatch):
    """In Chinese, a Chinese title with the course's symbols renders without a missing glyph (a CJK font,
    the machine's or the package's own, after the usual sans-serif one); English restores the fonts."""
    from matplotlib import rcParams
    from matplotlib.figure import Figure
    before = {k: rcParams[k] for k in ("font.family", "font.sans-serif")}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        set_language("zh")
        set_language("en")
        set_language("zh")
        fig = Figure()
        fig.subplots().set(title="梯度系数 GC（间隔 x⁺ − x⁻，β·σ）", xlabel=t("plot.step"))
        fig.canvas.draw()
    messages = [str(w.message) for w in caught]
    assert rcParams["font.family"][-1] == cjk_font.SHIPPED_FAMILY
    assert not [m for m in messages if "missing from font" in m or "中文字体" in m], messages
    set_language("en")
    assert {k: rcParams[k] for k in before} == before


def test_no_cjk_font_at_all_is_said_once_in_chinese(monkeypatch):
    """With no CJK font on the machine and the package's file gone, one warning says, in Chinese, what to
    install, however often the language is switched (once per process: the test resets that)."""
    monkeypatch.setitem(i18n._state, "warned", False)
    monkeypatch.setattr(i18n, "cjk_families", lambda: [])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for lang in ("zh", "en", "zh"):
            set_language(lang)
    said = [str(w.message) for w in caught if "中文字体" in str(w.message)]
    set_language("en")
    assert len(said) == 1 and "fonts-wqy-microhei" in said[0], said
