"""The base of every exercise: `check()`, `hint()`, `solution()`, `grade()`, and the Verdict `check()` returns.

Subclasses (in `exercises` and `gradcheck`) implement `_check(answer)`, raising `Wrong` with a
message for the learner, or `NotAttempted` for a stub. `check()` shows its verdict and never raises;
`grade()` runs the same checker silently and raises `AnswerNotCorrect` (an AssertionError) unless the
answer is correct: an autograder (nbgrader) gives an exercise's `points` when its test cell raises
nothing, so the graded copy of a check cell calls `grade()` (scripts/nbgrader_cells.py).
"""

import inspect
import warnings

from . import display
from .i18n import Msg, t, text
from .compare import short_repr

_MISSING = object()
CORRECT, WRONG, NOT_ATTEMPTED = "correct", "wrong", "not attempted"
_COLOUR = {CORRECT: "#1a7f37", WRONG: "#cf222e", NOT_ATTEMPTED: "#9a6700"}


class Wrong(Exception):
    """Raised inside a checker: the answer is wrong, the message says how."""


class NotAttempted(Exception):
    """Raised inside a checker: the answer is still the stub."""


class AnswerNotCorrect(AssertionError):
    """Raised by `grade()`: the answer is wrong or not attempted; the message is the checker's verdict."""

    def _render_traceback_(self):  # IPython shows this instead of a traceback: the verdict is the feedback
        return [f"{type(self).__name__}: {self}"]


class Verdict:
    """What `check()` returns: true when correct; shows nothing as a cell's value (the verdict is shown)."""

    def __init__(self, status, message):
        self.status, self.message = status, message

    @property
    def correct(self):
        return self.status == CORRECT

    def __bool__(self):
        return self.correct

    def __eq__(self, other):
        return self.correct == other if isinstance(other, bool) else NotImplemented

    __hash__ = None

    def __repr__(self):
        return f"<{self.status}: {self.message}>"

    def _ipython_display_(self):
        pass  # already shown by check(): echoing "True" under it would say nothing new


class Exercise:
    """One question: `check()`, `hint()`, `solution()`. Subclasses implement `_check(answer)`."""

    kind = "answer"
    points = 1  # what the exercise is worth when graded; a derivation or an implementation is worth more

    def __init__(self, *, var=None, title="", hint=(), solution=None, solution_value=_MISSING, wrong=(), points=None):
        self.var = var  # the notebook variable check() reads when called without an argument
        self._title = title  # a str, or a Msg shown in the current language
        self._hints = [hint] if isinstance(hint, (str, Msg)) else list(hint)
        self._solution_text = solution
        self._solution_value = solution_value
        self.wrong = list(wrong)  # plausible wrong answers, for the checker's own tests
        self.name = None  # the attribute name in its module, set by exercises_in()
        self.last_status = self.last_message = self.last_crash = None
        if points is not None:
            if isinstance(points, bool) or not isinstance(points, int) or points < 1:
                raise ValueError(f"points must be a positive whole number, not {points!r}")
            self.points = points

    @property
    def title(self):
        """The exercise's title, in the current language."""
        return text(self._title)

    @property
    def hints(self):
        """The hints, in the current language."""
        return [text(h) for h in self._hints]

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

    def _answer(self, answer, frame):
        """The answer given, or the notebook variable `var` as the calling frame sees it."""
        if answer is not _MISSING:
            return answer
        if self.var is None:
            raise ValueError(f"{self.label} declares no variable to read: call check(answer)")
        return frame.f_locals.get(self.var, frame.f_globals.get(self.var, _MISSING))

    def _verdict(self, answer):
        """(status, message) of the checker on `answer`; remembered as last_status, last_message.

        Warnings raised while checking join the message instead of reaching stderr: nbgrader gives no
        points to a test cell that writes to stderr, whatever the verdict."""
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            status, msg = self._run_checker(answer)
        if caught:
            msg += t("check.warned", category=caught[0].category.__name__, message=caught[0].message)
        self.last_status, self.last_message = status, msg
        return status, msg

    def _run_checker(self, answer):
        self.last_crash = None
        try:
            if answer is _MISSING:
                raise NotAttempted(t("check.define_var", var=self.var))
            if answer is None or answer is Ellipsis:
                raise NotAttempted(t("check.placeholder", kind=t(f"check.kind.{self.kind}")))
            self._check(answer)
            status, msg = CORRECT, t("check.correct")
        except NotAttempted as e:
            status, msg = NOT_ATTEMPTED, t("check.not_attempted", why=e)
        except NotImplementedError:
            status, msg = NOT_ATTEMPTED, t("check.still_raises")
        except Wrong as e:
            status, msg = WRONG, t("check.incorrect", why=e)
        except Exception as e:  # an answer the checker cannot read: say so, never crash the notebook
            self.last_crash = e
            status, msg = WRONG, t("check.could_not", answer=short_repr(answer, 60), error=type(e).__name__, message=e)
        return status, msg

    def check(self, answer=_MISSING):
        """Check `answer` (default: the notebook variable `var`); show the verdict; return a Verdict."""
        status, msg = self._verdict(self._answer(answer, inspect.currentframe().f_back))
        display.show_verdict(f"{self._head()}{msg}", _COLOUR[status])
        return Verdict(status, msg)

    def grade(self, answer=_MISSING):
        """The same check, shown nowhere: raise AnswerNotCorrect with the verdict unless the answer is correct."""
        status, msg = self._verdict(self._answer(answer, inspect.currentframe().f_back))
        if status != CORRECT:
            raise AnswerNotCorrect(t("check.zero_points", head=self._head(), verdict=msg, points=self.points))

    def _head(self):
        """ "Q1: ...: " before a verdict, or nothing for an exercise without a title."""
        return t("check.head", title=self.title) if self.title else ""

    def hint(self, n=1):
        """Show hint number n (1-based)."""
        if not self.hints:
            display.show_markdown(t("hint.none_md"), t("hint.none"))
            return
        n = min(max(int(n), 1), len(self.hints))
        more = t("hint.more", n=n + 1) if n < len(self.hints) else ""
        hint = self.hints[n - 1]
        display.show_markdown(t("hint.md", n=n, total=len(self.hints), more=more, text=display.markdown_text(hint)),
                              t("hint.plain", n=n, total=len(self.hints), text=hint))

    def solution(self):
        """Show the solution (its text if given, else the source or value of `solution_value`), if shown here."""
        if not display.solutions_shown():
            display.show_markdown(t("solution.off_md"), t("solution.off"))
            return
        text_ = text(self._solution_text)
        if text_ is None:
            v = self.solution_value
            text_ = inspect.getsource(v) if callable(v) else repr(v)
            if callable(v) and self.var:  # show it under the name the notebook uses
                text_ = text_.replace(f"def {v.__name__}(", f"def {self.var}(", 1)
            text_ = f"```python\n{text_.rstrip()}\n```"
        display.show_markdown(t("solution.md", text=text_), t("solution.plain", text=text_))

    def _check(self, answer):
        raise NotImplementedError  # pragma: no cover

    def __repr__(self):
        return f"<{type(self).__name__} {self.label}>"
