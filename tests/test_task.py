"""The addition task and its character-level tokenizer."""

import random

import pytest

from unified_rl.task import (
    Problem, TaskConfig, make_problem, make_splits, parse_answer, parse_steps, step_spans,
)
from unified_rl.tokenizer import build_tokenizer, encode_prompts, load_tokenizer


def column_sums_from_prompt(prompt: str) -> list[str]:
    """Independent reference: read the prompt's digit strings and add column by column."""
    numbers = prompt.rstrip("=").split("+")
    width = len(numbers[0])
    steps, carry = [], 0
    for col in range(width - 1, -1, -1):
        s = carry + sum(int(n[col]) for n in numbers)
        steps.append(str(s))
        carry = s // 10
    return steps + ([str(carry)] if carry else [])


def test_worked_examples():
    cfg = TaskConfig(digits=2, n_operands=2)
    p = make_problem((47, 85), cfg)
    assert (p.prompt, p.steps, p.answer) == ("47+85=", ("12", "13", "1"), "132")
    assert p.solution == "12;13;1;=132"
    assert make_problem((23, 45), cfg).solution == "8;6;=68"
    assert make_problem((0, 7), cfg).solution == "7;0;=7"  # zero-padded prompt, no leading zero
    assert make_problem((0, 7), cfg).prompt == "00+07="
    p3 = make_problem((99, 99, 99), TaskConfig(digits=2, n_operands=3))
    assert p3.solution == "27;29;2;=297"


@pytest.mark.parametrize("digits,n_operands", [(1, 2), (2, 2), (3, 2), (2, 3), (2, 5)])
def test_steps_and_answer_match_independent_arithmetic(digits, n_operands):
    rng = random.Random(digits * 10 + n_operands)
    cfg = TaskConfig(digits, n_operands)
    for _ in range(300):
        ops = tuple(rng.randrange(10**digits) for _ in range(n_operands))
        p = make_problem(ops, cfg)
        assert int(p.answer) == sum(ops) and p.answer == str(int(p.answer))
        assert list(p.steps) == column_sums_from_prompt(p.prompt)
        assert parse_answer(p.solution) == p.answer
        assert parse_steps(p.solution) == list(p.steps)
        # the answer is readable off the steps: final carry, then each column's last digit
        reread = (p.steps[-1] if len(p.steps) > digits else "") + "".join(
            s[-1] for s in reversed(p.steps[:digits]))
        assert str(int(reread)) == p.answer


def test_bad_problems_raise():
    cfg = TaskConfig()
    for ops in [(1,), (1, 2, 3), (100, 1), (-1, 3), (1.5, 2)]:
        with pytest.raises(ValueError):
            make_problem(ops, cfg)
    for kw in [dict(digits=0), dict(n_operands=1), dict(digits=2.0)]:
        with pytest.raises(ValueError):
            TaskConfig(**kw)


def test_splits_disjoint_deterministic_and_bounded():
    cfg = TaskConfig(digits=2)
    train, test = make_splits(cfg, 500, 200, seed=3)
    assert len(train) == 500 and len(test) == 200
    keys = [p.operands for p in train + test]
    assert len(set(keys)) == 700  # distinct, so train and test are disjoint
    again = make_splits(cfg, 500, 200, seed=3)
    assert [p.operands for p in again[0] + again[1]] == keys
    other = make_splits(cfg, 500, 200, seed=4)
    assert [p.operands for p in other[0]] != [p.operands for p in train]
    small = TaskConfig(digits=1)  # 100 problems in all
    tr, te = make_splits(small, 60, 40, seed=0)
    assert {p.operands for p in tr + te} == {(a, b) for a in range(10) for b in range(10)}
    with pytest.raises(ValueError, match="only 100"):
        make_splits(small, 60, 41, seed=0)
    with pytest.raises(ValueError):
        make_splits(small, -1, 5)


