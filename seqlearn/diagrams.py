r"""Architecture diagrams of Parts III–V, drawn with matplotlib in one style.

Every function returns a :class:`matplotlib.figure.Figure` built without pyplot (nothing
is shown or kept behind the caller's back); :func:`show` turns one into an image with
alt text for every renderer. The same kind of thing looks the same in every diagram:

=========================  ===========================================================
colour (``KINDS`` key)     what it marks
=========================  ===========================================================
grey (``"token"``)         tokens, inputs and outputs
blue (``"encoder"``)       what is read: encoder states, the memory, keys and values
orange (``"decoder"``)     what asks: decoder states, queries, the MemN2N state
green (``"context"``)      what a read returns: the code, a context, a hop's read
purple (``"attention"``)   attention operations: scores, softmax, attention sub-layers
red (``"linear"``)         learned linear maps and the feed-forward network
yellow (``"norm"``)        LayerNorm
=========================  ===========================================================

Attention weights are cells coloured with :data:`seqlearn.plots.ATTENTION_CMAP` on the
scale 0 to 1; a circled "+" adds the arrows that enter it; a dot splits a line in two.
Each figure is at most :data:`MAX_WIDTH` inches wide and writes every label in
:data:`FONT_SIZE`-point type, so that a figure shrunk to a phone's 380 pixels still
shows its text at 9 points or more (``FONT_SIZE * 3.8 / MAX_WIDTH >= 9``). The drawing
primitives work in inches: one axes covers the whole figure with data units of an inch.
"""

from __future__ import annotations

import base64
import html
from dataclasses import dataclass
from typing import Any, Sequence

import matplotlib
import numpy as np
from matplotlib.axes import Axes
from matplotlib.colors import to_rgb
from matplotlib.figure import Figure
from matplotlib.font_manager import FontProperties
from matplotlib.patches import Circle, FancyArrowPatch, FancyBboxPatch, Patch, Rectangle
from matplotlib.path import Path
from matplotlib.textpath import TextPath

from seqlearn.plots import ATTENTION_CMAP
from seqlearn.validate import check_int, check_real
from seqlearn.widgets import FRAME_COLOURS, FRAME_DPI, figure_png

KINDS = {
    "token": "#eeeeee",
    "encoder": "#cfe2f3",
    "decoder": "#fce5cd",
    "context": "#d9ead3",
    "attention": "#d9d2e9",
    "linear": "#f4cccc",
    "norm": "#fff2cc",
}
"""Fill colour of each kind of box (the table in the module docstring)."""

FONT_SIZE = 13.0
"""The size of every label, in points."""

MAX_WIDTH = 5.4
"""The widest figure, in inches: ``FONT_SIZE * 3.8 / MAX_WIDTH >= 9``."""

MAX_HOPS = 6
"""The most hops :func:`memn2n_diagram` draws (the figure grows by a row per hop)."""

INK = "#333333"  # edges, arrows and lines
BOX_H = 0.38  # height of a one-line box, inches
WEIGHT_CMAP = matplotlib.colormaps[ATTENTION_CMAP]


# ------------------------------------------------------------------------- primitives

@dataclass(frozen=True)
class _Box:
    """A drawn shape: centre ``(x, y)`` and size ``(w, h)`` in inches."""

    x: float
    y: float
    w: float
    h: float

    def at(self, dx: float = 0.0, dy: float = 0.0) -> tuple[float, float]:
        """A point relative to the centre, in half widths and half heights."""
        return (self.x + dx * self.w / 2, self.y + dy * self.h / 2)

    top = property(lambda self: self.at(0, 1))
    bottom = property(lambda self: self.at(0, -1))
    left = property(lambda self: self.at(-1, 0))
    right = property(lambda self: self.at(1, 0))


def _canvas(width: float) -> tuple[Figure, Axes]:
    """A figure ``width`` inches wide whose one axes has data units of inches.

    Draw upwards from ``y = 0``, then call :func:`_finish` with the top of the drawing.
    """
    fig = Figure(figsize=(width, 1.0))
    ax = fig.add_axes((0, 0, 1, 1))
    ax.set_xlim(0, width)
    ax.axis("off")
    return fig, ax


def _finish(fig: Figure, ax: Axes, top: float, title: str) -> Figure:
    """Make the figure as tall as the drawing plus a bold title line above it."""
    height = top + 0.62
    fig.set_size_inches(fig.get_size_inches()[0], height)
    ax.set_ylim(0, height)
    _label(ax, fig.get_size_inches()[0] / 2, height - 0.24, title, weight="bold")
    return fig


def _label(ax: Axes, x: float, y: float, text: str, **style: Any) -> None:
    """Text in the diagrams' font, centred unless ``ha`` / ``va`` say otherwise."""
    ax.text(x, y, text, **{"ha": "center", "va": "center", "fontsize": FONT_SIZE,
                           "color": "black", **style})


def _box(ax: Axes, x: float, y: float, text: str, kind: str, w: float,
         h: float = BOX_H) -> _Box:
    """A rounded box of a kind of :data:`KINDS` with a centred label."""
    ax.add_patch(FancyBboxPatch((x - w / 2, y - h / 2), w, h,
                                boxstyle="round,pad=0,rounding_size=0.06",
                                facecolor=KINDS[kind], edgecolor=INK, linewidth=1.0,
                                gid="diagram-box"))
    if text:
        _label(ax, x, y, text, gid="diagram-box-label")
    return _Box(x, y, w, h)


def _cards(ax: Axes, x: float, y: float, text: str, kind: str, w: float,
           h: float = BOX_H) -> _Box:
    """A stack of three boxes, the front one labelled: one card per head."""
    for k in (2, 1):
        _box(ax, x + 0.07 * k, y + 0.07 * k, "", kind, w, h)
    return _box(ax, x, y, text, kind, w, h)


def _add(ax: Axes, x: float, y: float, r: float = 0.14) -> _Box:
    """A circled "+": the sum of the arrows that enter it."""
    ax.add_patch(Circle((x, y), r, facecolor="white", edgecolor=INK, linewidth=1.0))
    ax.plot([x - 0.6 * r, x + 0.6 * r], [y, y], color=INK, linewidth=1.2)
    ax.plot([x, x], [y - 0.6 * r, y + 0.6 * r], color=INK, linewidth=1.2)
    return _Box(x, y, 2 * r, 2 * r)


def _arrow(ax: Axes, *points: tuple[float, float], head: bool = True) -> None:
    """An arrow along straight segments through ``points``, its head at the last."""
    codes = [Path.MOVETO] + [Path.LINETO] * (len(points) - 1)
    ax.add_patch(FancyArrowPatch(path=Path(points, codes),
                                 arrowstyle="-|>" if head else "-", mutation_scale=12,
                                 color=INK, linewidth=1.2, shrinkA=0, shrinkB=0))


