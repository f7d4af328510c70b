"""Sliders that work in three places: live in Jupyter/Binder, and in the static HTML book.

A static page has no Python kernel behind it, so :class:`FrameSlider` renders every slider
position once, ahead of time, and ships the frames as PNG images inside a small HTML/JavaScript
control. In a live notebook, :meth:`FrameSlider.live` returns ipywidgets sliders that call the
same drawing function on demand, over the continuous range the frames were sampled from.
"""

from __future__ import annotations

import base64
import hashlib
import html
import io
import itertools
import json
import math
import numbers
from typing import Any, Callable, Sequence

import ipywidgets as widgets
import matplotlib.pyplot as plt
from matplotlib.figure import Figure
from PIL import Image

_SCRIPT = """
(function () {
  var root = document.getElementById(%(id)s);
  var frames = JSON.parse(root.querySelector("script.fs-frames").textContent);
  var labels = JSON.parse(root.querySelector("script.fs-labels").textContent);
  var img = root.querySelector("img.fs-frame");
  var sliders = root.querySelectorAll("input.fs-slider");
  function update() {
    var index = 0;
    sliders.forEach(function (s, k) {
      index = index * labels[k].length + parseInt(s.value, 10);
      s.parentNode.querySelector(".fs-value").textContent = labels[k][parseInt(s.value, 10)];
    });
    img.src = "data:image/png;base64," + frames[index];
    root.setAttribute("data-frame", index);
  }
  sliders.forEach(function (s) { s.addEventListener("input", update); });
  var hint = root.querySelector(".fs-hint");
  if (hint) { hint.parentNode.removeChild(hint); }
  update();
})();
"""


FRAME_DPI = 100
"""Resolution of slider frames: sharp on a desktop screen, still legible zoomed on a phone."""

FRAME_COLOURS = 128
"""Palette size of slider frames: a plot has few colours, and a palette PNG is 3-4x smaller."""

HINT = ("Precomputed frames: this slider moves once the notebook's scripts may run "
        "(trust the notebook, or run this cell). For sliders that redraw on demand, "
        "run the next cell.")
"""Shown in place of a working slider where a stored notebook's scripts are blocked."""

LIVE_HINT = "sliders that redraw; run this cell in a Jupyter kernel to see them"
"""What a stored notebook shows for :meth:`FrameSlider.live`'s sliders before the cell runs
(ipywidgets cuts a widget's text form at 110 characters: keep it shorter)."""


def figure_png(fig: Figure, dpi: int = FRAME_DPI, colours: int | None = None) -> bytes:
    """Render a matplotlib figure to PNG bytes (no software/version metadata) and close it.

    With ``colours``, the image is reduced to an adaptive palette of that many colours (the
    notebook stores every frame, so frames must stay small).
    """
    if not isinstance(fig, Figure):
        raise TypeError(f"fig must be a matplotlib Figure, got {type(fig).__name__}")
    if isinstance(dpi, bool) or not isinstance(dpi, numbers.Real):
        raise TypeError(f"dpi must be a number, got {type(dpi).__name__}")
    if not (dpi > 0 and math.isfinite(dpi)):
        raise ValueError(f"dpi must be a positive finite number, got {dpi!r}")
    if colours is not None:
        if isinstance(colours, bool) or not isinstance(colours, numbers.Integral):
            raise TypeError(f"colours must be None or an int, got "
                            f"{type(colours).__name__}")
        if not 2 <= colours <= 256:
            raise ValueError(f"colours must be in 2..256 (a palette), got {colours!r}")
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=dpi, metadata={"Software": None})
    plt.close(fig)
    if colours is None:
        return buffer.getvalue()
    image = Image.open(buffer).convert("RGB").quantize(colours, dither=Image.Dither.NONE)
    small = io.BytesIO()
    image.save(small, format="PNG", optimize=True)
    return small.getvalue()


def _label(value: Any) -> str:
    if isinstance(value, numbers.Integral):
        return str(int(value))
    if isinstance(value, numbers.Real):
        return f"{float(value):.3g}"
    return str(value)


