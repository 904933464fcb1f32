"""Exercises with automatic checks, hints and solutions, in the style of Kaggle's learntools.

A notebook imports its exercise objects (`from unified_rl.course.ex.nb01_sft import q1`) and calls
`q1.check()`, `q1.hint()`, `q1.solution()`. `check()` reads the learner's answer from the notebook
by the variable name the exercise declares (or takes it as an argument), prints "Correct" or what
is wrong, and returns True/False; it never raises on a wrong answer. A stub (a missing variable,
None, `...`, or a function that raises NotImplementedError) is reported as "not attempted yet".

Four kinds: `ValueExercise` (a number, tensor or predict-then-run value), `ChoiceExercise` and
`SignExercise` (one of several options), `ExpressionExercise` (a sympy derivation, compared with
simplify and at random points), `FunctionExercise` (an implementation, run on edge cases and
random tensors against the package's own function).

Every exercise carries its solution (`solution_value`), a stub (`stub`) and plausible wrong
answers (`wrong`), so one generic test checks every checker of every notebook.

References: Kaggle learntools (github.com/Kaggle/learntools); nbgrader (nbgrader.readthedocs.io).
"""

import inspect
import math

import sympy
import torch

from .compare import _clone, _describe, _flat, compare, short_repr

_MISSING = object()
CORRECT, WRONG, NOT_ATTEMPTED = "correct", "wrong", "not attempted"


class Wrong(Exception):
    """Raised inside a checker: the answer is wrong, the message says how."""


class NotAttempted(Exception):
    """Raised inside a checker: the answer is still the stub."""


def _in_notebook():
    try:
        from IPython import get_ipython
    except ImportError:  # pragma: no cover - IPython comes with ipywidgets
        return False
    return getattr(get_ipython(), "kernel", None) is not None


def _show(markdown, plain):
    """Markdown in a Jupyter kernel, plain text elsewhere (terminal, tests, logs)."""
    if _in_notebook():
        from IPython.display import Markdown, display
        display(Markdown(markdown))
    else:
        print(plain)


def _stub_function(*args, **kwargs):
    """The stub of a function exercise."""
    # YOUR CODE HERE
    raise NotImplementedError()


class Exercise:
    """One question: `check()`, `hint()`, `solution()`. Subclasses implement `_check(answer)`."""

    kind = "answer"

    def __init__(self, *, var=None, title="", hint=(), solution=None, solution_value=_MISSING, wrong=()):
        self.var = var  # the notebook variable check() reads when called without an argument
        self.title = title
        self.hints = [hint] if isinstance(hint, str) else list(hint)
        self._solution_text = solution
        self._solution_value = solution_value
        self.wrong = list(wrong)  # plausible wrong answers, for the checker's own tests
        self.name = None  # the attribute name in its module, set by exercises_in()
        self.last_status = self.last_message = None

    @property
    def solution_value(self):
        """The correct answer (for a function exercise: a sample solution)."""
        if self._solution_value is _MISSING:
            raise ValueError(f"exercise {self.label} has no solution_value")
        return self._solution_value

    @property
    def stub(self):
        """What the learner's answer is before they attempt it."""
        return None

    @property
    def label(self):
        return self.title or self.name or self.var or type(self).__name__

    def check(self, answer=_MISSING):
        """Check `answer` (default: the notebook variable `var`); print the verdict; return True/False."""
        if answer is _MISSING:
            if self.var is None:
                raise ValueError(f"{self.label} declares no variable to read: call check(answer)")
            frame = inspect.currentframe().f_back
            answer = frame.f_locals.get(self.var, frame.f_globals.get(self.var, _MISSING))
        try:
            if answer is _MISSING:
                raise NotAttempted(f"define `{self.var}` in the cell above, run it, then run this check again")
            if answer is None or answer is Ellipsis:
                raise NotAttempted(f"replace the placeholder with your {self.kind}")
            self._check(answer)
            status, msg = CORRECT, "Correct"
        except NotAttempted as e:
            status, msg = NOT_ATTEMPTED, f"Not attempted yet: {e}"
        except NotImplementedError:
            status, msg = NOT_ATTEMPTED, "Not attempted yet: your code still raises NotImplementedError"
        except Wrong as e:
            status, msg = WRONG, f"Incorrect: {e}"
        self.last_status, self.last_message = status, msg
        colour = {CORRECT: "#1a7f37", WRONG: "#cf222e", NOT_ATTEMPTED: "#9a6700"}[status]
        head = f"{self.title}: " if self.title else ""
        _show(f'<span style="color:{colour}">**{head}{msg}**</span>', f"{head}{msg}")
        return status == CORRECT

    def hint(self, n=1):
        """Show hint number n (1-based)."""
        if not self.hints:
            _show("_No hint for this one: reread the derivation above._", "No hint for this one.")
            return
        n = min(max(int(n), 1), len(self.hints))
        more = f" (more: `hint({n + 1})`)" if n < len(self.hints) else ""
        _show(f"**Hint {n}/{len(self.hints)}**{more}: {self.hints[n - 1]}",
              f"Hint {n}/{len(self.hints)}: {self.hints[n - 1]}")

    def solution(self):
        """Show the solution: its text if given, else the source or value of `solution_value`."""
        text = self._solution_text
        if text is None:
            v = self.solution_value
            text = inspect.getsource(v) if callable(v) else repr(v)
            if callable(v) and self.var:  # show it under the name the notebook uses
                text = text.replace(f"def {v.__name__}(", f"def {self.var}(", 1)
            text = f"```python\n{text.rstrip()}\n```"
        _show(f"**Solution**:\n\n{text}", f"Solution:\n{text}")

    def _check(self, answer):
        raise NotImplementedError  # pragma: no cover

    def __repr__(self):
        return f"<{type(self).__name__} {self.label}>"


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
            try:
                got = float(answer.item() if torch.is_tensor(answer) else answer)
            except (TypeError, ValueError, RuntimeError):
                raise Wrong(f"expected a number, got {short_repr(answer)}") from None
            if math.isnan(got):
                raise Wrong("your answer is NaN")
            if not math.isclose(got, want, rel_tol=self.rtol, abs_tol=self.atol):
                if want != 0 and got != 0 and (got > 0) != (want > 0):
                    raise Wrong(f"{got:g} has the wrong sign")
                raise Wrong(f"{got:g} is too {'high' if got > want else 'low'}"
                            + (f" (tolerance ±{self.atol:g})" if self.atol >= 1e-4 else ""))
            return
        msg = compare(answer, want, atol=self.atol, rtol=self.rtol)
        if msg:
            raise Wrong(msg)