def _dot(ax: Axes, x: float, y: float) -> None:
    """Where a line splits in two (a residual branch, a state used twice)."""
    ax.add_patch(Circle((x, y), 0.04, color=INK))


def _weight_cells(ax: Axes, x0: float, y: float, weights: Sequence[float],
                  labels: Sequence[str], w: float, h: float = BOX_H) -> list[_Box]:
    """A row of cells from ``x0`` coloured by weight (0 to 1) like an attention map."""
    cells = []
    for n, (weight, text) in enumerate(zip(weights, labels)):
        x = x0 + (n + 0.5) * w
        colour = WEIGHT_CMAP(weight)
        ax.add_patch(Rectangle((x - w / 2, y - h / 2), w, h, facecolor=colour,
                               edgecolor=INK, linewidth=1.0, gid="diagram-box"))
        if text:
            r, g, b = to_rgb(colour)
            light = 0.299 * r + 0.587 * g + 0.114 * b > 0.5
            _label(ax, x, y, text, color="black" if light else "white",
                   gid="diagram-box-label")
        cells.append(_Box(x, y, w, h))
    return cells


def _text_width(text: str) -> float:
    """Width in inches of ``text`` (mathtext included) in the diagrams' font."""
    path = TextPath((0, 0), text, size=FONT_SIZE, prop=FontProperties())
    return float(path.get_extents().width) / 72


def _check_norm(norm: Any) -> bool:
    """``"post"`` or ``"pre"``; True for pre-norm (``norm_first=True``)."""
    if not isinstance(norm, str):
        raise TypeError(f"norm must be the string 'post' or 'pre', got "
                        f"{type(norm).__name__}")
    if norm not in ("post", "pre"):
        raise ValueError(f"norm must be 'post' or 'pre', got {norm!r}")
    return norm == "pre"


# ---------------------------------------------------------------------------- Part III

def seq2seq_diagram() -> Figure:
    r"""The encoder–decoder of the seq2seq chapter (eq-s2s-enc to eq-s2s-init).

    Left, the encoder GRU reads :math:`x_1 \dots x_{T_x}` into the states
    :math:`\overrightarrow{h}_i`; the last one is the code :math:`c`. Right, the decoder
    starts from :math:`s_0 = \tanh(W_s c + b_s)`; step :math:`t` reads the previous
    token :math:`y_{t-1}` joined to a copy of :math:`c` (its input
    :math:`[E_y y_{t-1}; c]`), and its state :math:`s_t` gives :math:`y_t`, which is fed
    back as the next step's input (the true token under teacher forcing, the model's own
    in greedy decoding) until :math:`\langle\text{eos}\rangle`. One encoder direction is
    drawn; a bidirectional encoder adds the backward states to every :math:`h_i` and to
    the code.
    """
    fig, ax = _canvas(MAX_WIDTH)
    y_in, y_state, y_out, w = 0.4, 1.4, 2.4, 0.58
    ends = []
    for x, i in ((0.5, "1"), (1.75, "T_x")):
        state = rf"$\overrightarrow{{h}}_{{{i}}}$"
        ends.append(_box(ax, x, y_state, state, "encoder", w))
        _arrow(ax, _box(ax, x, y_in, f"$x_{{{i}}}$", "token", w).top, ends[-1].bottom)
    _arrow(ax, ends[0].right, (0.95, y_state))
    _label(ax, 1.125, y_state, r"$\cdots$")
    _arrow(ax, (1.3, y_state), ends[1].left)
    _label(ax, 1.125, y_out, "encoder")
    code = _box(ax, 2.42, y_state, "$c$", "context", 0.42)
    _arrow(ax, ends[1].right, code.left)
    previous = _box(ax, 3.08, y_state, "$s_0$", "decoder", 0.5)
    _arrow(ax, code.right, previous.left)
    _label(ax, 3.0, y_out, "decoder")
    steps = [(3.92, 1, r"$\langle\mathrm{bos}\rangle$", "$y_1$"),
             (4.9, 2, "$y_1$", r"$\langle\mathrm{eos}\rangle$")]
    outputs = []
    for x, t, given, token in steps:
        cell = _box(ax, x, y_state, f"$s_{t}$", "decoder", 0.5)
        _arrow(ax, previous.right, cell.left)
        # the input [E_y y_{t-1}; c]: the previous token joined to a copy of the code
        width = 0.56 if "bos" in given else 0.42
        fed = _box(ax, x + 0.15 - width / 2, y_in, given, "token", width)
        _box(ax, x + 0.3, y_in, "$c$", "context", 0.3)
        _arrow(ax, (x, y_in + BOX_H / 2), cell.bottom)
        outputs.append(_box(ax, x, y_out, token, "token", 0.58 if t == 2 else 0.44))
        _arrow(ax, cell.top, outputs[-1].bottom)
        previous = cell
    # y_1 is fed back as the input of step 2
    gap = (steps[0][0] + 0.25 + fed.left[0]) / 2
    _arrow(ax, outputs[0].right, (gap, y_out), (gap, y_in), fed.left)
    return _finish(fig, ax, y_out + BOX_H / 2, "Encoder–decoder")


