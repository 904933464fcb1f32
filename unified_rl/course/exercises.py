"""Exercises with automatic checks, hints and solutions, in the style of Kaggle's learntools.

A notebook imports its exercise objects (`from unified_rl.course.ex.nb01_sft import q1`) and calls
`q1.check()`, `q1.hint()`, `q1.solution()`. `check()` reads the learner's answer from the notebook
by the variable name the exercise declares (or takes it as an argument), shows "Correct" or what is
wrong, and returns a `Verdict`: true when correct, and silent as a cell's last value, so a learner
sees the verdict only. It never raises on a wrong answer; `grade()` (the graded copy's check, for
nbgrader) runs the same checker and raises unless the answer is correct. A stub (a missing variable, None, `...`,
or a function that raises NotImplementedError) is "not attempted yet".

Four kinds: `ValueExercise` (a number, tensor or predict-then-run value), `ChoiceExercise` and
`SignExercise` (one of several options), `ExpressionExercise` (a sympy derivation, compared at
random points of both signs where a symbol's domain allows, then by bounded algebra: `symbolic`), `FunctionExercise` (an implementation,
run on edge cases and random tensors against the package's own function; a coefficient, objective
or surrogate is also checked by its gradient, from inputs that require grad: `gradcheck`).

Every exercise carries its solution (`solution_value`), a stub (`stub`) and plausible wrong
answers (`wrong`), so one generic test checks every checker of every notebook.
References: Kaggle learntools (github.com/Kaggle/learntools); nbgrader (nbgrader.readthedocs.io).
"""

import math

import sympy

from .base import CORRECT, NOT_ATTEMPTED, WRONG, AnswerNotCorrect, Exercise, NotAttempted, Verdict, Wrong
from .compare import as_number, compare, short_repr
from .gradcheck import FunctionExercise, leaky
from .i18n import Msg, t, text
from .symbolic import compare_expressions, read_expression, sample_points

class _Lazy:
    """An expected answer given as a zero-argument function: computed on first use, then kept."""

    def __init__(self, expected):
        self._expected, self._done = expected, not callable(expected) or isinstance(expected, sympy.Basic)
        self._value = expected if self._done else None

    def get(self):
        if not self._done:
            self._value, self._done = self._expected(), True
        return self._value


class ValueExercise(Exercise):
    """A number, tensor or other value. `expected` may be a function: run at check time (predict-then-run)."""

    kind = "value"

    def __init__(self, expected, *, atol=1e-8, rtol=1e-6, **kw):
        super().__init__(**kw)
        self._expected = _Lazy(expected)
        self.atol, self.rtol = atol, rtol

    @property
    def solution_value(self):
        return self._expected.get()

    def _check(self, answer):
        want = self.solution_value
        if isinstance(want, (int, float)) and not isinstance(want, bool):
            got, why = as_number(answer)
            if why:
                raise Wrong(why)
            if math.isnan(got):
                raise Wrong(t("check.nan"))
            if not math.isclose(got, want, rel_tol=self.rtol, abs_tol=self.atol):
                if want != 0 and got != 0 and (got > 0) != (want > 0):
                    raise Wrong(t("check.wrong_sign", got=got))
                raise Wrong(t("check.too_high" if got > want else "check.too_low", got=got)
                            + (t("check.tolerance", atol=self.atol) if self.atol >= 1e-4 else ""))
            return
        msg = compare(answer, want, atol=self.atol, rtol=self.rtol)
        if msg:
            raise Wrong(msg)


