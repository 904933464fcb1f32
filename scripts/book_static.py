"""Make an executed notebook readable as a static page: widgets become HTML, the page gets a note.

A widget on a live page is a view of a model in the kernel; a static site has no kernel, and the
usual embed script (the widget manager) comes from a CDN. Instead, `nbclient` stores every
widget's state in the notebook, and `static_widgets` turns each displayed widget into plain HTML
from that state: its plots (Image widgets, Output widgets' figures), its tables (HTML widgets),
and each control with the value it started at. Nothing on the page then needs JavaScript or the
network.
"""

import html
import re

import nbformat

VIEW = "application/vnd.jupyter.widget-view+json"
STATE = "application/vnd.jupyter.widget-state+json"
BOXES = {"VBoxModel", "HBoxModel", "BoxModel", "GridBoxModel", "AccordionModel", "TabModel", "StackModel"}
CAPTION = ("Interactive in a live notebook: shown here as it first appeared. Run this page in Colab, "
           "Binder or make lab to move its controls.")
CAPTION_ZH = "在运行中的笔记本里可以交互：这里显示的是它最初的样子。在 Colab、Binder 或 make lab 中运行本页即可移动控件。"


def _ref(value):
    return value[len("IPY_MODEL_"):] if isinstance(value, str) and value.startswith("IPY_MODEL_") else None


def _output_html(out) -> str:
    """One stored output (an Output widget's) as HTML."""
    if out.get("output_type") == "stream":
        return f"<pre>{html.escape(out.get('text', ''))}</pre>"
    if out.get("output_type") == "error":
        return f"<pre>{html.escape(out.get('ename', ''))}: {html.escape(out.get('evalue', ''))}</pre>"
    data = out.get("data", {})
    for mime in ("image/png", "image/jpeg"):
        if mime in data:
            payload = data[mime] if isinstance(data[mime], str) else "".join(data[mime])
            return f'<img alt="plot" src="data:{mime};base64,{payload.strip()}"/>'
    if "image/svg+xml" in data:
        return "".join(data["image/svg+xml"])
    if "text/html" in data:
        return "".join(data["text/html"])
    if "text/markdown" in data:
        from markdown_it import MarkdownIt

        return MarkdownIt("commonmark").enable("table").render("".join(data["text/markdown"]))
    if "text/latex" in data:
        return f'<div class="math notranslate nohighlight">{html.escape("".join(data["text/latex"]))}</div>'
    if "text/plain" in data:
        return f"<pre>{html.escape(''.join(data['text/plain']))}</pre>"
    return ""


def _control(name, s) -> str:
    """A control (slider, dropdown, ...) as a label with the value it started at."""
    label = html.escape(str(s.get("description") or ""))
    if "_options_labels" in s:
        labels = s["_options_labels"]
        idx = s.get("index")
        if isinstance(idx, (list, tuple)):
            value = ", ".join(labels[i] for i in idx)
        else:
            value = labels[idx] if isinstance(idx, int) and 0 <= idx < len(labels) else "—"
        value = f"{html.escape(str(value))} (of {html.escape(', '.join(map(str, labels)))})"
    elif name == "ButtonModel":
        return f'<span class="static-control">[{label}]</span>'
    elif "value" in s:
        value = s["value"]
        if isinstance(value, list):
            value = " – ".join(map(str, value))
        value = html.escape(str(value))
        if "min" in s and "max" in s:
            value += f" (range {s['min']}–{s['max']})"
    else:
        return ""
    return f'<span class="static-control">{label + ": " if label else ""}{value}</span>'


def tex_delimiters(value: str) -> str:
    """An HTMLMath widget's `$$...$$` and `$...$` (the lab's MathJax reads both) as `\\[...\\]` and `\\(...\\)`,
    the delimiters the book's MathJax 3 reads by default (it takes no single `$`); an escaped `\\$` stays."""
    value = re.sub(r"(?<!\\)\$\$(.+?)(?<!\\)\$\$", lambda m: f"\\[{m.group(1)}\\]", value, flags=re.S)
    return re.sub(r"(?<!\\)\$(.+?)(?<!\\)\$", lambda m: f"\\({m.group(1)}\\)", value, flags=re.S)


def widget_html(model_id, state, depth=0) -> str:
    """The widget `model_id` and its children, from the stored state, as static HTML."""
    entry = state.get(model_id)
    if entry is None or depth > 50:
        return ""
    name, s = entry["model_name"], entry["state"]
    if name in BOXES:
        inner = "".join(widget_html(_ref(c), state, depth + 1) for c in s.get("children", []) if _ref(c))
        cls = "static-row" if name in ("HBoxModel", "GridBoxModel") else "static-col"
        return f'<div class="{cls}">{inner}</div>'
    if name == "HTMLMathModel":  # typeset by the page's MathJax, which skips a notebook's output unless told
        return f'<div class="mathjax_process">{tex_delimiters(s.get("value", ""))}</div>'
    if name == "HTMLModel":
        return f"<div>{s.get('value', '')}</div>"
    if name == "LabelModel":
        return f"<div>{html.escape(str(s.get('value', '')))}</div>"
    if name == "ImageModel":
        for buf in entry.get("buffers", []):
            if buf.get("path") == ["value"] and buf.get("encoding", "base64") == "base64":
                fmt = s.get("format", "png")
                return f'<img alt="plot" src="data:image/{fmt};base64,{buf["data"]}"/>'
        return ""
    if name == "OutputModel":
        return "".join(_output_html(o) for o in s.get("outputs", []))
    if name.endswith("Model") and ("description" in s or "value" in s):
        return _control(name, s)
    return ""


