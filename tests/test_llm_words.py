"""Tasks in words: the parsers (strict and lenient, never evaluating), the generated sums, GSM8K
from a local file in its Hugging Face format, and the rule reward reading each problem's parser."""

import json

import pytest

from unified_rl import words
from unified_rl.rewards import rule_reward
from unified_rl.task import TaskConfig, make_problem
from unified_rl.words import (GSM8KTask, WordsTask, normalize_number, parse_lenient, parse_strict,
                              task_from_spec)


@pytest.mark.parametrize("text,strict,lenient", [
    ("The answer is 12.", None, "12"),
    ("3 + 4 = 7. So #### 7", "7", "7"),
    ("#### 1,234", "1234", "1234"),
    ("so \\boxed{42} and then 3", "42", "42"),
    ("#### 5 ... \\boxed{6}", "6", "6"),  # the last marked answer
    ("first 10 then -3", None, "-3"),
    ("7.50 dollars", None, "7.5"),
    ("no number here", None, None),
    ("__import__('os').system('echo 5')", None, "5"),  # read as text, never run
    ("", None, None),
])
def test_parsers(text, strict, lenient):
    assert parse_strict(text) == strict
    assert parse_lenient(text) == lenient


def test_normalize_number():
    assert [normalize_number(x) for x in ("007", "3.0", "-0", "1,000", "x1")] == ["7", "3", "0", "1000", None]


def test_words_splits_are_disjoint_and_deterministic():
    task = WordsTask(digits=1)
    train, test = task.splits(60, 30, seed=3)
    assert not {p.prompt for p in train} & {p.prompt for p in test}
    assert task.splits(60, 30, seed=3) == (train, test)
    p = train[0]
    a, b = (int(x) for x in p.prompt.removeprefix("What is ").removesuffix("?").split(" + "))
    assert p.answer == str(a + b) and p.parse(p.solution) == p.answer
    assert p.messages == (("user", p.prompt),)
    with pytest.raises(ValueError, match="has 100"):
        task.splits(90, 20)


def test_rule_reward_reads_the_problems_parser():
    p = WordsTask().problem((3, 5))
    lab = make_problem((3, 5), TaskConfig(1))
    assert rule_reward([p, p, p], ["3 + 5 = 8", "It is 9", "eight"]).tolist() == [1.0, 0.0, 0.0]
    assert rule_reward([lab, lab], ["8;=8", "3 + 5 = 8"]).tolist() == [1.0, 0.0]  # the lab's own rule
    strict = WordsTask(lenient=False).problem((3, 5))
    assert rule_reward([strict, strict], ["3 + 5 = 8", "#### 8"]).tolist() == [0.0, 1.0]