class ChoiceExercise(Exercise):
    """One option among several. `options`: a list, or a dict option -> description; `why`: option -> why not."""

    kind = "choice"

    def __init__(self, options, answer, *, why=None, **kw):
        self.options = dict(options) if isinstance(options, dict) else {o: "" for o in options}
        if answer not in self.options:
            raise ValueError(f"answer {answer!r} is not one of the options {list(self.options)}")
        kw.setdefault("solution_value", answer)
        kw.setdefault("wrong", [o for o in self.options if o != answer][:2])
        super().__init__(**kw)
        self.why = why or {}

    @staticmethod
    def _norm(x):
        return x.strip().lower() if isinstance(x, str) else x

    def _check(self, answer):
        match = [o for o in self.options if self._norm(o) == self._norm(answer)]
        if not match:
            raise Wrong(f"{short_repr(answer)} is not one of the options: {', '.join(map(repr, self.options))}")
        if match[0] != self.solution_value:
            raise Wrong(self.why.get(match[0], f"{match[0]!r} is not it; think again about what changes"))


class SignExercise(ChoiceExercise):
    """Predict a sign: answers +1/-1/0, or "positive"/"negative"/"zero", or "+"/"-"."""

    _words = {"+": 1, "positive": 1, "-": -1, "negative": -1, "zero": 0, "0": 0, "+1": 1, "-1": -1, "1": 1}

    def __init__(self, sign, **kw):
        kw.setdefault("why", {1: "it is not positive", -1: "it is not negative", 0: "it is not zero"})
        super().__init__([1, -1, 0], sign, **kw)

    def _check(self, answer):
        if isinstance(answer, str):
            answer = self._words.get(answer.strip().lower(), answer)
        elif isinstance(answer, (int, float)) and not isinstance(answer, bool):
            answer = (answer > 0) - (answer < 0)  # any number with the right sign is accepted
        super()._check(answer)


