"""The exercises speak Chinese all the way: a choice's options are described in the current language while the
answers it accepts stay the same strings (the notebooks' code is the same in both editions), and the names
of a function checker's test cases, quoted in its verdict, are translated too."""

import importlib
import pkgutil
import re

import pytest

import unified_rl.course.ex as ex_pkg
from unified_rl.course import exercises as E
from unified_rl.course.i18n import Msg, set_language

HAN = re.compile(r"[\u4e00-\u9fff]")
MODULES = sorted(m.name for m in pkgutil.iter_modules(ex_pkg.__path__))
ALL = {f"{m}.{n}": q for m in MODULES for n, q in E.exercises_in(importlib.import_module(f"unified_rl.course.ex.{m}")).items()}
CHOICES = {k: q for k, q in ALL.items() if type(q) is E.ChoiceExercise}
FUNCTIONS = {k: q for k, q in ALL.items() if isinstance(q, E.FunctionExercise) and q.cases}


@pytest.fixture(autouse=True)
def english_after():
    yield
    set_language("en")


def test_every_choice_is_found():
    assert len(CHOICES) >= 8 and "nb04_dpo.q4" in CHOICES and "nb11_preference.q5" in CHOICES


def test_options_print_as_before_in_english():
    """`print(q4.options)` (notebook 04 prints it) is the same text as when the descriptions were plain strings."""
    from unified_rl.course.ex.nb04_dpo import q4
    assert str(q4.options) == (
        "{'margin': 'J depends on a pair only through the margin x+ - x-', "
        "'x_plus': 'J rewards a larger x+ on its own', "
        "'length': '|o+| and |o-| differ, so the normalisation pushes x+ down', "
        "'beta': 'a small beta lets x+ fall; a large beta would hold it up'}")


@pytest.mark.parametrize("key", sorted(CHOICES))
def test_options_are_described_in_chinese_and_keep_their_answers(key):
    q = CHOICES[key]
    english = q.options
    set_language("zh")
    chinese = q.options
    assert list(chinese) == list(english)  # the same answers, in the same order
    assert all(isinstance(d, str) for d in chinese.values())
    for option, description in chinese.items():
        assert (description == english[option] == "") or (HAN.search(description) and description != english[option]), \
            f"{key}: option {option!r} is not described in Chinese: {description!r}"


@pytest.mark.parametrize("key", sorted(CHOICES))
def test_the_same_answers_pass_and_fail_in_both_languages(key):
    """The right option passes and every other option fails, in either language, spelled as the notebook spells it
    or with other case and spaces; what is not an option fails in both."""
    q = CHOICES[key]
    answers = list(q.options) + [f"  {str(o).upper()} " for o in q.options if isinstance(o, str)] + ["no such option", 7]
    verdicts = {}
    for lang in ("en", "zh"):
        set_language(lang)
        verdicts[lang] = [q.check(a).status for a in answers]
    assert verdicts["en"] == verdicts["zh"]
    right = [a for a, s in zip(answers, verdicts["en"]) if s == E.CORRECT]
    assert right == [q.solution_value, f"  {q.solution_value.upper()} "]
    set_language("zh")
    for wrong in [o for o in q.options if o != q.solution_value]:
        with pytest.raises(E.AnswerNotCorrect, match="不正确"):
            q.grade(wrong)
    q.grade(q.solution_value)


def test_a_chinese_option_is_shown_in_chinese():
    from unified_rl.course.ex.nb00_paradigm import q1
    set_language("zh")
    assert q1.options == {"data source": "(q, o) 从哪里来", "reward function": "o 如何打分",
                          "gradient coefficient": "每个 token 的对数概率被推动的力度"}
    assert q1.check("data source").message.startswith("不正确：")


def test_choice_options_may_be_plain_strings_or_messages():
    q = E.ChoiceExercise({"a": "plain", "b": Msg("check.correct")}, "a")
    assert q.options == {"a": "plain", "b": "Correct"}
    set_language("zh")
    assert q.options == {"a": "plain", "b": "正确"} and q.check("a") and not q.check("b")


@pytest.mark.parametrize("key", sorted(FUNCTIONS))
def test_case_names_are_translated(key):
    """A function checker quotes the case its answer failed on: every named case has its Chinese name."""
    q = FUNCTIONS[key]
    english = [where for where, _ in q.inputs()][:len(q.cases)]
    set_language("zh")
    chinese = [where for where, _ in q.inputs()][:len(q.cases)]
    assert all(isinstance(name, Msg) for name in q.cases), f"{key}: a case name that is not a catalogue message"
    assert all(e.startswith("case '") for e in english)
    assert all(c.startswith("用例 '") and HAN.search(c[4:]) for c in chinese), chinese


def test_a_wrong_function_is_told_where_in_chinese():
    from unified_rl.course.ex.nb00_paradigm import q3
    wrong = q3.wrong[0]
    en = q3.check(wrong).message
    set_language("zh")
    zh = q3.check(wrong).message
    assert en.startswith("Incorrect: on case '") and zh.startswith("不正确：在用例 '")
    name = zh.split("'")[1]
    assert HAN.search(name) and name not in en


def _legends(explorer):
    """The legend texts of an explorer's figure at its current controls."""
    _, fig, _ = explorer._compute(**{k: c.value for k, c in explorer.controls.items()})
    return [x.get_text() for ax in fig.axes if ax.get_legend() for x in ax.get_legend().get_texts()]


def test_widget_curve_labels_follow_the_language():
    """Curves keyed by English names (notebooks and tests read the keys) are labelled in the current language."""
    pytest.importorskip("matplotlib")
    from unified_rl.course import nb_basics, widgets_preference
    from unified_rl.course.widgets_policy_gradient import MAX_LEN, policy_explorer
    en = _legends(policy_explorer()) + _legends(nb_basics.length_explorer())
    assert {"GRPO / PPO clip", "CISPO weight", "group-token-mean (DAPO)", f"constant L = {MAX_LEN} (Dr. GRPO)",
            "eq 7 (α = 0)", "token mean (α = 1)"} <= set(en)
    slider = widgets_preference.preference_explorer().controls["logp_rejected"]
    assert (slider.description or slider.url_label) == "mean log π(o⁻) (ORPO)"
    set_language("zh")
    ex = policy_explorer()
    zh = _legends(ex) + _legends(nb_basics.length_explorer())
    assert {"GRPO / PPO 裁剪", "CISPO 权重", "按组的 token 均值（DAPO）", f"常数 L = {MAX_LEN}（Dr. GRPO）",
            "公式 7（α = 0）", "token 均值（α = 1）"} <= set(zh)
    assert not set(zh) & {"GRPO / PPO clip", "CISPO weight", "group-token-mean (DAPO)", "token mean (α = 1)"}
    assert "CISPO 权重" in ex.table.value and "CISPO weight" in ex.data["gc"]  # the data keep their keys
    slider = widgets_preference.preference_explorer().controls["logp_rejected"]
    assert (slider.description or slider.url_label) == "平均 log π(o⁻)（ORPO）"