def bahdanau_step_diagram() -> Figure:
    r"""One decoder step of the attention model (eq-att-weights to eq-att-additive).

    The previous decoder state :math:`s_{t-1}` is scored against every encoder state
    :math:`h_i` by the additive score :math:`e_{t,i} = w^\top \tanh(W_q s_{t-1} +
    W_k h_i)`; a softmax over :math:`i` gives the weights :math:`\alpha_{t,i}` (coloured
    as in the attention maps), and their weighted sum of the encoder states is the
    context :math:`c_t`. The GRU reads :math:`[E y_{t-1}; c_t]` with the state
    :math:`s_{t-1}` and returns :math:`s_t`; the output layer reads
    :math:`[s_t; c_t; E y_{t-1}]` and gives :math:`p(y_t \mid y_{<t}, x)`.
    """
    fig, ax = _canvas(MAX_WIDTH)
    xs, w = [2.6, 3.45, 4.85], 0.7
    rows = dict(h=0.75, bus=1.22, e=1.7, softmax=2.45, alpha=3.15, c=3.9, s=4.6,
                out=5.3)
    _label(ax, MAX_WIDTH / 2, 0.22,
           r"$e_{t,i} = w^\top \tanh(W_q\, s_{t-1} + W_k\, h_i)$")
    names = ("1", "2", "T_x")
    states = [_box(ax, x, rows["h"], f"$h_{{{i}}}$", "encoder", w)
              for x, i in zip(xs, names)]
    scores = [_box(ax, x, rows["e"], f"$e_{{t,{i}}}$", "attention", w)
              for x, i in zip(xs, names)]
    for row in ("h", "e"):
        _label(ax, 4.15, rows[row], r"$\cdots$")
    for h, e in zip(states, scores):
        _arrow(ax, h.at(0.35, 1), e.at(0.35, -1))
    # s_{t-1} is scored against every encoder state: a line under the score row
    prev = _box(ax, 0.75, rows["bus"], "$s_{t-1}$", "decoder", 0.75)
    _arrow(ax, prev.right, (scores[-1].at(-0.35)[0], rows["bus"]), head=False)
    for e in scores:
        if e is not scores[-1]:
            _dot(ax, e.at(-0.35)[0], rows["bus"])
        _arrow(ax, (e.at(-0.35)[0], rows["bus"]), e.at(-0.35, -1))
    left, right = xs[0] - w / 2, xs[-1] + w / 2
    middle = (left + right) / 2
    soft = _box(ax, middle, rows["softmax"], r"softmax over $i$", "attention",
                right - left)
    for e in scores:
        _arrow(ax, e.top, (e.x, soft.bottom[1]))
    alphas = _weight_cells(ax, left, rows["alpha"], [0.15, 0.7, 0.15],
                           [rf"$\alpha_{{t,{i}}}$" for i in names], (right - left) / 3)
    context = _box(ax, middle, rows["c"], r"$c_t = \Sigma_i\, \alpha_{t,i}\, h_i$",
                   "context", right - left)
    for cell in alphas:
        _arrow(ax, (cell.x, soft.top[1]), cell.bottom)
        _arrow(ax, cell.top, (cell.x, context.bottom[1]))
    # the decoder's GRU: input [E y_{t-1}; c_t], state s_{t-1}
    gru = _box(ax, 0.95, rows["c"], "GRU", "decoder", 1.1)
    token = _box(ax, 1.2, rows["alpha"] - 0.05, "$y_{t-1}$", "token", 0.6)
    _arrow(ax, token.top, (token.x, gru.bottom[1]))
    _arrow(ax, prev.top, (prev.x, gru.bottom[1]))
    _arrow(ax, context.left, gru.right)
    state = _box(ax, gru.x, rows["s"], "$s_t$", "decoder", 0.6)
    _arrow(ax, gru.top, state.bottom)
    out = _box(ax, 2.75, rows["out"], r"softmax$(W_o [s_t; c_t; E y_{t-1}] + b_o)$",
               "linear", 4.4)
    _arrow(ax, state.top, (state.x, out.bottom[1]))
    _arrow(ax, context.top, (context.x, out.bottom[1]))
    _arrow(ax, out.top, (out.x, out.top[1] + 0.2))
    _label(ax, out.x, out.top[1] + 0.4, r"$p(y_t \mid y_{<t}, x)$")
    return _finish(fig, ax, out.top[1] + 0.55, "One decoder step with attention")


READOUT_EXAMPLE = dict(
    query=np.array([2.0, 1.0]),
    keys=np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0], [-1.0, 0.0]]),
    values=np.array([[1.0, 0.0], [0.0, 1.0], [2.0, 2.0], [0.0, -1.0]]))
"""The default of :func:`attention_readout_diagram`: a query, four keys and values."""


def _numbers(x: Any, name: str, spec: str, limits: Sequence[int]) -> np.ndarray:
    """A finite float array of shape ``spec`` with sizes from 1 to ``limits``."""
    if hasattr(x, "detach"):
        x = x.detach().cpu().numpy()
    try:
        a = np.asarray(x)
    except ValueError:  # ragged nested lists
        raise ValueError(f"{name} must have shape {spec}, got ragged rows") from None
    if a.dtype.kind not in "iuf":
        raise TypeError(f"{name} must hold real numbers, got dtype {a.dtype}")
    a = a.astype(float)
    if a.ndim != len(limits) or not all(1 <= s <= m for s, m in zip(a.shape, limits)):
        raise ValueError(f"{name} must have shape {spec} with sizes at most "
                         f"{tuple(limits)}, got {a.shape}")
    if not np.isfinite(a).all():
        raise ValueError(f"{name} contains NaN or infinity")
    return a


def _vector(v: np.ndarray) -> str:
    return "(" + ", ".join(f"{x:.1f}" for x in v) + ")"