def test_harder_and_max_response_len():
    cfg = TaskConfig(digits=2)
    hard = cfg.harder()
    assert hard == TaskConfig(digits=3, n_operands=2) and cfg.harder(2).digits == 4
    (p,), _ = make_splits(hard, 1, 0, seed=0)
    assert len(p.prompt) == len("123+456=")
    small = TaskConfig(digits=1, n_operands=3)
    brute = max(len(make_problem((a, b, c), small).solution)
                for a in range(10) for b in range(10) for c in range(10))
    assert small.max_response_len == brute


@pytest.mark.parametrize("text,expected", [
    ("12;13;1;=132", "132"),
    ("12;13;1;=132<eos>", "132"),
    ("12;13;1;=132<eos>=999", "132"),
    ("1=2=3", "3"),
    ("=0", "0"),
    ("=0132", "0132"),  # kept as written: a leading zero is a different (wrong) answer
    ("12;13;1;", None),
    ("12;13;1;=", None),
    ("=13a", None),
    ("=1 2", None),
    ("=\u0661\u0662", None),  # Arabic-Indic digits: isdigit() but not an answer
    ("=__import__('os').system('x')", None),
    ("", None),
])
def test_parse_answer(text, expected):
    assert parse_answer(text) == expected


def test_step_spans():
    text = "12;13;1;=132"
    spans = step_spans(text)
    assert spans == [(0, 2), (3, 5), (6, 7)]
    assert [text[a:b] for a, b in spans] == parse_steps(text)
    assert parse_steps("12;13=7") == ["12", "13"]  # "=" closes the last step
    assert parse_steps("12;;3;=1") == ["12", "", "3"]  # an empty step is a (wrong) step
    assert parse_steps("12;13") == ["12"]  # truncated: an unclosed piece is not a step yet
    assert parse_steps("=5") == [] and parse_steps("") == []


def test_tokenizer_round_trip_and_offsets():
    tok = build_tokenizer()
    train, _ = make_splits(TaskConfig(digits=3, n_operands=3), 50, 0, seed=1)
    for p in train:
        text = p.prompt + p.solution
        enc = tok(text, add_special_tokens=False, return_offsets_mapping=True)
        assert len(enc["input_ids"]) == len(text)
        assert enc["offset_mapping"] == [(i, i + 1) for i in range(len(text))]
        assert tok.decode(enc["input_ids"]) == text
    assert tok.unk_token_id not in tok("0123456789+=;", add_special_tokens=False)["input_ids"]
    ids = encode_prompts(tok, ["47+85=", "1+2="])
    assert ids[0][0] == tok.bos_token_id and len(ids[0]) == 7 and len(ids[1]) == 5
    assert tok.decode(ids[0], skip_special_tokens=True) == "47+85="
    specials = {tok.pad_token_id, tok.bos_token_id, tok.eos_token_id, tok.unk_token_id}
    assert len(specials) == 4


def test_tokenizer_save_load(tmp_path):
    tok = build_tokenizer()
    tok.save_pretrained(tmp_path)
    back = load_tokenizer(tmp_path)
    text = "47+85=12;13;1;=132"
    assert back(text)["input_ids"] == tok(text)["input_ids"]
    assert back.decode(back(text)["input_ids"]) == text
    assert (back.bos_token_id, back.eos_token_id, back.pad_token_id) == (
        tok.bos_token_id, tok.eos_token_id, tok.pad_token_id)
    assert encode_prompts(back, ["47+85="]) == encode_prompts(tok, ["47+85="])


def test_load_tokenizer_adds_pad(tmp_path):
    tok = build_tokenizer()
    tok.pad_token = None
    tok.save_pretrained(tmp_path)
    back = load_tokenizer(tmp_path)
    assert back.pad_token_id == back.eos_token_id == tok.eos_token_id


def test_problem_is_hashable_and_frozen():
    p = make_problem((1, 2), TaskConfig())
    assert isinstance(p, Problem) and hash(p) == hash(make_problem((1, 2), TaskConfig()))
    with pytest.raises(Exception):
        p.answer = "4"