def _check_values(name: str, values: Sequence[Any]) -> None:
    """A slider's values: a non-empty list, finite where numeric."""
    if isinstance(values, (str, bytes)) or not hasattr(values, "__len__") or len(values) == 0:
        raise ValueError(f"parameter {name!r} needs a non-empty list of values, got {values!r}")
    for value in values:  # a NaN or inf has no place on a slider
        if (isinstance(value, numbers.Real) and not isinstance(value, bool)
                and not math.isfinite(value)):
            raise ValueError(f"parameter {name!r} must hold finite numbers, "
                             f"got {value!r} in {list(values)!r}")


class FrameSlider:
    """Precomputed sliders over a function ``draw(**params) -> Figure``.

    Parameters
    ----------
    draw:
        Called once per combination of parameter values; must return a matplotlib ``Figure``
        (it is rendered and closed here).
    dpi:
        Resolution of the stored frames (at least 100, so that the book's figures stay sharp;
        frames are stored as palette PNGs to keep the notebook small).
    **params:
        One list of values per slider, e.g. ``u=[0.1, 0.5, 0.9], spike=[0, 3, 6]``. The frames
        cover the Cartesian product, so keep the product modest (about 40 frames or fewer).
        A parameter with one value is shown as fixed text, not as a slider;
        :meth:`live` can give it more values.
    initial:
        Optional mapping from parameter name to the value shown first (default: the middle value).
    """

    def __init__(self, draw: Callable[..., Figure], *, dpi: int = FRAME_DPI,
                 initial: dict[str, Any] | None = None, **params: Sequence[Any]) -> None:
        if not callable(draw):
            raise TypeError(f"draw must be callable, got {type(draw).__name__}")
        if isinstance(dpi, bool) or not isinstance(dpi, int) or dpi < FRAME_DPI:
            raise ValueError(f"dpi must be an int of at least {FRAME_DPI} (frames legible on "
                             f"a phone and sharp on a laptop), got {dpi!r}")
        if not params:
            raise ValueError("FrameSlider needs at least one parameter list, e.g. u=[0.1, 0.5, 0.9]")
        for name, values in params.items():
            _check_values(name, values)
        self.draw = draw
        self.dpi = dpi
        self.params = {name: list(values) for name, values in params.items()}
        self.initial = {name: values[len(values) // 2] for name, values in self.params.items()}
        for name, value in (initial or {}).items():
            if name not in self.params or value not in self.params[name]:
                raise ValueError(f"initial value {name}={value!r} is not one of the slider's values")
            self.initial[name] = value
        self.frames: list[str] = []
        for combination in itertools.product(*self.params.values()):
            figure = draw(**dict(zip(self.params, combination)))
            if not isinstance(figure, Figure):
                raise TypeError(f"draw must return a matplotlib Figure, got {type(figure).__name__}")
            png = figure_png(figure, dpi, colours=FRAME_COLOURS)
            self.frames.append(base64.b64encode(png).decode("ascii"))
        signature = json.dumps([getattr(draw, "__qualname__", "draw"),
                                {k: [_label(v) for v in vs] for k, vs in self.params.items()}])
        self.element_id = "frameslider-" + hashlib.sha1(signature.encode()).hexdigest()[:12]

    def __len__(self) -> int:
        return len(self.frames)

    def __repr__(self) -> str:
        sizes = ", ".join(f"{name}: {len(values)} values" for name, values in self.params.items())
        return f"FrameSlider({sizes}; {len(self)} frames)"

    def _repr_html_(self) -> str:
        # A parameter with one value is fixed: shown as text, without a slider that cannot
        # move (it adds nothing to a frame's index, so the script skips it).
        moving = {name: values for name, values in self.params.items() if len(values) > 1}
        labels = [[_label(v) for v in values] for values in moving.values()]
        start = {name: values.index(self.initial[name])  # each slider's first position
                 for name, values in self.params.items()}
        style = "display:block;font-family:sans-serif;font-size:0.9em"
        fixed = "".join(
            f'<span class="fs-fixed" style="{style}">{html.escape(name)} '
            f'{html.escape(_label(values[0]))}</span>'
            for name, values in self.params.items() if name not in moving)
        controls = fixed + "".join(
            f'<label style="{style}">{html.escape(name)} '
            f'<input class="fs-slider" type="range" min="0" max="{len(values) - 1}" step="1" '
            f'value="{k}" aria-label="{html.escape(name)}" data-param="{html.escape(name)}"> '
            f'<span class="fs-value">{html.escape(labels[j][k])}</span></label>'
            for j, (name, values) in enumerate(moving.items()) for k in [start[name]])
        index = 0
        for name, values in self.params.items():
            index = index * len(values) + start[name]
        return (
            f'<div class="seqlearn-frameslider" id="{self.element_id}">'
            f'<img class="fs-frame" alt="interactive figure" style="max-width:100%" '
            f'src="data:image/png;base64,{self.frames[index]}">'
            f"{controls}"
            f'<p class="fs-hint" style="font-family:sans-serif;font-size:0.85em;'
            f'color:#555">{html.escape(HINT)}</p>'
            f'<script type="application/json" class="fs-frames">{json.dumps(self.frames)}</script>'
            f'<script type="application/json" class="fs-labels">{json.dumps(labels)}</script>'
            f"<script>{_SCRIPT % {'id': json.dumps(self.element_id)}}</script>"
            "</div>"
        )

    def live(self, **params: Sequence[Any]):
        """Return ipywidgets sliders that redraw on demand (for Jupyter and Binder).

        Numeric parameters get continuous sliders over the range of their frame values; other
        parameters get a slider over the listed values. The picture is an ``Image`` widget
        updated in place, so the cell's output is the same wherever it runs.

        ``params`` gives some sliders other values than the stored frames, e.g.
        ``live(date=all_dates)`` where the frames hold one date: a live frame costs nothing
        until it is drawn. A slider starts at its initial value if it is among them.
        """
        values_of = dict(self.params)
        for name, values in params.items():
            if name not in self.params:
                raise ValueError(f"live() got a parameter {name!r} that is not one of the "
                                 f"sliders {list(self.params)}")
            _check_values(name, values)
            values_of[name] = list(values)
        controls = {}
        for name, values in values_of.items():
            start = self.initial[name] if self.initial[name] in values else values[0]
            numeric = all(isinstance(v, numbers.Real) and not isinstance(v, bool) for v in values)
            lo, hi = (min(values), max(values)) if numeric else (None, None)
            if numeric and all(isinstance(v, numbers.Integral) for v in values):
                controls[name] = widgets.IntSlider(value=start, min=lo, max=hi,
                                                   description=name, continuous_update=False)
            elif numeric and hi > lo:
                controls[name] = widgets.FloatSlider(value=start, min=lo, max=hi,
                                                     step=(hi - lo) / 100, description=name,
                                                     continuous_update=False)
            else:
                controls[name] = widgets.SelectionSlider(
                    options=[(_label(v), v) for v in values], value=start,
                    description=name, continuous_update=False)
        # The picture fits the window: sliders and figure are seen together.
        picture = widgets.Image(format="png", layout=widgets.Layout(
            max_width="100%", max_height="65vh", width="auto", height="auto",
            object_fit="contain"))

        def redraw(_change: Any = None) -> None:
            values = {n: c.value for n, c in controls.items()}
            picture.value = figure_png(self.draw(**values), self.dpi)

        for control in controls.values():
            control.observe(redraw, names="value")
        redraw()
        return LiveSliders(list(controls.values()) + [picture])


class LiveSliders(widgets.VBox):
    """The sliders and picture of :meth:`FrameSlider.live`, with a short, stable text form."""

    def __repr__(self) -> str:
        names = ", ".join(c.description for c in self.children
                          if hasattr(c, "description") and c.description)
        return f"LiveSliders({names}): {LIVE_HINT}"