def attention_readout_diagram(query: Any = None, keys: Any = None, values: Any = None,
                              *, scale: float | None = None) -> Figure:
    r"""Scores, weights and context of one query, with numbers (eq-att-qkv).

    For a query :math:`q_t` (shape ``(d_k,)``), keys :math:`k_i` (``(n, d_k)``) and
    values :math:`v_i` (``(n, d_v)``), a row per key shows the key and the value, the
    score :math:`e_{t,i} = q_t^\top k_i / \sqrt{d_k}` as a bar, the weight
    :math:`\alpha_{t,i} = \operatorname{softmax}_i e_{t,i}` as a bar coloured like the
    attention maps, and the bottom line the context
    :math:`c_t = \sum_i \alpha_{t,i} v_i`. ``scale`` replaces :math:`1/\sqrt{d_k}`.
    Give all three arrays (NumPy, torch or nested lists; at most 6 keys and 2
    dimensions, so that every number stays legible on a phone) or none for the example
    :data:`READOUT_EXAMPLE`.
    """
    given = [a is not None for a in (query, keys, values)]
    if any(given) and not all(given):
        raise ValueError("give query, keys and values together, or none of them")
    if not any(given):
        query, keys, values = (READOUT_EXAMPLE[k] for k in ("query", "keys", "values"))
    q = _numbers(query, "query", "(d_k,)", (2,))
    k = _numbers(keys, "keys", "(n, d_k)", (6, 2))
    v = _numbers(values, "values", "(n, d_v)", (6, 2))
    if k.shape[1] != q.shape[0]:
        raise ValueError(f"keys must have shape (n, d_k={q.shape[0]}) like the query, "
                         f"got {k.shape}")
    if v.shape[0] != k.shape[0]:
        raise ValueError(f"values must have shape (n={k.shape[0]}, d_v) like the keys, "
                         f"got {v.shape}")
    s = (1 / np.sqrt(q.shape[0]) if scale is None
         else check_real(scale, "scale", positive=True))
    e = s * (k @ q)  # (n,) scores
    alpha = np.exp(e - e.max())
    alpha = alpha / alpha.sum()  # (n,) weights
    c = alpha @ v  # (d_v,) context
    # columns, left to right: keys, values, score bars, weight bars (inches)
    texts = {"key": [_vector(x) for x in k], "value": [_vector(x) for x in v]}
    widths = {name: max(map(_text_width, column)) + 0.22
              for name, column in texts.items()}
    gaps = [0.3, 0.12, 0.25, 0.2, 0.12]  # left margin, between columns, right margin
    bars = (MAX_WIDTH - sum(gaps) - widths["key"] - widths["value"]) / 2
    if bars < 1.0:
        raise ValueError("the keys' and values' numbers are too long to draw legibly: "
                         "use smaller numbers")
    edges = np.cumsum([gaps[0], widths["key"], gaps[1], widths["value"], gaps[2], bars,
                       gaps[3], bars])
    columns = dict(key=edges[0:2], value=edges[2:4], score=edges[4:6],
                   weight=edges[6:8])
    fig, ax = _canvas(MAX_WIDTH)
    result = rf"$c_t = \Sigma_i\, \alpha_{{t,i}}\, v_i$ = {_vector(c)}"
    _box(ax, MAX_WIDTH / 2, 0.35, result, "context", _text_width(result) + 0.4)
    factor = r"/\sqrt{d_k}" if scale is None else rf"\cdot {s:.3g}"
    _label(ax, MAX_WIDTH / 2, 0.9, rf"$e_{{t,i}} = q_t^\top k_i {factor}$,   "
           r"$\alpha_{t,i} = \mathrm{softmax}_i\, e_{t,i}$")
    n, bar_h, number = len(e), 0.3, 0.5  # rows, bar height, room for a bar's number
    rows = [1.5 + 0.5 * (n - 1 - i) for i in range(n)]
    head = rows[0] + 0.5
    for name, text in (("key", "key $k_i$"), ("value", "value $v_i$"),
                       ("score", "score $e_{t,i}$"),
                       ("weight", r"weight $\alpha_{t,i}$")):
        _label(ax, sum(columns[name]) / 2, head, text)
    query_text = f"query $q_t$ = {_vector(q)}"
    box = _box(ax, MAX_WIDTH / 2, head + 0.62, query_text, "decoder",
               _text_width(query_text) + 0.3)
    lo, hi = min(e.min(), 0.0), max(e.max(), 0.0)
    x0, x1 = columns["score"][0], columns["score"][1] - number
    where = (lambda value: x0 + (x1 - x0) * (value - lo) / (hi - lo)) if hi > lo else (
        lambda value: x0)
    w0, w1 = columns["weight"][0], columns["weight"][1] - number
    for i, y in enumerate(rows):
        _label(ax, 0.15, y, f"{i + 1}")
        for name in ("key", "value"):
            _box(ax, sum(columns[name]) / 2, y, texts[name][i], "encoder",
                 columns[name][1] - columns[name][0])
        start, end = sorted((where(0.0), where(e[i])))
        ax.add_patch(Rectangle((start, y - bar_h / 2), end - start, bar_h,
                               facecolor=KINDS["attention"], edgecolor=INK,
                               linewidth=1.0))
        _label(ax, columns["score"][1], y, f"{e[i]:.2f}", ha="right")
        ax.add_patch(Rectangle((w0, y - bar_h / 2), (w1 - w0) * alpha[i], bar_h,
                               facecolor=WEIGHT_CMAP(alpha[i]), edgecolor=INK,
                               linewidth=1.0))
        _label(ax, columns["weight"][1], y, f"{alpha[i]:.2f}", ha="right")
    for x in (where(0.0), w0):  # the zero of each bar chart
        ax.plot([x, x], [rows[-1] - bar_h / 2 - 0.05, head - 0.22], color=INK,
                linewidth=1.0)
    return _finish(fig, ax, box.top[1] + 0.05, "One query reads the keys and values")


# ----------------------------------------------------------------------------- Part IV

def multi_head_diagram() -> Figure:
    r"""Multi-head self-attention (eq-sa-head, eq-sa-multihead).

    The input :math:`X` is projected by :math:`W^Q_n, W^K_n, W^V_n` into the queries,
    keys and values :math:`Q_n, K_n, V_n` of each head (the stacked cards: :math:`h`
    heads of :math:`d_h = d_{\text{model}}/h` columns each, split from one projection of
    width :math:`d_{\text{model}}`); every head attends with the scale
    :math:`1/\sqrt{d_h}`; the heads are concatenated and mixed by :math:`W^O`.
    """
    fig, ax = _canvas(MAX_WIDTH)
    xs, y = [1.05, 2.55, 4.05], dict(x=0.45, proj=1.4, head=2.6, cat=3.6, out=4.35,
                                     y=5.0)
    source = _box(ax, xs[1], y["x"], "$X$", "token", 0.6)
    split = y["x"] + 0.38
    heads = _cards(ax, xs[1], y["head"], r"$\mathrm{head}_n = \mathrm{softmax}\left("
                   r"Q_n K_n^\top / \sqrt{d_h}\right) V_n$", "attention", 4.1, 0.5)
    for x, name in zip(xs, "QKV"):
        proj = _cards(ax, x, y["proj"], f"$W^{name}_n$", "linear", 0.8)
        _arrow(ax, source.top, (source.x, split), (x, split), proj.bottom)
        _arrow(ax, proj.top, (x, heads.bottom[1]))
        _label(ax, x + 0.28, (proj.top[1] + heads.bottom[1]) / 2 + 0.04, f"${name}_n$")
    _dot(ax, source.x, split)
    _label(ax, MAX_WIDTH - 0.06, y["proj"] + 0.07, "$h$ heads", ha="right")
    parts = [_box(ax, xs[1] + dx, y["cat"], text, "token", 1.0) for dx, text in (
        (-1.0, r"$\mathrm{head}_1$"), (0.0, r"$\cdots$"), (1.0, r"$\mathrm{head}_h$"))]
    for part in parts:
        _arrow(ax, (part.x, heads.top[1] + 0.07), part.bottom)
    _label(ax, parts[0].left[0] - 0.08, y["cat"], "concat", ha="right")
    mix = _box(ax, xs[1], y["out"], "$W^O$", "linear", 0.8)
    _arrow(ax, parts[1].top, mix.bottom)
    out = _box(ax, xs[1], y["y"], r"$\mathrm{MultiHead}(X)$", "token", 2.0)
    _arrow(ax, mix.top, out.bottom)
    return _finish(fig, ax, out.top[1], "Multi-head attention")


