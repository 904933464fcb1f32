"""The lab's task: multi-digit addition written out column by column.

A problem is a zero-padded sum such as ``"47+85="``. The reference response works the columns
from the least significant one, writing each column sum including the carry coming in, then the
final carry if there is one, then ``=`` and the answer::

    47+85=   ->   12;13;1;=132        (7+5=12, 4+8+1=13, final carry 1)
    23+45=   ->   8;6;=68             (no final carry: no carry-only step)

Each step can be checked on its own, so the task has both an outcome reward (the answer,
DeepSeekMath §4.1.2) and a process reward (each step, §4.1.3). The answer is derivable from the
steps (last digit of each column sum, then the final carry), which is what makes the steps useful.
Everything is generated offline and is deterministic under a seed; nothing here evaluates text
as code: answers are parsed as digit strings.
"""

import random
from dataclasses import dataclass, replace

ALPHABET = "0123456789+=;"  # every character the task writes; the tokenizer is built from it
STEP_SEP = ";"
ANSWER_SEP = "="
EOS = "<eos>"  # the tokenizer's end-of-sequence string; parsing stops there if it was decoded


@dataclass(frozen=True)
class TaskConfig:
    """How hard the problems are."""

    digits: int = 2
    """digits per operand; operands are zero-padded to this width in the prompt"""
    n_operands: int = 2
    """how many numbers are added; each column sum includes every operand plus the carry"""

    def __post_init__(self):
        if not isinstance(self.digits, int) or self.digits < 1:
            raise ValueError(f"digits must be an integer >= 1, got {self.digits!r}")
        if not isinstance(self.n_operands, int) or self.n_operands < 2:
            raise ValueError(f"n_operands must be an integer >= 2, got {self.n_operands!r}")

    @property
    def n_problems(self) -> int:
        """How many distinct problems exist (ordered operand tuples)."""
        return (10**self.digits) ** self.n_operands

    @property
    def max_response_len(self) -> int:
        """Characters in the longest reference response (without EOS)."""
        biggest = [10**self.digits - 1] * self.n_operands
        return len(make_problem(biggest, self).solution)

    def harder(self, extra_digits: int = 1) -> "TaskConfig":
        """The same task with longer operands: out-of-distribution problems for a trained model."""
        return replace(self, digits=self.digits + extra_digits)


@dataclass(frozen=True)
class Problem:
    """One addition problem with its reference steps and answer."""

    operands: tuple[int, ...]
    prompt: str  # "47+85=" (zero-padded to `digits`)
    answer: str  # "132", no leading zeros
    steps: tuple[str, ...]  # ("12", "13", "1"): column sums with carry, least significant first

    @property
    def solution(self) -> str:
        """The reference response text, e.g. "12;13;1;=132" (no EOS)."""
        return "".join(s + STEP_SEP for s in self.steps) + ANSWER_SEP + self.answer


def make_problem(operands, cfg: TaskConfig) -> Problem:
    """Build the problem adding `operands`, each with at most `cfg.digits` digits."""
    operands = tuple(operands)
    if len(operands) != cfg.n_operands:
        raise ValueError(f"expected {cfg.n_operands} operands, got {len(operands)}")
    for x in operands:
        if not isinstance(x, int) or not 0 <= x < 10**cfg.digits:
            raise ValueError(f"operand {x!r} is not an integer in [0, 10**{cfg.digits})")
    steps, carry = [], 0
    for col in range(cfg.digits):  # least significant column first, as written by hand
        s = carry + sum((x // 10**col) % 10 for x in operands)
        steps.append(str(s))
        carry = s // 10
    if carry:
        steps.append(str(carry))  # the final carry is the answer's leading digit(s)
    prompt = "+".join(str(x).zfill(cfg.digits) for x in operands) + ANSWER_SEP
    return Problem(operands, prompt, str(sum(operands)), tuple(steps))


def _operands_of(index: int, cfg: TaskConfig) -> tuple[int, ...]:
    """Decode a problem index in [0, n_problems) into its operands (base 10**digits)."""
    base = 10**cfg.digits
    return tuple((index // base**i) % base for i in range(cfg.n_operands))


def make_splits(cfg: TaskConfig, n_train: int, n_test: int, seed: int = 0):
    """Disjoint train and test problems, drawn without replacement, deterministic under `seed`.

    One draw of n_train + n_test indices is cut in two, so the test set depends on n_train as well:
    compare runs on the same (n_train, n_test, seed), as every preset's runs do.
    """
    if n_train < 0 or n_test < 0:
        raise ValueError(f"n_train and n_test must be >= 0, got {n_train} and {n_test}")
    if n_train + n_test > cfg.n_problems:
        raise ValueError(
            f"asked for {n_train} + {n_test} problems but {cfg} has only {cfg.n_problems}"
        )
    # random.sample over a range draws distinct indices without building the whole range
    idx = random.Random(seed).sample(range(cfg.n_problems), n_train + n_test)
    problems = [make_problem(_operands_of(i, cfg), cfg) for i in idx]
    return problems[:n_train], problems[n_train:]


def _strip_eos(text: str) -> str:
    """The response up to its first EOS string, if it was decoded with special tokens."""
    return text.split(EOS, 1)[0]


def parse_answer(text: str) -> str | None:
    """The digits after the last "=" (up to EOS or the end); None when there are none."""
    text = _strip_eos(text).strip()
    if ANSWER_SEP not in text:
        return None
    answer = text.rsplit(ANSWER_SEP, 1)[1]
    # str.isdigit also accepts superscripts and other scripts; only ASCII digits are answers
    if not answer or any(c not in "0123456789" for c in answer):
        return None
    return answer


def step_spans(text: str) -> list[tuple[int, int]]:
    """Character span [start, end) of each step before the first "=" (separators excluded).

    A step ends at the ";" that follows it. Before a missing "=" (a truncated response) the
    last piece counts only if a ";" closed it; an empty piece between two ";" is an (empty) step.
    """
    text = _strip_eos(text)
    stop = text.find(ANSWER_SEP)
    closed_by_answer = stop >= 0
    stop = len(text) if stop < 0 else stop
    spans, start = [], 0
    for i in range(stop):
        if text[i] == STEP_SEP:
            spans.append((start, i))
            start = i + 1
    if start < stop and closed_by_answer:  # "12;13=..." : the "=" closes the last step
        spans.append((start, stop))
    return spans


def parse_steps(text: str) -> list[str]:
    """The step strings before the first "=", e.g. "12;13;1;=132" -> ["12", "13", "1"]."""
    return [text[a:b] for a, b in step_spans(text)]
