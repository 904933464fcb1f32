"""What the package prints at run time speaks Chinese in the Chinese edition, English unchanged:
a derivation's LaTeX row labels, the step-cap message and the SFT cache's messages on stderr
(`unified_rl.text.Text`, Chinese in the zh catalogue's area #: runtime)."""

import re
from pathlib import Path

import pytest

from unified_rl import derivations
from unified_rl.course import catalogue, i18n

SENTENCES = catalogue.sentence_groups()["runtime"]  # the zh catalogue's area #: runtime

PACKAGE = Path(__file__).resolve().parents[1] / "unified_rl"
HAN = re.compile(r"[\u4e00-\u9fff]")


@pytest.fixture(autouse=True)
def english_after():
    yield
    i18n.set_language("en")


def test_every_runtime_sentence_has_chinese_with_its_fields_and_is_used():
    """Each entry is Chinese with the English {fields}, and its English template is in the package's code."""
    code = "".join(p.read_text(encoding="utf-8") for p in PACKAGE.rglob("*.py") if "course" not in p.parts)
    flat = re.sub(r'"\s*\n\s*"', "", code)  # implicitly joined literals read as one
    for en, zh in SENTENCES.items():
        assert HAN.search(zh) and i18n.fields(zh) == i18n.fields(en), (en, zh)
        assert f'"{en}"' in flat or f"'{en}'" in flat, f"nothing in the package prints {en!r}"


def test_a_derivations_display_labels_its_rows_in_the_current_language():
    d = derivations.derive("dpo", 2)
    assert d.printed is not None  # DPO's printed eq 14 differs from the derived GC: both rows show
    english = d.latex()
    assert r"\text{by hand}" in english and r"\text{printed}" in english
    i18n.set_language("zh")
    chinese = d.latex()
    assert r"\text{手推}" in chinese and r"\text{论文印出}" in chinese and "by hand" not in chinese
    assert chinese.replace("手推", "by hand").replace("论文印出", "printed") == english


def test_the_step_cap_and_the_sft_cache_speak_chinese_on_stderr(tmp_path, monkeypatch, capsys):
    """A capped tiny GRPO run that builds its SFT model: both messages in Chinese, the same facts."""
    from unified_rl.trainer import train
    monkeypatch.setenv("UNIFIED_RL_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("UNIFIED_RL_MAX_STEPS", "1")
    i18n.set_language("zh")
    train("grpo", preset="tiny", steps=2, out=str(tmp_path / "g"), progress=False)
    err = capsys.readouterr().err
    assert "UNIFIED_RL_MAX_STEPS=1：这次 grpo 运行只训练 2 步中的 1 步" in err, err
    assert "正在构建预设 tiny、随机种子 0 的 SFT 模型缓存（只在第一次运行时）" in err, err
    assert "caps this" not in err and "building the SFT" not in err