def mask_diagram(T: int = 6, length: int = 4) -> Figure:
    r"""The causal and the padding mask of the self-attention chapter (eq-sa-masks).

    Two :math:`T \times T` matrices :math:`m_{t,i}`, rows the query position :math:`t`
    (top to bottom), columns the key position :math:`i`. The causal mask allows
    :math:`i \le t` (the lower triangle and the diagonal); the padding mask of a
    sequence of :math:`L_b` = ``length`` real tokens followed by padding allows
    :math:`i \le L_b` in every row (the padded queries still read the real keys; their
    outputs are ignored later). White cells may be attended; dark hatched cells get the
    score :math:`-\infty` before the softmax.
    """
    T = check_int(T, "T", minimum=2, maximum=8)
    length = check_int(length, "length", minimum=1, maximum=T)
    t, i = np.arange(1, T + 1)[:, None], np.arange(1, T + 1)[None, :]  # query, key
    masks = {r"causal: $i \leq t$": i <= t,
             rf"padding: $i \leq L_b = {length}$": np.broadcast_to(i <= length, (T, T))}
    allowed, masked, hatch = "white", "#555555", "//"
    fig = Figure(figsize=(MAX_WIDTH, 3.4))
    for n, (title, mask) in enumerate(masks.items()):
        ax = fig.add_axes((0.1 + 0.48 * n, 0.24, 0.37, 0.6))
        for (row, col), ok in np.ndenumerate(mask):
            ax.add_patch(Rectangle((col + 0.5, row + 0.5), 1, 1, edgecolor=INK,
                                   linewidth=0.8, facecolor=allowed if ok else masked,
                                   hatch=None if ok else hatch))
        ax.set(xlim=(0.5, T + 0.5), ylim=(T + 0.5, 0.5), aspect="equal")
        positions = range(1, T + 1)
        ax.set_xticks(positions, [str(p) for p in positions], fontsize=FONT_SIZE)
        ax.set_yticks(positions, [str(p) for p in positions], fontsize=FONT_SIZE)
        ax.tick_params(length=0, pad=3)
        ax.xaxis.tick_top()
        ax.set_title(title, fontsize=FONT_SIZE, pad=24)
        ax.set_xlabel("key $i$", fontsize=FONT_SIZE, labelpad=4)
        ax.set_ylabel("query $t$", fontsize=FONT_SIZE, labelpad=4)
        for side in ax.spines.values():
            side.set_visible(False)
    fig.legend(handles=[Patch(facecolor=allowed, edgecolor=INK, label="may attend"),
                        Patch(facecolor=masked, edgecolor=INK, hatch=hatch,
                              label=r"masked: score $-\infty$")],
               loc="lower center", ncols=2, fontsize=FONT_SIZE, frameon=False,
               bbox_to_anchor=(0.5, 0.0), handlelength=1.4)
    return fig


# The sub-layers of each layer as seqlearn.transformer_layers orders them: (label, kind,
# its LayerNorm, named like norm1 .. norm3); the decoder's second reads the memory M.
_SUBLAYERS = {
    "encoder": [("self-attention", "attention", "LayerNorm$_1$"),
                ("feed-forward", "linear", "LayerNorm$_2$")],
    "decoder": [("masked\nself-attention", "attention", "LayerNorm$_1$"),
                ("cross-attention", "attention", "LayerNorm$_2$"),
                ("feed-forward", "linear", "LayerNorm$_3$")],
}
# the stream between the sub-layers, named as in eq-tf-encoder and eq-tf-decoder
_STREAM = {"encoder": ("$x$", "$z$", "$x'$"),
           "decoder": ("$y$", "$z_1$", "$z_2$", "$y'$")}


def _parts(text: str, kind: str, norm: str, pre: bool,
           compact: bool) -> list[tuple[str, str, float]]:
    """The shapes of one sub-layer from the bottom up, ``(label, kind, height)``; the
    label ``"+"`` is a circled sum. The residual line ends at the first "+" or at the
    "add & norm" box."""
    sub = (text, kind, 0.62 if "\n" in text else BOX_H)
    if pre:  # eq-tf-prenorm x + f(LN(x)): LayerNorm on the branch, the sum last
        return [("LayerNorm" if compact else norm, "norm", BOX_H), sub, ("+", "", 0.26)]
    if compact:  # eq-tf-postnorm LN(x + f(x)) as one box
        return [sub, ("add & norm", "norm", BOX_H)]
    return [sub, ("+", "", 0.26), (norm, "norm", BOX_H)]


def _layer(ax: Axes, x: float, y: float, layer: str, pre: bool, *, w: float,
           rail: int = 1, compact: bool = False,
           names: bool = True) -> tuple[float, _Box | None]:
    """Draw an encoder or decoder layer upwards from its input stream at height ``y``.

    ``rail``: the side of the residual lines (+1 right, -1 left); ``compact``: the
    post-norm sum and LayerNorm as one "add & norm" box (the whole-model picture);
    ``names``: label the stream with the chapter's symbols. Returns the top of the last
    shape and the cross-attention box (None in an encoder layer).
    """
    seg, inner = (0.36, 0.18) if compact else (0.5, 0.22)
    side = x + rail * (w / 2 + 0.2)
    here, cross = y, None
    for n, (text, kind, norm) in enumerate(_SUBLAYERS[layer]):
        branch = here + seg / 2
        _dot(ax, x, branch)
        if names:
            _label(ax, x - rail * 0.3, branch, _STREAM[layer][n])
        gap, target = seg, None
        for label, what, height in _parts(text, kind, norm, pre, compact):
            centre = here + gap + height / 2
            if label == "+":
                shape = _add(ax, x, centre, height / 2)
            else:
                shape = _box(ax, x, centre, label, what, w, height)
            _arrow(ax, (x, here), shape.bottom)
            if target is None and label in ("+", "add & norm"):
                target = shape
            if label == "cross-attention":
                cross = shape
            here, gap = shape.top[1], inner
        _arrow(ax, (x, branch), (side, branch), (side, target.y),
               target.right if rail > 0 else target.left)
    return here, cross


def _layer_figure(layer: str, placements: Sequence[str], title: str) -> Figure:
    """The layer once per placement, side by side, with its input, output and memory."""
    pres = [_check_norm(p) for p in placements]
    width = MAX_WIDTH if len(pres) == 2 else 3.2
    centres = [1.55, 4.15] if len(pres) == 2 else [width / 2 + 0.1]
    fig, ax = _canvas(width)
    top = 0.0
    for x, pre in zip(centres, pres):
        here, cross = _layer(ax, x, 0.1, layer, pre, w=1.75)
        _arrow(ax, (x, here), (x, here + 0.45))
        _label(ax, x - 0.3, here + 0.25, _STREAM[layer][-1])
        if cross is not None:  # the encoder's output M: keys and values
            start = cross.left[0] - 0.5
            _arrow(ax, (start, cross.y), cross.left)
            _label(ax, start + 0.05, cross.y + 0.22, "$M$", ha="left")
        top = max(top, here + 0.45)
    if len(pres) == 2:
        for x, placement in zip(centres, placements):
            _label(ax, x, top + 0.3, f"{placement}-norm", style="italic")
        top += 0.5
    return _finish(fig, ax, top, title)