def _gsm8k_file(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return str(path)


def test_gsm8k_from_a_local_file(tmp_path):
    rows = [{"question": f"Tom has {i} apples and buys 2 more. How many?",
             "answer": f"He has {i}+2=<<{i}+2={i + 2}>>{i + 2} apples.\n#### {i + 2}"} for i in range(10)]
    task = task_from_spec(f"gsm8k:{_gsm8k_file(tmp_path / 'g.jsonl', rows)}")
    train, test = task.splits(100, 3, seed=0)
    assert len(test) == 3 and len(train) == 7  # a small file: every other row trains
    p = test[0]
    assert "<<" not in p.solution and p.parse(p.solution) == p.answer
    assert p.prompt.endswith("Give the final answer after '####'.")
    assert p.max_new_tokens == GSM8KTask().max_new_tokens


GOOD = json.dumps({"question": "q?", "answer": "#### 1"}).encode()
BAD_LINES = {"no answer": json.dumps({"question": "q"}).encode(),
             "no marker": json.dumps({"question": "q", "answer": "no marker"}).encode(),
             "empty question": json.dumps({"question": "", "answer": "#### 3"}).encode(),
             "not a mapping": b'"text"', "not JSON": b'{"question": "q?",', "not UTF-8": b'{"question": "caf\xe9?"}',
             "overlong": json.dumps({"question": "x" * 5_000, "answer": "#### 2"}).encode()}


@pytest.mark.parametrize("kind", BAD_LINES)
@pytest.mark.parametrize("bom", [b"", b"\xef\xbb\xbf"], ids=["utf8", "utf8-bom"])
def test_every_data_file_error_names_the_files_line(tmp_path, kind, bom):
    """Whatever is wrong with a row, the message names its line as an editor numbers it (1-based, blank
    lines counted), with or without a byte-order mark: here line 6, after three good rows and two blank lines."""
    path = tmp_path / "g.jsonl"
    path.write_bytes(bom + b"\n".join([GOOD, b"", GOOD, b"  ", GOOD, BAD_LINES[kind], GOOD]) + b"\n")
    with pytest.raises(ValueError, match=r"g\.jsonl line 6\b") as e:
        GSM8KTask(str(path)).splits(1, 1)
    assert "row" not in str(e.value).split("line 6")[0]


def test_a_file_with_a_byte_order_mark_reads_as_the_same_rows(tmp_path):
    """A UTF-8 file saved with a byte-order mark (Windows editors write one) was refused as "line 1 is not JSON"."""
    rows = [{"question": f"What is {i} + 1?", "answer": f"#### {i + 1}"} for i in range(6)]
    plain = _gsm8k_file(tmp_path / "plain.jsonl", rows)
    marked = tmp_path / "marked.jsonl"
    marked.write_bytes(b"\xef\xbb\xbf" + open(plain, "rb").read())
    assert [r for _, r in words.read_rows(str(marked))] == rows
    assert GSM8KTask(str(marked)).splits(3, 3, seed=1) == GSM8KTask(plain).splits(3, 3, seed=1)


def test_task_specs():
    assert task_from_spec("words:2") == WordsTask(digits=2)
    for bad in ("words:x", "math", "gsm8k:/no/such/file.jsonl"):
        with pytest.raises(ValueError):
            task_from_spec(bad).splits(1, 1)


def test_too_many_digits_is_refused_up_front_and_the_limit_works():
    """words:99 once raised an OverflowError from random.sample(range(10**198)): now one ValueError naming the limit."""
    with pytest.raises(ValueError, match=r"at most 9 digits \(words:9\)"):
        task_from_spec("words:99")
    with pytest.raises(ValueError, match="at most 6 digits"):
        WordsTask(digits=7, n_operands=3)
    train, test = task_from_spec("words:9").splits(3, 2, seed=1)
    assert len(train) == 3 and len(test) == 2 and all(int(p.answer) > 0 for p in test)


def test_a_non_utf8_file_is_named_with_its_line(tmp_path):
    path = tmp_path / "g.jsonl"
    good = json.dumps({"question": "q?", "answer": "#### 1"}).encode()
    path.write_bytes(good + b"\n" + b'{"question": "caf\xe9?", "answer": "#### 2"}\n')
    with pytest.raises(ValueError, match=r"g\.jsonl line 2 is not UTF-8 text \(byte 18\)"):
        GSM8KTask(str(path)).splits(1, 1)


def test_an_overlong_question_is_refused_before_any_tokenizing(tmp_path):
    import time
    rows = [{"question": "q?", "answer": "#### 1"}, {"question": "x" * 10_000_000 + "?", "answer": "#### 2"}]
    path = _gsm8k_file(tmp_path / "g.jsonl", rows)
    start = time.perf_counter()
    with pytest.raises(ValueError, match=r"g\.jsonl line 2: a question or answer of 10,000,001 characters"):
        GSM8KTask(path).splits(1, 1)
    assert time.perf_counter() - start < 30  # read and refused, not tokenized (it hung for minutes)


def test_a_users_small_file_is_split_in_half(tmp_path):
    """An 8-row file under a preset that asks for 36 test problems: 4 to test, 4 to train (it was refused)."""
    rows = [{"question": f"What is {i} + 1?", "answer": f"#### {i + 1}"} for i in range(8)]
    train, test = GSM8KTask(_gsm8k_file(tmp_path / "g.jsonl", rows)).splits(64, 36)
    assert len(test) == 4 and len(train) == 4 and not {p.prompt for p in test} & {p.prompt for p in train}
    with pytest.raises(ValueError, match="needs at least 2"):
        GSM8KTask(_gsm8k_file(tmp_path / "one.jsonl", rows[:1])).splits(64, 36)
