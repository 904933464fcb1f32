"""The machinery every explorer shares: controls above an output, redrawn on every change.

An `Explorer` is an ipywidgets VBox of controls above an output (a table of numbers and a small
plot). For tests and for the notebooks' own asserts it is driven from Python: set
`ex.controls["beta"].value = 0.5` and read `ex.data` (the numbers shown) or `ex.table.value`.
Browser tests find the main control by the CSS class `url-main-control` and the output by
`url-explorer-output`. Plots are drawn on pyplot-free Figures and sent as PNG, so no figure leaks
and the widgets work in JupyterLab, Voila, nbval and plain Python alike.

Every slider keeps a draggable track: a description longer than `SHORT` characters becomes a
label of its own above the slider instead of eating the track (tests/browser measures the width).
"""

import contextlib
import html
import io

import ipywidgets as W

from unified_rl.course.i18n import t

MAIN, OUTPUT = "url-main-control", "url-explorer-output"
SHORT = 16  # characters that fit the description column; longer ones get a label line
DESCRIPTION_WIDTH, CONTROL_WIDTH = "120px", "480px"


def _slider(description, value, lo, hi, step, cls=W.FloatSlider, fmt=".2f"):
    """A slider whose track stays usable: a long description moves to a label above it."""
    label = None
    if len(description) > SHORT:
        label, description = description, ""
    kw = dict(value=value, min=lo, max=hi, step=step, description=description, continuous_update=False,
              style={"description_width": DESCRIPTION_WIDTH if description else "0px"},
              layout=W.Layout(width=CONTROL_WIDTH))
    s = cls(readout_format=fmt, **kw) if cls is W.FloatSlider else cls(**kw)
    s.url_label = label  # shown above the slider by Explorer
    return s


def _dropdown(description, options, value):
    """A dropdown whose description is never cut."""
    return W.Dropdown(options=options, value=value, description=description,
                      style={"description_width": DESCRIPTION_WIDTH}, layout=W.Layout(width="260px"))


def labelled(control):
    """The control, with its long description as a label line above it if it has one."""
    label = getattr(control, "url_label", None)
    if not label:
        return control
    return W.VBox([W.HTML(f"<small>{html.escape(label)}</small>"), control],
                  layout=W.Layout(margin="2px 0 0 0"))


class Explorer(W.VBox):
    """Controls + output, recomputed by `compute(**control values) -> (data, figure, rows)` on every change."""

    def __init__(self, title, controls, main, compute, note=""):
        self.controls, self.data, self.error, self._held, self.title = controls, {}, None, False, title
        self._compute = compute
        controls[main].add_class(MAIN)
        self.table, self.image = W.HTML(), W.Image(format="png", layout=W.Layout(max_width="900px"))
        self.output = W.VBox([self.table, self.image])
        self.output.add_class(OUTPUT)
        header = W.HTML(f"<b>{html.escape(title)}</b>" + (f"<br><small>{note}</small>" if note else ""))
        super().__init__([header, W.VBox([labelled(c) for c in controls.values()]), self.output])
        for c in controls.values():
            c.observe(lambda _: None if self._held else self.refresh(), names="value")
        self.refresh()

    def __repr__(self):  # the text/plain fallback where widgets do not render (static pages, logs)
        return t("w.explorer.repr", title=self.title)

    @contextlib.contextmanager
    def hold(self):
        """Change several controls with a single redraw: `with ex.hold(): ...`."""
        self._held = True
        try:
            yield self
        finally:
            self._held = False
            self.refresh()

    def refresh(self):
        """Recompute from the current control values and redraw; a bad input shows its message."""
        try:
            self.data, fig, rows = self._compute(**{k: c.value for k, c in self.controls.items()})
        except ValueError as e:  # e.g. rewards that are not a whole number of groups
            self.error = str(e)
            self.table.value = f'<span style="color:#cf222e">{html.escape(self.error)}</span>'
            return
        self.error = None
        self.table.value = _table(rows)
        buf = io.BytesIO()
        fig.savefig(buf, format="png", dpi=80)
        self.image.value = buf.getvalue()


def _table(rows):
    """An HTML table from a list of rows; the first row is the header; floats to 4 digits."""
    def fmt(v):
        return f"{v:.4f}" if isinstance(v, float) else html.escape(str(v))

    cells = ["".join(f"<{'th' if i == 0 else 'td'} style='padding:0 8px'>{fmt(v)}</{'th' if i == 0 else 'td'}>"
                     for v in row) for i, row in enumerate(rows)]
    return "<table>" + "".join(f"<tr>{c}</tr>" for c in cells) + "</table>"


def _num(v, spec=".3f"):
    return "—" if v is None else format(v, spec)