def encoder_layer_diagram(norm: str = "post") -> Figure:
    r"""A Transformer encoder layer (eq-tf-encoder), ``norm="post"`` or ``"pre"``.

    Self-attention, then the feed-forward network, each with a residual line that skips
    it into a circled "+". Post-norm (the paper, ``norm_first=False``) puts LayerNorm 1
    and 2 after each sum, :math:`\mathrm{LN}(x + f(x))` (eq-tf-postnorm); pre-norm
    (``norm_first=True``) puts them before each sub-layer, on its branch only,
    :math:`x + f(\mathrm{LN}(x))` (eq-tf-prenorm). The stream is labelled
    :math:`x, z, x'` as in the chapter; the numbers are those of ``norm1`` and
    ``norm2`` in :class:`seqlearn.transformer_layers.EncoderLayer`.
    """
    _check_norm(norm)
    return _layer_figure("encoder", [norm], f"Encoder layer, {norm}-norm")


def decoder_layer_diagram(norm: str = "post") -> Figure:
    r"""A Transformer decoder layer (eq-tf-decoder), ``norm="post"`` or ``"pre"``.

    Masked (causal) self-attention; cross-attention, whose queries come from the
    decoder's stream and whose keys and values are the encoder's output :math:`M` (the
    arrow from the left); the feed-forward network. Each has a residual line and its
    LayerNorm (1 to 3, ``norm1`` .. ``norm3`` of
    :class:`seqlearn.transformer_layers.DecoderLayer`), after the sum in post-norm and
    before the sub-layer in pre-norm. The stream is labelled :math:`y, z_1, z_2, y'`.
    """
    _check_norm(norm)
    return _layer_figure("decoder", [norm], f"Decoder layer, {norm}-norm")


def norm_placement_diagram(layer: str = "encoder") -> Figure:
    """Post-norm and pre-norm side by side for the ``"encoder"`` or ``"decoder"``
    layer: the figures of :func:`encoder_layer_diagram` or
    :func:`decoder_layer_diagram` for both placements."""
    if layer not in _SUBLAYERS:
        raise ValueError(f"layer must be 'encoder' or 'decoder', got {layer!r}")
    return _layer_figure(layer, ["post", "pre"],
                         f"{layer.capitalize()} layer: post-norm and pre-norm")


def transformer_diagram(norm: str = "post") -> Figure:
    r"""The whole encoder–decoder Transformer (eq-tf-embed to eq-tf-output).

    Left, the source :math:`x_1 \dots x_S` is embedded by :math:`E_x`, the positional
    encoding :math:`PE` is added, and :math:`N` encoder layers give the memory
    :math:`M`. Right, the shifted target :math:`\langle\text{bos}\rangle, y_1 \dots
    y_{T-1}` is embedded by :math:`E_y` plus :math:`PE` and read by :math:`N` decoder
    layers: masked self-attention, cross-attention on :math:`M` (the same memory in
    every layer) and the feed-forward network, every sub-layer with its residual line
    and "add & norm"; a linear map :math:`W_o` and a softmax give
    :math:`p(y_t \mid y_{<t}, x)`. With ``norm="pre"`` the LayerNorm moves before each
    sub-layer and each stack ends with one more LayerNorm, as in
    :class:`seqlearn.transformer.Transformer`.
    """
    pre = _check_norm(norm)
    fig, ax = _canvas(MAX_WIDTH)
    w = 1.8
    columns = {"encoder": (1.5, "$E_x$", r"$x_1 \dots x_S$"),
               "decoder": (3.9, "$E_y$",
                           r"$\langle\mathrm{bos}\rangle\, y_1 \dots y_{T-1}$")}
    ends = {}
    for layer, (x, table, tokens) in columns.items():
        rail = -1 if layer == "encoder" else 1  # residual lines on the outer sides
        _label(ax, x, 0.2, tokens)
        emb = _box(ax, x, 0.8, f"embedding {table}", "linear", w)
        _arrow(ax, (x, 0.38), emb.bottom)
        plus = _add(ax, x, 1.33, 0.13)
        _arrow(ax, emb.top, plus.bottom)
        pe = _box(ax, x + rail * 0.75, plus.y, "$PE$", "token", 0.52)
        _arrow(ax, pe.at(-rail), plus.at(rail))
        start = plus.top[1]
        top, cross = _layer(ax, x, start, layer, pre, w=w, rail=rail, compact=True,
                            names=False)
        left = x - w / 2 - (0.36 if rail < 0 else 0.1)
        ax.add_patch(Rectangle((left, start + 0.08), w + 0.46, top - start + 0.02,
                               fill=False, linestyle="--", linewidth=1.0,
                               edgecolor=INK))
        _label(ax, left + (0.02 if rail < 0 else w + 0.44), top + 0.32,
               rf"$N \times$ {layer}", ha="left" if rail < 0 else "right")
        if pre:  # the stack's final LayerNorm
            final = _box(ax, x, top + 0.8, "LayerNorm", "norm", w)
            _arrow(ax, (x, top), final.bottom)
            top = final.top[1]
        ends[layer] = (x, top, cross)
    step = 0.45 if pre else 0.8  # from the stack's top to the centre of the next box
    x, top, _ = ends["encoder"]
    memory = _box(ax, x, top + step, "memory $M$", "encoder", w)
    _arrow(ax, (x, top), memory.bottom)
    x, top, cross = ends["decoder"]
    gap = (columns["encoder"][0] + w / 2 + cross.left[0]) / 2
    _arrow(ax, memory.right, (gap, memory.y), (gap, cross.y), cross.left)
    out = _box(ax, x, top + step, "linear $W_o$, softmax", "linear", w)
    _arrow(ax, (x, top), out.bottom)
    _arrow(ax, out.top, (x, out.top[1] + 0.22))
    _label(ax, x, out.top[1] + 0.42, r"$p(y_t \mid y_{<t}, x)$")
    return _finish(fig, ax, out.top[1] + 0.55, f"The Transformer ({norm}-norm)")


# ------------------------------------------------------------------------------ Part V

