"""How exercises talk to a learner: verdicts, hints and solutions, and whether solutions are shown.

In a Jupyter kernel a verdict is coloured HTML and a hint Markdown; elsewhere (a terminal, tests,
logs) both are plain text. Text outside `code spans` is escaped, so `*`, `_` and `<eos>` in a hint
reach the learner as written instead of turning into emphasis or vanishing as an HTML tag.

Solutions are shown unless turned off: `UNIFIED_RL_SOLUTIONS=0` in the environment, or a file named
`STUDENT_FLAG` in the notebook's folder or above it (`make student` writes one into every student
copy); `UNIFIED_RL_SOLUTIONS=1` turns them back on (instructors). See course/INSTRUCTORS.md.
"""

import html
import os
import re
from pathlib import Path

STUDENT_FLAG = ".unified_rl_student"
_CODE = re.compile(r"(`+)(.+?)\1", re.S)
_MD_SPECIAL = re.compile(r"([\\*_\[\]#|~])")


def solutions_shown(cwd=None):
    """Whether `q.solution()` shows the solution here: the environment first, then a student flag file."""
    env = os.environ.get("UNIFIED_RL_SOLUTIONS")
    if env is not None and env.strip():
        return env.strip().lower() not in ("0", "off", "false", "no")
    here = Path(cwd or os.getcwd()).resolve()
    return not any((d / STUDENT_FLAG).is_file() for d in (here, *here.parents))


def in_notebook():
    try:
        from IPython import get_ipython
    except ImportError:  # pragma: no cover - IPython comes with ipywidgets
        return False
    return getattr(get_ipython(), "kernel", None) is not None


def _split_code(text):
    """[(is_code, piece)] of a text with `code spans`."""
    out, pos = [], 0
    for m in _CODE.finditer(text):
        out += [(False, text[pos:m.start()]), (True, m.group(2))]
        pos = m.end()
    return out + [(False, text[pos:])]


def markdown_text(text):
    """Text for Markdown: code spans kept, everything else shown literally (escaped)."""
    parts = []
    for is_code, piece in _split_code(text):
        if is_code:
            parts.append(f"`{piece}`" if "`" not in piece else f"`` {piece} ``")
        else:
            parts.append(html.escape(_MD_SPECIAL.sub(r"\\\1", piece), quote=False))
    return "".join(parts)


def html_text(text):
    """Text for HTML: code spans as <code>, everything else escaped."""
    return "".join(f"<code>{html.escape(p)}</code>" if c else html.escape(p) for c, p in _split_code(text))


def show_markdown(markdown, plain):
    """Markdown in a Jupyter kernel, plain text elsewhere."""
    if in_notebook():
        from IPython.display import Markdown, display
        display(Markdown(markdown))
    else:
        print(plain)


def show_verdict(text, colour):
    """One coloured line in a Jupyter kernel, plain text elsewhere."""
    if in_notebook():
        from IPython.display import HTML, display
        display(HTML(f'<div style="color:{colour}"><b>{html_text(text)}</b></div>'))
    else:
        print(text)