class ExpressionExercise(Exercise):
    """A sympy expression, compared symbolically (simplify(a - b) == 0), then at random points."""

    kind = "expression"

    def __init__(self, expected, *, n_points=6, seed=0, **kw):
        super().__init__(**kw)
        self._expected = _Lazy(expected)  # e.g. lambda: derivations.dpo_coefficient()
        self.n_points, self.seed = n_points, seed

    @property
    def solution_value(self):
        return self._expected.get()

    def _check(self, answer):
        want = sympy.sympify(self.solution_value)
        names = {s.name: s for s in want.free_symbols}
        try:
            got = sympy.sympify(answer, locals=names) if isinstance(answer, str) else sympy.sympify(answer)
        except (sympy.SympifyError, TypeError, SyntaxError):
            raise Wrong(f"could not read {short_repr(answer)} as a sympy expression") from None
        if isinstance(got, sympy.core.relational.Relational):
            raise Wrong("give the expression itself, not an equation")
        if not isinstance(got, sympy.Expr):
            raise Wrong(f"expected a sympy expression, got {type(answer).__name__}")
        # Match symbols by name: the learner's Symbol('beta') may lack the assumptions of ours.
        got = got.subs({s: names[s.name] for s in got.free_symbols if s.name in names}, simultaneous=True)
        extra = sorted(s.name for s in got.free_symbols if s.name not in names)
        diff = sympy.simplify(got - want)
        if diff == 0:
            return
        if extra:
            raise Wrong(f"uses {', '.join(extra)}, which the answer does not contain "
                        f"(it depends on {', '.join(sorted(names)) or 'no symbols'})")
        symbols = sorted(want.free_symbols | got.free_symbols, key=lambda s: s.name)
        gen = torch.Generator().manual_seed(self.seed)
        ratios, first = [], ""
        for _ in range(self.n_points):
            # positive points in a moderate range: logs, roots and sigmoids are all defined there
            point = {s: sympy.Float(0.3 + 1.4 * torch.rand((), generator=gen).item()) for s in symbols}
            try:
                g, w = complex(got.evalf(subs=point)), complex(want.evalf(subs=point))
            except (TypeError, ValueError):
                raise Wrong(f"is not equal to the expected expression (yours minus it simplifies to {diff})") from None
            if not (math.isclose(g.real, w.real, rel_tol=1e-9, abs_tol=1e-12) and abs(g.imag - w.imag) < 1e-12):
                ratios.append(g / w if w != 0 else None)
                at = ", ".join(f"{s.name}={float(v):.3g}" for s, v in point.items())
                first = first or f"at {at} yours gives {g.real:.6g}, the expected expression {w.real:.6g}"
        if not ratios:
            return  # equal at every point: simplify missed an identity
        if all(r is not None and abs(r - ratios[0]) < 1e-9 for r in ratios):
            k = ratios[0].real
            raise Wrong("the sign is flipped" if abs(k + 1) < 1e-9 else f"off by a constant factor of {k:.6g}")
        raise Wrong(f"not equal to the expected expression: {first}")


class FunctionExercise(Exercise):
    """A function, run on named edge cases and random inputs and compared with a reference function.

    cases: {name: kwargs or callable(generator) -> kwargs}; random_inputs: callable(generator) ->
    kwargs, called n_random times. Outputs (tensors, numbers or tuples of them) must match the
    reference within atol/rtol, and the learner's function must not modify its inputs.
    """

    kind = "function"

    def __init__(self, reference, cases=None, *, random_inputs=None, n_random=5, atol=1e-5, rtol=1e-5,
                 detached=False, seed=0, **kw):
        if not cases and random_inputs is None:
            raise ValueError("a FunctionExercise needs cases or random_inputs to test on")
        super().__init__(**kw)
        self.reference, self.cases, self.random_inputs = reference, dict(cases or {}), random_inputs
        self.n_random, self.atol, self.rtol, self.detached, self.seed = n_random, atol, rtol, detached, seed

    @property
    def stub(self):
        return _stub_function

    def _inputs(self):
        gen = torch.Generator().manual_seed(self.seed)
        for name, make in self.cases.items():
            yield f"case '{name}'", make(gen) if callable(make) else make
        for i in range(self.n_random if self.random_inputs else 0):
            yield f"random input #{i + 1}", self.random_inputs(gen)

    def _check(self, answer):
        if not callable(answer):
            raise Wrong(f"expected a function, got {short_repr(answer)}")
        for where, kwargs in self._inputs():
            want = self.reference(**_clone(kwargs))
            given = _clone(kwargs)
            try:
                got = answer(**given)
            except NotImplementedError:
                raise
            except Exception as e:  # the learner's bug, reported rather than raised
                raise Wrong(f"on {where} ({_describe(kwargs)}) it raised {type(e).__name__}: {e}") from None
            for k, v in kwargs.items():
                if compare(given[k], v, atol=0, rtol=0) is not None:
                    raise Wrong(f"it modifies its input `{k}` in place; compute a new tensor instead")
            msg = compare(got, want, atol=self.atol, rtol=self.rtol)
            if msg:
                raise Wrong(f"on {where} ({_describe(kwargs)}): {msg}")
            if self.detached and any(torch.is_tensor(t) and t.requires_grad for t in _flat(got)):
                raise Wrong(f"on {where}: the result still requires grad; a coefficient is detached")


def exercises_in(module):
    """Every Exercise object of a module, {name: exercise}, in definition order; names them."""
    found = {k: v for k, v in vars(module).items() if isinstance(v, Exercise)}
    for k, v in found.items():
        v.name = v.name or k
    return found