def memn2n_diagram(hops: int = 3) -> Figure:
    r"""The end-to-end memory network with ``hops`` hops (eq-mem-te to eq-mem-answer).

    Every sentence :math:`x_i` of the story is stored at hop :math:`k` twice, as a key
    :math:`m^k_i` (matrix :math:`A^k`) and as a value :math:`c^k_i` (matrix
    :math:`C^k`). The question :math:`q`, embedded by :math:`B`, is the state
    :math:`u^1`. Hop :math:`k` scores the keys against :math:`u^k`, a softmax gives the
    weights :math:`p^k_i` (cells coloured like the attention maps), their sum of the
    values is :math:`o^k`, and :math:`u^{k+1} = u^k + o^k`; the answer is
    :math:`\hat a = \operatorname{softmax}(W u^{K+1})`. Adjacent hops share matrices:
    :math:`A^{k+1} = C^k`, :math:`B = A^1`, :math:`W^\top = C^K`. At most
    :data:`MAX_HOPS` hops.
    """
    hops = check_int(hops, "hops", maximum=MAX_HOPS)
    fig, ax = _canvas(MAX_WIDTH)
    pitch, x_mem, x_p, x_u, cell = 1.25, 1.3, 2.75, 4.55, 0.22
    weights = [0.05, 0.1, 0.6, 0.05, 0.2]  # an example p^k: cells, not data
    _label(ax, 0.1, 0.35, r"tied: $A^{k+1} = C^k$, $B = A^1$, $W^\top = C^K$",
           ha="left")
    story = hops * pitch + 0.15
    ax.add_patch(Rectangle((0.1, 0.85), 0.42, story, facecolor=KINDS["token"],
                           edgecolor=INK, linewidth=1.0))
    _label(ax, 0.31, 0.85 + story / 2, r"sentences $x_i$", rotation=90)
    question = _box(ax, x_u, 0.35, "question $q$", "token", 1.5)
    state = _box(ax, x_u, 1.2, "$u^1$", "decoder", 0.7)
    _arrow(ax, question.top, state.bottom)
    _label(ax, x_u + 0.12, 0.78, "$B$", ha="left")
    for k in range(1, hops + 1):
        y = state.y
        key = _box(ax, x_mem, y, f"$m^{k}_i$  ($A^{k}$)", "encoder", 1.2)
        value = _box(ax, x_mem, y + 0.62, f"$c^{k}_i$  ($C^{k}$)", "encoder", 1.2)
        for box in (key, value):
            _arrow(ax, (0.52, box.y), box.left)
        cells = _weight_cells(ax, x_p - 2.5 * cell, y, weights, [""] * 5, cell, 0.3)
        _arrow(ax, key.right, cells[0].left)
        _arrow(ax, state.left, cells[-1].right)
        _label(ax, x_p, y - 0.31, f"$p^{k}$")
        read = _box(ax, x_p, y + 0.62, f"$o^{k}$", "context", 0.6)
        _arrow(ax, value.right, read.left)
        _arrow(ax, cells[2].top, read.bottom)
        plus = _add(ax, x_u, y + 0.62)
        _label(ax, MAX_WIDTH - 0.08, plus.y, f"hop {k}", ha="right")
        _arrow(ax, read.right, plus.left)
        _arrow(ax, state.top, plus.bottom)
        state = _box(ax, x_u, y + pitch, f"$u^{k + 1}$", "decoder", 0.7)
        _arrow(ax, plus.top, state.bottom)
    answer = _box(ax, 3.65, state.y + 0.85, r"$\hat a = \mathrm{softmax}(W u^{K+1})$",
                  "linear", 2.7)
    _arrow(ax, state.top, (x_u, answer.bottom[1]))
    plural = "s" if hops > 1 else ""
    return _finish(fig, ax, answer.top[1] + 0.05,
                   f"End-to-end memory network, {hops} hop{plural}")


NTM_WEIGHTS = (0.02, 0.08, 0.8, 0.08, 0.01, 0.01)
"""The example weighting :func:`ntm_diagram` draws over six memory rows (not data)."""


def ntm_diagram() -> Figure:
    r"""One step of a Neural Turing Machine (eq-ntm-cosine to eq-ntm-write).

    The controller reads the input :math:`x_t` and the last reads :math:`r_{t-1}` and
    emits, for a head, a key :math:`k_t` with strength :math:`\beta_t`, a gate
    :math:`g_t`, a shift distribution :math:`s_t` and an exponent :math:`\gamma_t`. They
    drive the four addressing steps from left to right: content (the key against every
    row of the memory), interpolation with the head's last weighting :math:`w_{t-1}`,
    circular shift and sharpening. The result, the weighting :math:`w_t` (cells coloured
    like the attention maps), lines up with the memory's rows (drawn as columns): the
    write head erases and adds there (:math:`e_t`, :math:`a_t`), a read head returns
    :math:`r_t = \sum_i w_t(i) M_t(i)`, and the output :math:`y_t` is read from
    :math:`[h_t; r_t]`.
    """
    fig, ax = _canvas(MAX_WIDTH)
    y_in, y_ctrl, y_bus, y_chain = 0.35, 1.1, 1.7, 2.5
    y_cells, y_mem, y_read, y_out = 3.3, 3.95, 5.4, 6.1
    # the controller and its inputs
    ctrl = _box(ax, 1.3, y_ctrl, "controller", "decoder", 2.0)
    for x, text, kind, w in ((0.75, "$x_t$", "token", 0.5),
                             (1.75, "$r_{t-1}$", "context", 0.6)):
        _arrow(ax, _box(ax, x, y_in, text, kind, w).top, (x, ctrl.bottom[1]))
    # the controller's outputs: one line to every step that uses a parameter
    chain = [("content", 0.75, 0.9, r"$k_t, \beta_t$"),
             ("interpolate", 2.0, 1.15, "$g_t$"), ("shift", 3.2, 0.65, "$s_t$"),
             ("sharpen", 4.3, 0.9, r"$\gamma_t$")]
    x_write = 5.05
    _arrow(ax, ctrl.top, (ctrl.x, y_bus), head=False)
    _arrow(ax, (chain[0][1], y_bus), (x_write, y_bus), head=False)
    _dot(ax, ctrl.x, y_bus)
    boxes = []
    for text, x, w, parameter in chain:
        boxes.append(_box(ax, x, y_chain, text, "attention", w))
        _arrow(ax, (x, y_bus), boxes[-1].bottom)
        _label(ax, x + 0.07, (y_bus + boxes[-1].bottom[1]) / 2, parameter, ha="left")
        if len(boxes) > 1:
            _arrow(ax, boxes[-2].right, boxes[-1].left)
            _dot(ax, x, y_bus)  # the line goes on to the next step and the write head
    # the weighting, lined up with the memory's rows (one column per row i)
    n, cell = len(NTM_WEIGHTS), 0.33
    x0 = 4.98 - n * cell
    cells = _weight_cells(ax, x0, y_cells, NTM_WEIGHTS, [""] * n, cell, 0.3)
    _arrow(ax, boxes[-1].top, (boxes[-1].x, cells[0].bottom[1]))
    _label(ax, x0 - 0.12, y_cells, "$w_t$", ha="right")
    previous = boxes[1]
    _label(ax, previous.x, y_cells, "$w_{t-1}$")
    _arrow(ax, (previous.x, y_cells - 0.16), previous.top)
    rows = 3
    for r in range(rows):
        for c in cells:
            ax.add_patch(Rectangle((c.x - cell / 2, y_mem + 0.3 * r), cell, 0.3,
                                   facecolor=KINDS["encoder"], edgecolor=INK,
                                   linewidth=1.0))
    top = y_mem + 0.3 * rows
    _label(ax, x0 - 0.12, y_mem + 0.45, "memory $M_t$", ha="right")
    # content addressing compares the key with every row of the memory
    _arrow(ax, (x0, top - 0.15), (boxes[0].x, top - 0.15), boxes[0].top)
    # the write head: erase, then add, where w_t points
    _arrow(ax, (x_write, y_bus), (x_write, y_mem + 0.45), (4.98, y_mem + 0.45))
    _label(ax, x_write + 0.2, (y_bus + y_cells) / 2, "erase $e_t$, add $a_t$",
           rotation=90)
    # a read head, and the output
    middle = x0 + n * cell / 2
    read_box = _box(ax, middle, y_read, r"$r_t = \Sigma_i\, w_t(i)\, M_t(i)$",
                    "context", 1.75)
    _arrow(ax, (middle, top), read_box.bottom)
    out = _box(ax, 1.3, y_out, "output $y_t$", "token", 1.4)
    _arrow(ax, read_box.left, (out.x, read_box.y), out.bottom)
    _arrow(ax, ctrl.left, (0.15, ctrl.y), (0.15, out.y), out.left)  # h_t
    _label(ax, 0.25, (y_read + y_out) / 2 + 0.05, "$h_t$", ha="left")
    _label(ax, out.x + 0.08, (y_read + out.bottom[1]) / 2 + 0.02, "$r_t$", ha="left")
    return _finish(fig, ax, out.top[1] + 0.05, "Neural Turing Machine: one step")