def static_widgets(nb, caption=CAPTION) -> int:
    """Replace every widget view in `nb` by static HTML of its stored state; return how many."""
    state = nb.metadata.get("widgets", {}).get(STATE, {}).get("state", {})
    count = 0
    for cell in nb.cells:
        outputs = cell.get("outputs", [])
        for i, out in enumerate(outputs):
            view = out.get("data", {}).get(VIEW)
            if not view:
                continue
            body = widget_html(view["model_id"], state)
            outputs[i] = nbformat.v4.new_output(
                "display_data", data={"text/html": f'<div class="static-widget"><div class="static-caption">'
                                                   f'{html.escape(caption)}</div>{body}</div>'})
            count += 1
    nb.metadata.pop("widgets", None)  # no state left for a widget manager (and its CDN script) to load
    return count


def page_note(colab_url, binder_url, widgets, max_steps=None) -> str:
    """The note at the top of each page: where it ran, and where to run it (max_steps: its training was capped)."""
    note = ("This page is the notebook as it ran once on a CPU with the `cpu` preset, outputs included. "
            f"To run it yourself: [open in Colab]({colab_url}) (free GPU), [Binder]({binder_url}) (CPU), "
            "or `make lab` on a clone.")
    if max_steps is not None:
        note += (f" To keep this build short, every training run on this page ran with `UNIFIED_RL_MAX_STEPS={max_steps}`"
                 f" (at most {max_steps} step{'s' if max_steps != 1 else ''}), so its trained numbers are not those the text quotes; "
                 "`make book` runs it in full.")
    if widgets:
        note += (f" Its {widgets} interactive widget{'s' if widgets > 1 else ''} are shown as they first "
                 "appeared: plots, tables and each control's starting value; they move only in a live notebook.")
    return f"```{{note}}\n{note}\n```"


def page_note_zh(colab_url, binder_url, widgets, max_steps=None, executed=True) -> str:
    """The note at the top of a Chinese page (the Chinese edition of `page_note`, plus the step cap).
    executed=False: this build did not run the twin (its code is the English page's, which ran)."""
    if not executed:
        note = ("本次构建没有执行这个中文笔记本，所以本页没有输出：它的代码与英文版完全相同，英文页面上是执行后的全部输出。"
                f"自己运行：[在 Colab 中打开]({colab_url})（免费 GPU）、[Binder]({binder_url})（CPU），"
                "或在克隆的仓库中运行 `make lab`。")
        return f"```{{admonition}} 说明\n:class: note\n{note}\n```"
    note = ("本页是该笔记本在 CPU 上以 `cpu` 预设运行一次的结果，包含全部输出。自己运行："
            f"[在 Colab 中打开]({colab_url})（免费 GPU）、[Binder]({binder_url})（CPU），或在克隆的仓库中运行 `make lab`。")
    if max_steps is not None:
        note += (f"为控制构建时间，本页的每次训练都以 `UNIFIED_RL_MAX_STEPS={max_steps}` 运行（最多 {max_steps} 步），"
                 "所以训练得到的图表和数字与正文引用的完整运行不同：完整运行的输出见英文页面。")
    if widgets:
        note += f"本页的 {widgets} 个交互控件显示为它们最初的样子（图、表和每个控件的初始值），只有在运行中的笔记本里才能操作。"
    return f"```{{admonition}} 说明\n:class: note\n{note}\n```"


def switch_html(href, label, lang) -> str:
    """The language switch at the top of every page: a link to the same page in the other edition."""
    return (f'<p class="lang-switch"><a class="lang-switch-link" href="{html.escape(href)}" '
            f'hreflang="{lang}" lang="{lang}">{html.escape(label)}</a></p>')


def strip_setup_cells(nb, tag) -> int:
    """Drop the cells tagged `tag` (the Colab cells: noise on a static page)."""
    keep = [c for c in nb.cells if tag not in c.get("metadata", {}).get("tags", [])]
    dropped = len(nb.cells) - len(keep)
    nb.cells = keep
    return dropped



_DISPLAY = re.compile(r"^\$\$\n(.*?)\n\$\$$", re.S | re.M)


def amsmath_blocks(nb) -> int:
    r"""Display math holding a line break (`\\`, e.g. in cases) as a gather block; how many changed.

    Sphinx wraps such `$$` math in a split environment, where `\tag{n}` is an error; a gather block
    reaches MathJax as written, as the notebook's math does in JupyterLab.
    """
    changed = 0

    def gather(m):
        nonlocal changed
        if "\\\\" not in m.group(1):
            return m.group(0)
        changed += 1
        return "\\begin{gather}\n" + m.group(1) + "\n\\end{gather}"

    for cell in nb.cells:
        if cell.cell_type == "markdown":
            cell.source = _DISPLAY.sub(gather, cell.source)
    return changed