class ChoiceExercise(Exercise):
    """One option among several. `options`: a list, or a dict option -> description; `why`: option -> why not.

    An option is the answer a learner writes, the same string in every language (the notebooks' code is
    the same in both editions); its description (a str or a Msg) is shown in the current language."""

    kind = "choice"

    def __init__(self, options, answer, *, why=None, **kw):
        self._options = dict(options) if isinstance(options, dict) else {o: "" for o in options}
        if answer not in self._options:
            raise ValueError(f"answer {answer!r} is not one of the options {list(self._options)}")
        kw.setdefault("solution_value", answer)
        kw.setdefault("wrong", [o for o in self._options if o != answer][:2])
        super().__init__(**kw)
        self.why = why or {}

    @property
    def options(self):
        """{option: its description in the current language}, in the order given."""
        return {o: text(d) for o, d in self._options.items()}

    @staticmethod
    def _norm(x):
        return x.strip().lower() if isinstance(x, str) else x

    def _read(self, answer):
        """A string as it is; anything else must be one number (numpy and one-element tensors too)."""
        if isinstance(answer, str):
            return answer
        got, why = as_number(answer)
        if why:
            raise Wrong(t("check.answer_one_of", why=why, options=', '.join(map(repr, self._options))))
        return int(got) if got.is_integer() else got

    def _check(self, answer):
        answer = self._read(answer)
        match = [o for o in self._options if type(self._norm(o)) is type(self._norm(answer))
                 and self._norm(o) == self._norm(answer)]
        if not match:
            raise Wrong(t("check.not_an_option", answer=short_repr(answer), options=', '.join(map(repr, self._options))))
        if match[0] != self.solution_value:
            raise Wrong(text(self.why[match[0]]) if match[0] in self.why else t("check.not_it", option=repr(match[0])))


class SignExercise(ChoiceExercise):
    """Predict a sign: answers +1/-1/0, or "positive"/"negative"/"zero", or "+"/"-"."""

    _words = {"+": 1, "positive": 1, "-": -1, "negative": -1, "zero": 0, "0": 0, "+1": 1, "-1": -1, "1": 1}

    def __init__(self, sign, **kw):
        kw.setdefault("why", {1: Msg("check.not_positive"), -1: Msg("check.not_negative"), 0: Msg("check.not_zero")})
        super().__init__([1, -1, 0], sign, **kw)

    def _check(self, answer):
        if isinstance(answer, str):
            answer = self._words.get(answer.strip().lower(), answer)
        else:
            got, why = as_number(answer)
            if why:
                raise Wrong(t("check.answer_sign", why=why))
            answer = (got > 0) - (got < 0)  # any number with the right sign is accepted
        super()._check(answer)


class ExpressionExercise(Exercise):
    """A sympy expression, compared at random points, then (if none evaluates) by bounded simplify."""

    kind = "expression"
    points = 2  # a derivation

    def __init__(self, expected, *, n_points=8, seed=0, **kw):
        super().__init__(**kw)
        self._expected = _Lazy(expected)  # e.g. lambda: derivations.dpo_coefficient()
        self.n_points, self.seed = n_points, seed

    @property
    def solution_value(self):
        return self._expected.get()

    def eval_points(self):
        """The points the expected expression is evaluated at (an answer with no other symbol meets the same)."""
        symbols = sorted(sympy.sympify(self.solution_value).free_symbols, key=lambda s: s.name)
        return sample_points(symbols, self.n_points, self.seed)

    def _check(self, answer):
        want = sympy.sympify(self.solution_value)
        try:
            got = read_expression(answer, want)
        except ValueError as e:
            raise Wrong(str(e)) from None
        msg = compare_expressions(got, want, n_points=self.n_points, seed=self.seed)
        if msg:
            raise Wrong(msg)


def exercises_in(module):
    """Every Exercise object of a module, {name: exercise}, in definition order; names them."""
    found = {k: v for k, v in vars(module).items() if isinstance(v, Exercise)}
    for k, v in found.items():
        v.name = v.name or k
    return found


__all__ = ["AnswerNotCorrect", "CORRECT", "ChoiceExercise", "Exercise", "ExpressionExercise", "FunctionExercise", "NOT_ATTEMPTED",
           "NotAttempted", "SignExercise", "ValueExercise", "Verdict", "WRONG", "Wrong", "exercises_in", "leaky"]