# -------------------------------------------------------------------- language models

LM_TEXT = "for in"
"""What the language-model diagram reads: inputs ``f o r ␣``, targets ``o r ␣ i``."""


def char_lm_diagram(mode: str = "teacher") -> Figure:
    r"""A character language model unrolled over four steps (eq-lm-chain, eq-lm-rnn).

    Each column reads one character :math:`x_t`, looks up its embedding :math:`E[x_t]`,
    updates the state :math:`h_t` from :math:`h_{t-1}` (the arrows between columns; in
    a causal Transformer, attention to every earlier position) and scores the next
    character with :math:`W_o` and a softmax. ``mode="teacher"`` (teacher forcing): the
    inputs are the true text and every column is scored on the true next character.
    ``mode="sampling"``: after the first character the model reads its own samples;
    each sample is fed back as the next column's input.
    """
    if not isinstance(mode, str):
        raise TypeError(f"mode must be the string 'teacher' or 'sampling', got "
                        f"{type(mode).__name__}")
    if mode not in ("teacher", "sampling"):
        raise ValueError(f"mode must be 'teacher' or 'sampling', got {mode!r}")
    sampling = mode == "sampling"
    fig, ax = _canvas(MAX_WIDTH)
    y_in, y_emb, y_state, y_out, y_next = 0.4, 1.15, 1.9, 2.65, 3.4
    xs, w = (1.95, 2.85, 3.75, 4.65), 0.5
    shown = [c if c != " " else "␣" for c in LM_TEXT]
    rows = ((y_in, "input $x_t$"), (y_emb, "embedding"), (y_state, "state $h_t$"),
            (y_out, "softmax"), (y_next, "sample" if sampling else "target $x_{t+1}$"))
    for y, text in rows:
        _label(ax, 0.1, y, text, ha="left")
    previous, outputs = None, []
    for t, x in enumerate(xs):
        given = shown[t] if t == 0 or not sampling else ""
        token = _box(ax, x, y_in, given, "token", w)
        emb = _box(ax, x, y_emb, "$E$", "linear", w)
        _arrow(ax, token.top, emb.bottom)
        state = _box(ax, x, y_state, f"$h_{t + 1}$", "decoder", w)
        _arrow(ax, emb.top, state.bottom)
        if previous is not None:
            _arrow(ax, previous.right, state.left)
        out = _box(ax, x, y_out, "$W_o$", "linear", w)
        _arrow(ax, state.top, out.bottom)
        nxt = _box(ax, x, y_next, shown[t + 1] if not sampling else f"$s_{t + 1}$",
                   "context" if sampling else "token", w)
        _arrow(ax, out.top, nxt.bottom)
        outputs.append((nxt, token))
        previous = state
    if sampling:  # every sample becomes the next input
        for (nxt, _), (_, token) in zip(outputs, outputs[1:]):
            gap = (nxt.right[0] + token.left[0]) / 2
            _arrow(ax, nxt.right, (gap, nxt.y), (gap, y_in), token.left)
            _label(ax, token.x, y_in, f"$s_{{{xs.index(token.x)}}}$",
                   gid="diagram-box-label")
    title = ("Generation: the model reads its own samples" if sampling
             else "Teacher forcing: reading the true text")
    return _finish(fig, ax, y_next + BOX_H / 2, title)


# ----------------------------------------------------------------------------- display

class Diagram:
    """A rendered figure with its alt text; ``_repr_html_`` is an ``<img>``.

    Made by :func:`show`: ``png`` holds the image's bytes, ``alt`` its description.
    """

    def __init__(self, png: bytes, alt: str) -> None:
        self.png = png
        self.alt = alt

    def __repr__(self) -> str:
        # a stable text without an address: nbval compares text/plain outputs too
        return f"Diagram({self.alt!r})"

    def _repr_html_(self) -> str:
        data = base64.b64encode(self.png).decode("ascii")
        return (f'<img alt="{html.escape(self.alt, quote=True)}" '
                f'src="data:image/png;base64,{data}" style="max-width:100%">')


def show(fig: Figure, alt: str) -> Diagram:
    """Render ``fig`` as a deterministic PNG described by ``alt``, and close it.

    End a notebook cell with ``show(seq2seq_diagram(), "...")``: the output is an image
    with alt text that screen readers read in JupyterLab, Colab, on GitHub and in the
    HTML book (a plain figure output has none). The PNG is a 100-dpi palette image
    (:func:`seqlearn.widgets.figure_png`), small enough to store in a notebook.
    """
    if not isinstance(fig, Figure):
        raise TypeError(f"fig must be a matplotlib Figure, got {type(fig).__name__}")
    if not isinstance(alt, str):
        raise TypeError(f"alt must be a str describing the figure, got "
                        f"{type(alt).__name__}")
    if not alt.strip():
        raise ValueError("alt must describe the figure for readers who cannot see it, "
                         "got an empty string")
    return Diagram(figure_png(fig, FRAME_DPI, colours=FRAME_COLOURS), alt.strip())
