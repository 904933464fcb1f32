"""Tasks in words for a chat LLM: the lab's sums asked in natural language, and GSM8K.

A `WordProblem` has what every data source and reward of the lab reads (`prompt`, `solution`,
`answer`, `steps`) plus what a chat model needs: `messages` (turned into prompt ids by the
tokenizer's chat template), `max_new_tokens` (the reply's budget, instead of the reference's length)
and its own `parse` (the rule reward compares `problem.parse(text)` with `problem.answer`).
Answers are read by rule, never evaluated: strict (`#### N` or `\\boxed{N}`, GSM8K's and the
MATH convention) or lenient (the last number in the reply). Everything is offline: the sums are
generated, GSM8K is read from a local JSONL or parquet file in its Hugging Face format
(`question`, `answer` ending in `#### N`).
"""

import json
import os
import random
import re
import sys
from dataclasses import dataclass

NUMBER = re.compile(r"-?\d[\d,]*(?:\.\d+)?")
STRICT = (re.compile(r"####\s*(-?[\d,]*\.?\d+)"), re.compile(r"\\boxed\{\s*(-?[\d,]*\.?\d+)\s*\}"))
CALCULATOR = re.compile(r"<<[^>]*>>")  # GSM8K's calculator annotations, e.g. <<48/2=24>>
MAX_QUESTION_CHARS = 4000  # GSM8K's longest question has under 1,000 characters; a longer one is a wrong file


def normalize_number(text) -> str | None:
    """'1,234' -> '1234', '3.50' -> '3.5', '7.0' -> '7'; None if `text` is not a number."""
    t = text.replace(",", "").strip()
    if not re.fullmatch(r"-?\d*\.?\d+", t):
        return None
    if "." in t:
        t = t.rstrip("0").rstrip(".")
    sign = "-" if t.startswith("-") else ""
    digits = t.lstrip("-").lstrip("0")
    digits = digits if digits and not digits.startswith(".") else "0" + digits
    return "0" if digits == "0" else sign + digits


def parse_strict(text) -> str | None:
    """The number after the last `#### ` or inside the last `\\boxed{}`; None if neither is there."""
    found = [(m.start(), m.group(1)) for pattern in STRICT for m in pattern.finditer(text)]
    return normalize_number(max(found)[1]) if found else None


def parse_lenient(text) -> str | None:
    """The strict answer if there is one, else the last number in the text; None if no number."""
    strict = parse_strict(text)
    if strict is not None:
        return strict
    numbers = NUMBER.findall(text)
    return normalize_number(numbers[-1]) if numbers else None


@dataclass(frozen=True)
class WordProblem:
    """A question in words, its reference reply and answer, and how to ask and read it."""

    prompt: str  # the question as the user asks it (the chat template wraps it)
    solution: str  # a reference reply (SFT's target)
    answer: str  # the normalised number a correct reply ends with
    messages: tuple  # ((role, content), ...) the chat turns before the assistant's reply
    max_new_tokens: int  # the reply's budget in tokens
    lenient: bool = True  # read the last number (True) or only `#### N` / \boxed{N} (False)
    steps: tuple = ()  # no process supervision in words

    def parse(self, text) -> str | None:
        """The reply's answer by this problem's rule."""
        return parse_lenient(text) if self.lenient else parse_strict(text)


def _messages(question, system):
    return ((("system", system),) if system else ()) + (("user", question),)


def _check_budget(max_new_tokens):
    if not isinstance(max_new_tokens, int) or max_new_tokens < 1:
        raise ValueError(f"max_new_tokens must be a whole number >= 1, got {max_new_tokens!r}")


@dataclass(frozen=True)
class WordsTask:
    """The lab's sums in words: "What is 3 + 5?" with `digits`-digit operands (not zero-padded).

    SmolLM2-135M-Instruct answers single-digit sums about half the time greedily and two-digit
    sums rarely (docs/ARCHITECTURE.md, "A real model"): `digits` sets where it starts.
    """

    digits: int = 1
    n_operands: int = 2
    template: str = "What is {expr}?"
    system: str = ""  # "" keeps the model's own default system prompt
    max_new_tokens: int = 16
    lenient: bool = True

    def __post_init__(self):
        if not isinstance(self.digits, int) or self.digits < 1:
            raise ValueError(f"digits must be an integer >= 1, got {self.digits!r}")
        if not isinstance(self.n_operands, int) or self.n_operands < 2:
            raise ValueError(f"n_operands must be an integer >= 2, got {self.n_operands!r}")
        if (10**self.digits) ** self.n_operands > sys.maxsize:  # the splits index every problem
            most = max(1, len(str(sys.maxsize)) - 1) // self.n_operands
            raise ValueError(f"sums of {self.n_operands} numbers of {self.digits} digits are too many to index; "
                             f"use at most {most} digits (words:{most})")
        if "{expr}" not in self.template:
            raise ValueError(f"template must contain {{expr}}, got {self.template!r}")
        _check_budget(self.max_new_tokens)

    @property
    def n_problems(self) -> int:
        return (10**self.digits) ** self.n_operands

    def problem(self, operands) -> WordProblem:
        expr = " + ".join(str(x) for x in operands)
        total = str(sum(operands))
        question = self.template.format(expr=expr)
        return WordProblem(question, f"{expr} = {total}", total, _messages(question, self.system),
                           self.max_new_tokens, self.lenient)

    def splits(self, n_train, n_test, seed=0):
        """Disjoint train and test problems, deterministic under `seed`."""
        if n_train < 0 or n_test < 0 or n_train + n_test > self.n_problems:
            raise ValueError(f"asked for {n_train} + {n_test} problems but {self} has {self.n_problems}")
        base = 10**self.digits
        idx = random.Random(seed).sample(range(self.n_problems), n_train + n_test)
        problems = [self.problem([(i // base**k) % base for k in range(self.n_operands)]) for i in idx]
        return problems[:n_train], problems[n_train:]


@dataclass(frozen=True)
class MixedTask:
    """Several tasks' questions in one pool, in equal shares, shuffled: e.g. single- and two-digit sums.

    Each part draws its own disjoint split under the seed; the parts' shares differ by at most one.
    """

    parts: tuple  # tasks with `splits` (e.g. WordsTask(digits=1), WordsTask(digits=2))

    def __post_init__(self):
        if not self.parts or not all(hasattr(t, "splits") for t in self.parts):
            raise ValueError(f"a mixed task needs one or more tasks with splits, got {self.parts!r}")

    @property
    def max_new_tokens(self) -> int:
        return max(t.max_new_tokens for t in self.parts)

    def splits(self, n_train, n_test, seed=0):
        """Disjoint train and test problems, each list shuffled, deterministic under `seed`."""
        k = len(self.parts)
        share = lambda n, i: n // k + (i < n % k)  # noqa: E731
        train, test = [], []
        for i, task in enumerate(self.parts):
            a, b = task.splits(share(n_train, i), share(n_test, i), seed=seed)
            train += a
            test += b
        rng = random.Random(seed)
        rng.shuffle(train)
        rng.shuffle(test)
        return train, test


def read_rows(path):
    """(where, row) for each row of a JSONL or parquet file, `where` naming the file and the row's line
    (1-based, blank lines counted: what an editor shows) or, in parquet, its row (1-based). UTF-8 with or
    without a byte-order mark. ValueError naming the file and the line."""
    if not os.path.isfile(path):
        raise ValueError(f"no data file at {path!r}")
    if path.endswith(".parquet"):
        try:
            import pyarrow.parquet as pq
        except ImportError:
            raise ValueError("reading parquet needs pyarrow: pip install pyarrow (or give a .jsonl file)") from None
        return [(f"{path} row {n}", row) for n, row in enumerate(pq.read_table(path).to_pylist(), 1)]
    rows = []
    with open(path, "rb") as f:
        for n, raw in enumerate(f, 1):
            try:  # a byte-order mark (Windows editors write one) starts line 1: not part of its JSON
                line = raw.decode("utf-8-sig" if n == 1 else "utf-8")
            except UnicodeDecodeError as e:
                raise ValueError(f"{path} line {n} is not UTF-8 text (byte {e.start + 1}); "
                                 "save the file as UTF-8") from None
            if line.strip():
                try:
                    rows.append((f"{path} line {n}", json.loads(line)))
                except ValueError:
                    raise ValueError(f"{path} line {n} is not JSON") from None
    return rows


def gsm8k_problem(row, where, cfg) -> WordProblem:
    """A WordProblem of one GSM8K row {"question", "answer": "... #### N"}; ValueError naming `where`."""
    if not isinstance(row, dict) or not isinstance(row.get("question"), str) \
            or not isinstance(row.get("answer"), str):
        raise ValueError(f"{where}: expected text fields 'question' and 'answer'")
    if len(row["question"]) > MAX_QUESTION_CHARS or len(row["answer"]) > MAX_QUESTION_CHARS:
        raise ValueError(f"{where}: a question or answer of {max(len(row['question']), len(row['answer'])):,} "
                         f"characters; GSM8K's are under 1,000 (at most {MAX_QUESTION_CHARS:,} are read)")
    answer = parse_strict(row["answer"]) if "####" in row["answer"] else None
    if answer is None or not row["question"].strip():
        raise ValueError(f"{where}: the answer does not end with '#### N' (a number), or the question is empty")
    question = row["question"].strip() + cfg.instruction
    solution = CALCULATOR.sub("", row["answer"]).strip()
    return WordProblem(question, solution, answer, _messages(question, cfg.system), cfg.max_new_tokens,
                       cfg.lenient)


@dataclass(frozen=True)
class GSM8KTask:
    """GSM8K from a local file in its Hugging Face format (`path`), or from the hub (`path=""`,
    through `datasets`, where the hub is reachable). One file is shuffled under the split seed and
    cut into n_test test rows and up to n_train train rows. A file of fewer than 2 x n_test rows is
    split in half instead (a user's small file: half to test, half to train; at least 2 rows)."""

    path: str = ""
    instruction: str = "\nGive the final answer after '####'."
    system: str = ""
    max_new_tokens: int = 256
    lenient: bool = True

    def __post_init__(self):
        _check_budget(self.max_new_tokens)

    def rows(self):
        """((where, row) for each row, the source's name): a file's rows by line, the hub's by row (1-based)."""
        if self.path:
            return read_rows(self.path), self.path
        try:
            import datasets
            rows = datasets.load_dataset("openai/gsm8k", "main", split="train")
            return [(f"openai/gsm8k row {n}", row) for n, row in enumerate(rows, 1)], "openai/gsm8k"
        except Exception as e:  # not installed, or the hub unreachable
            raise ValueError(f"GSM8K from the hub failed ({type(e).__name__}); give a local file: "
                             "--task gsm8k:FILE.jsonl") from None

    def splits(self, n_train, n_test, seed=0):
        rows, where = self.rows()
        problems = [gsm8k_problem(row, at, self) for at, row in rows]
        if len(problems) < 2:
            raise ValueError(f"{where} has {len(problems)} problem(s); it needs at least 2 (one to train on, "
                             "one to test on)")
        n_test = min(n_test, len(problems) // 2)  # a small file: half of it tests
        n_train = min(n_train, len(problems) - n_test)  # every other row trains
        order = random.Random(seed).sample(range(len(problems)), n_train + n_test)
        picked = [problems[i] for i in order]
        return picked[:n_train], picked[n_train:]


def task_from_spec(spec, **fields):
    """`words`, `words:DIGITS`, `gsm8k` or `gsm8k:FILE` (the CLI's --task) as a task config."""
    kind, _, arg = str(spec).partition(":")
    if kind == "words":
        if arg and not arg.isdigit():
            raise ValueError(f"--task words:DIGITS takes a whole number, got {arg!r}")
        return WordsTask(digits=int(arg), **fields) if arg else WordsTask(**fields)
    if kind == "gsm8k":
        return GSM8KTask(path=arg, **fields)
    raise ValueError(f"unknown task {spec!r}; choose words, words:DIGITS, gsm8k or gsm8k:FILE")
