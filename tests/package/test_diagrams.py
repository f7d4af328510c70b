"""seqlearn.diagrams: every architecture figure at most 8 inches wide, legible at
phone width, without overlapping labels, with the symbols of its chapter; the numbers
and masks it shows against the library; alt text and bad input; properties at random
sizes."""

import base64
import html
import itertools
import re

import matplotlib

matplotlib.use("Agg")  # before pyplot: no display needed
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np
import pytest
import torch
from hypothesis import given, strategies as st
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.text import Text

from properties import covers, not_bools, randn, refuses, seeds
from seqlearn import diagrams
from seqlearn.attention import attention

D = diagrams


# every diagram with the symbols it must show (substrings of its labels)
DIAGRAMS = {
    "seq2seq": (D.seq2seq_diagram, [
        r"\overrightarrow{h}_{1}", "T_x", "$c$", "$s_0$", "$s_1$", "bos", "eos",
        "$x_{1}$"]),
    "bahdanau": (D.bahdanau_step_diagram, [
        "$s_{t-1}$", "$h_{1}$", "$h_{T_x}$", r"\alpha_{t,1}", "$c_t", "GRU", "$s_t$",
        "softmax over", r"$e_{t,i} = w^\top", "$y_{t-1}$", r"p(y_t \mid y_{<t}, x)"]),
    "readout": (D.attention_readout_diagram, [
        "$q_t$", "$k_i$", "$v_i$", "$e_{t,i}$", r"\alpha_{t,i}", "$c_t",
        r"\sqrt{d_k}"]),
    "multi_head": (D.multi_head_diagram, [
        "$W^Q_n$", "$W^K_n$", "$W^V_n$", "$W^O$", "$Q_n$", r"\sqrt{d_h}", "head}_1",
        "head}_h", "$h$ heads", "$X$"]),
    "mask": (D.mask_diagram, [
        "causal", "padding", "key $i$", "query $t$", "may attend", r"-\infty", "L_b"]),
    "encoder_post": (lambda: D.encoder_layer_diagram("post"), [
        "self-attention", "feed-forward", "LayerNorm$_1$", "LayerNorm$_2$", "$x$",
        "$z$", "$x'$"]),
    "encoder_pre": (lambda: D.encoder_layer_diagram("pre"), [
        "self-attention", "feed-forward", "LayerNorm$_1$", "LayerNorm$_2$"]),
    "decoder_post": (lambda: D.decoder_layer_diagram("post"), [
        "masked\nself-attention", "cross-attention", "feed-forward", "LayerNorm$_3$",
        "$M$", "$z_1$", "$z_2$", "$y'$"]),
    "decoder_pre": (lambda: D.decoder_layer_diagram("pre"), [
        "masked\nself-attention", "cross-attention", "LayerNorm$_3$", "$M$"]),
    "placement_encoder": (lambda: D.norm_placement_diagram("encoder"), [
        "post-norm", "pre-norm", "LayerNorm$_2$"]),
    "placement_decoder": (lambda: D.norm_placement_diagram("decoder"), [
        "post-norm", "pre-norm", "LayerNorm$_3$"]),
    "transformer_post": (lambda: D.transformer_diagram("post"), [
        "embedding $E_x$", "embedding $E_y$", "$PE$", "memory $M$", "cross-attention",
        "masked\nself-attention", "add & norm", r"$N \times$ encoder",
        r"$N \times$ decoder", "linear $W_o$, softmax", r"p(y_t \mid y_{<t}, x)",
        "bos"]),
    "transformer_pre": (lambda: D.transformer_diagram("pre"), [
        "LayerNorm", "memory $M$", "cross-attention"]),
    "memn2n": (D.memn2n_diagram, [
        "$m^1_i$", "$c^3_i$", "$A^1$", "$C^3$", "$p^2$", "$o^3$", "$u^1$", "$u^4$",
        "question $q$", "$B$", r"\hat a", "u^{K+1}", "A^{k+1} = C^k", "hop 3", "x_i"]),
    "memn2n_1": (lambda: D.memn2n_diagram(hops=1), ["hop 1", "$u^2$"]),
    "ntm": (D.ntm_diagram, [
        "controller", "$x_t$", "$r_{t-1}$", "content", "interpolate", "shift", "sharpen",
        r"$k_t, \beta_t$", "$g_t$", "$s_t$", r"$\gamma_t$", "$w_{t-1}$", "$w_t$",
        "memory $M_t$", "erase $e_t$, add $a_t$", r"\Sigma_i\, w_t(i)\, M_t(i)",
        "output $y_t$", "$h_t$"]),
    "char_lm_teacher": (D.char_lm_diagram, [
        "input $x_t$", "embedding", "state $h_t$", "softmax", "target $x_{t+1}$", "$E$",
        "$W_o$", "$h_1$", "$h_4$", "f", "␣", "Teacher forcing"]),
    "char_lm_sampling": (lambda: D.char_lm_diagram("sampling"), [
        "input $x_t$", "sample", "$s_1$", "$s_4$", "$h_4$", "f", "own samples"]),
}


def texts(fig: Figure) -> list[Text]:
    """Every visible, non-empty text of the figure (ticks and legends included)."""
    return [t for t in fig.findobj(Text) if t.get_visible() and t.get_text().strip()]


def labels(fig: Figure) -> str:
    return "\n".join(t.get_text() for t in texts(fig))


@pytest.fixture(scope="module", params=list(DIAGRAMS))
def drawn(request):
    make, symbols = DIAGRAMS[request.param]
    fig = make()
    FigureCanvasAgg(fig).draw()
    return request.param, fig, symbols


def test_a_figure_at_most_8_inches_wide_with_the_symbols(drawn):
    name, fig, symbols = drawn
    assert isinstance(fig, Figure)
    width, height = fig.get_size_inches()
    assert width <= D.MAX_WIDTH <= 8 and height <= 10
    found = labels(fig)
    missing = [s for s in symbols if s not in found]
    assert not missing, f"{name} lacks {missing}"


def test_every_label_is_legible_at_phone_width(drawn):
    # a figure w inches wide shown 380 px wide shrinks by 3.8 / w (never grows)
    _, fig, _ = drawn
    shrink = min(1.0, 3.8 / fig.get_size_inches()[0])
    small = [(t.get_text(), t.get_fontsize()) for t in texts(fig)
             if t.get_fontsize() * shrink < 9]
    assert not small


def test_no_label_overlaps_another_or_leaves_the_figure(drawn):
    name, fig, _ = drawn
    renderer = fig.canvas.get_renderer()
    page = fig.bbox
    boxes = [(t.get_text(), t.get_window_extent(renderer).padded(-1))
             for t in texts(fig)]
    for text, box in boxes:
        assert (box.x0 >= page.x0 and box.y0 >= page.y0 and box.x1 <= page.x1
                and box.y1 <= page.y1), f"{name}: {text!r} is clipped"
    for (a, box_a), (b, box_b) in itertools.combinations(boxes, 2):
        assert not box_a.overlaps(box_b), f"{name}: {a!r} overlaps {b!r}"


def test_box_labels_fit_inside_their_boxes(drawn):
    name, fig, _ = drawn
    renderer = fig.canvas.get_renderer()
    shapes = [p.get_window_extent(renderer) for p in fig.findobj(
        match=lambda a: a.get_gid() == "diagram-box" and not isinstance(a, Text))]
    for label in (t for t in texts(fig) if t.get_gid() == "diagram-box-label"):
        box = label.get_window_extent(renderer)
        x, y = (box.x0 + box.x1) / 2, (box.y0 + box.y1) / 2
        holders = [s for s in shapes if s.contains(x, y)]
        assert holders, f"{name}: {label.get_text()!r} is in no box"
        inner = min(holders, key=lambda s: abs((s.x0 + s.x1) / 2 - x)
                    + abs((s.y0 + s.y1) / 2 - y))  # the front card of a stack
        assert (inner.x0 - 1 <= box.x0 and box.x1 <= inner.x1 + 1
                and inner.y0 - 1 <= box.y0 and box.y1 <= inner.y1 + 1), (
            f"{name}: {label.get_text()!r} spills out of its box")


def height_of(fig: Figure, text: str) -> float:
    """The vertical position of the (first) label equal to ``text``."""
    return next(t.get_position()[1] for t in texts(fig) if t.get_text() == text)


def top_box(fig: Figure) -> str:
    """The label of the highest box."""
    return max((t for t in texts(fig) if t.get_gid() == "diagram-box-label"),
               key=lambda t: t.get_position()[1]).get_text()


@pytest.mark.parametrize("make, sublayers", [
    (D.encoder_layer_diagram, ["self-attention", "feed-forward"]),
    (D.decoder_layer_diagram,
     ["masked\nself-attention", "cross-attention", "feed-forward"])])
def test_layernorm_after_the_sum_in_post_norm_before_the_sublayer_in_pre_norm(
        make, sublayers):
    post, pre = make("post"), make("pre")
    for k, sub in enumerate(sublayers, start=1):
        norm = f"LayerNorm$_{k}$"
        assert height_of(post, norm) > height_of(post, sub)
        assert height_of(pre, norm) < height_of(pre, sub)
    # post-norm ends with a LayerNorm on the stream; pre-norm with the last sum
    assert top_box(post) == f"LayerNorm$_{len(sublayers)}$"
    assert top_box(pre) == "feed-forward"


def test_placements_side_by_side_are_the_two_single_layers():
    both = labels(D.norm_placement_diagram("decoder"))
    assert both.count("LayerNorm$_2$") == 2 and both.count("cross-attention") == 2
    assert "post-norm" in both and "pre-norm" in both


def test_pre_norm_transformer_has_a_final_layernorm_per_stack():
    post = labels(D.transformer_diagram("post"))
    pre = labels(D.transformer_diagram("pre"))
    assert post.count("add & norm") == 2 + 3 and "LayerNorm" not in post
    assert pre.count("LayerNorm") == 2 + 3 + 2 and "add & norm" not in pre


@pytest.mark.parametrize("hops", [1, 2, 6])
def test_memn2n_draws_every_hop(hops):
    found = labels(D.memn2n_diagram(hops))
    for k in range(1, hops + 1):
        assert f"hop {k}" in found and f"$m^{k}_i$" in found and f"$o^{k}$" in found
    assert f"$u^{hops + 1}$" in found and f"hop {hops + 1}" not in found


def test_ntm_addresses_in_the_papers_order_and_lines_the_weighting_up_with_memory():
    fig = D.ntm_diagram()
    found = {t.get_text(): t.get_position() for t in texts(fig)}
    steps = ["content", "interpolate", "shift", "sharpen"]
    xs = [found[s][0] for s in steps]
    assert xs == sorted(xs) and len({found[s][1] for s in steps}) == 1
    ax = fig.axes[0]
    cells = [p for p in ax.patches if isinstance(p, matplotlib.patches.Rectangle)
             and p.get_gid() == "diagram-box" and p.get_width() < 0.5]
    assert len(cells) == len(D.NTM_WEIGHTS)
    memory = [p for p in ax.patches if isinstance(p, matplotlib.patches.Rectangle)
              and p.get_gid() is None and p.get_facecolor()[:3] == matplotlib.colors.to_rgb(
                  D.KINDS["encoder"])]
    assert len(memory) == 3 * len(cells)  # three rows of one word each, drawn as columns
    assert ({round(p.get_x(), 6) for p in memory} == {round(p.get_x(), 6) for p in cells})
    # the largest cell is drawn in the brightest colour of the weight map
    brightest = max(cells, key=lambda p: sum(p.get_facecolor()[:3]))
    assert cells.index(brightest) == int(np.argmax(D.NTM_WEIGHTS))


def numbers(fig: Figure) -> list[float]:
    """The scores and weights printed in a read-out, row by row."""
    return [float(t.get_text()) for t in texts(fig)
            if re.fullmatch(r"-?\d+\.\d\d", t.get_text())]


def test_readout_numbers_are_the_attention_of_the_library():
    q = np.array([0.5, -1.5])
    k = np.array([[1.0, 0.0], [0.0, 1.0], [-2.0, 1.0], [0.5, -0.5], [1.5, -2.0]])
    v = np.array([[1.0, 2.0], [0.0, -1.0], [3.0, 0.5], [-1.0, 0.0], [0.2, 0.3]])
    fig = D.attention_readout_diagram(q, k, v)
    out, w = attention(torch.tensor(q)[None], torch.tensor(k), torch.tensor(v))
    shown = numbers(fig)  # per row: score, weight
    np.testing.assert_allclose(shown[0::2], (k @ q) / np.sqrt(2), atol=0.005)
    np.testing.assert_allclose(shown[1::2], w[0].numpy(), atol=0.005)
    context = f"({out[0, 0].item():.1f}, {out[0, 1].item():.1f})"
    assert any(context in t.get_text() and "c_t" in t.get_text() for t in texts(fig))
    default = D.attention_readout_diagram()
    assert np.isclose(sum(numbers(default)[1::2]), 1.0, atol=0.02)
    half = D.attention_readout_diagram(q, k, v, scale=0.5)
    np.testing.assert_allclose(numbers(half)[0::2], 0.5 * (k @ q), atol=0.005)


def test_mask_cells_follow_the_chapter():
    causal, padding = D.mask_diagram(T=5, length=3).axes
    hatched = [sum(1 for p in ax.patches if p.get_hatch()) for ax in (causal, padding)]
    assert hatched == [5 * 4 // 2, 5 * 2]  # i > t; i > L_b in every row
    assert causal.get_ylabel() == "query $t$" and causal.get_xlabel() == "key $i$"


def test_show_gives_an_img_with_escaped_alt_text_and_a_png():
    fig = plt.figure(figsize=(2, 1))
    alt = 'An "encoder" <and> a decoder & more'
    shown = D.show(fig, alt)
    assert not plt.fignum_exists(fig.number)  # closed
    page = shown._repr_html_()
    assert page.startswith("<img ") and 'style="max-width:100%"' in page
    assert f'alt="{html.escape(alt, quote=True)}"' in page and "<and>" not in page
    data = re.search(r'src="data:image/png;base64,([A-Za-z0-9+/=]+)"', page).group(1)
    assert base64.b64decode(data) == shown.png and shown.png.startswith(b"\x89PNG")
    assert repr(shown) == f"Diagram({alt!r})" and "0x" not in repr(shown)


def test_show_is_deterministic():
    assert D.show(D.mask_diagram(), "m").png == D.show(D.mask_diagram(), "m").png


def test_bad_arguments_raise_naming_the_argument():
    fig = Figure()
    with pytest.raises(TypeError, match="fig must be a matplotlib Figure"):
        D.show("figure", "alt")
    with pytest.raises(TypeError, match="alt must be a str"):
        D.show(fig, None)
    for empty in ("", "   "):
        with pytest.raises(ValueError, match="alt must describe"):
            D.show(fig, empty)
    for make in (D.encoder_layer_diagram, D.decoder_layer_diagram,
                 D.transformer_diagram):
        with pytest.raises(ValueError, match="norm must be 'post' or 'pre'"):
            make("middle")
        with pytest.raises(TypeError, match="norm must be"):
            make(True)
    with pytest.raises(ValueError, match="layer must be 'encoder' or 'decoder'"):
        D.norm_placement_diagram("both")
    with pytest.raises(ValueError, match="hops must be positive"):
        D.memn2n_diagram(0)
    with pytest.raises(ValueError, match="hops must be at most 6"):
        D.memn2n_diagram(7)
    for hops in (1.0, True, "3"):
        with pytest.raises(TypeError, match="hops must be an int"):
            D.memn2n_diagram(hops)
    with pytest.raises(ValueError, match="length must be at most 6"):
        D.mask_diagram(T=6, length=7)
    with pytest.raises(ValueError, match="T must be at least 2"):
        D.mask_diagram(T=1, length=1)


def test_bad_readout_arrays_raise():
    q, k, v = np.ones(2), np.ones((3, 2)), np.ones((3, 2))
    with pytest.raises(ValueError, match="query, keys and values together"):
        D.attention_readout_diagram(q, k)
    with pytest.raises(ValueError, match=r"keys must have shape \(n, d_k=1\)"):
        D.attention_readout_diagram(np.ones(1), k, v)
    with pytest.raises(ValueError, match=r"keys must have shape \(n, d_k\)"):
        D.attention_readout_diagram(q, np.ones((3, 3)), v)
    with pytest.raises(ValueError, match=r"values must have shape \(n=3, d_v\)"):
        D.attention_readout_diagram(q, k, np.ones((2, 2)))
    with pytest.raises(ValueError, match=r"query must have shape \(d_k,\)"):
        D.attention_readout_diagram(np.ones((1, 2)), k, v)
    with pytest.raises(ValueError, match="keys must have shape"):
        D.attention_readout_diagram(q, np.ones((7, 2)), np.ones((7, 2)))
    with pytest.raises(ValueError, match="NaN or infinity"):
        D.attention_readout_diagram(np.array([np.nan, 1.0]), k, v)
    with pytest.raises(TypeError, match="query must hold real numbers"):
        D.attention_readout_diagram(["a", "b"], k, v)
    with pytest.raises(TypeError, match="keys must hold real numbers"):
        D.attention_readout_diagram(q, np.ones((3, 2), dtype=bool), v)
    with pytest.raises(ValueError, match="values must have shape .* ragged"):
        D.attention_readout_diagram(q, k, [[1.0], [1.0, 2.0], [0.0]])
    with pytest.raises(ValueError, match="scale must be positive"):
        D.attention_readout_diagram(q, k, v, scale=0.0)
    with pytest.raises(ValueError, match="too long to draw legibly"):
        D.attention_readout_diagram(np.ones(2), np.full((3, 2), -123456.7),
                                    np.full((3, 2), -123456.7))


def test_char_lm_diagram_feeds_samples_back_only_when_sampling():
    teacher, sampling = D.char_lm_diagram("teacher"), D.char_lm_diagram("sampling")
    arrows = [len(f.findobj(matplotlib.patches.FancyArrowPatch))
              for f in (teacher, sampling)]
    assert arrows[1] == arrows[0] + 3  # one arrow from each of the first three samples
    assert "$s_3$" in labels(sampling) and "$s_3$" not in labels(teacher)
    with pytest.raises(ValueError, match="mode must be 'teacher' or 'sampling'"):
        D.char_lm_diagram("greedy")
    with pytest.raises(TypeError, match="mode must be the string"):
        D.char_lm_diagram(1)


# ---------------------------------------------- properties at random sizes (hypothesis)

placements = st.sampled_from(["post", "pre"])
not_placements = st.sampled_from(["Post", "", "both", None, 1, True])


def label_list(fig: Figure) -> list[str]:
    return [t.get_text() for t in fig.findobj(Text) if t.get_text().strip()]


def fits(fig: Figure) -> bool:
    """At most MAX_WIDTH wide, every label at least 9 pt when shown 380 px wide."""
    width = fig.get_size_inches()[0]
    sizes = [t.get_fontsize() for t in fig.findobj(Text) if t.get_text().strip()]
    return width <= diagrams.MAX_WIDTH and min(sizes) * min(1, 3.8 / width) >= 9


@covers("seqlearn.diagrams.attention_readout_diagram")
@given(seed=seeds, n=st.integers(1, 6), d=st.integers(1, 2), dv=st.integers(1, 2),
       scaled=st.booleans())
def test_readout_shows_the_library_attention(seed, n, d, dv, scaled):
    q, k, v = randn(seed, d), randn(seed + 1, n, d), randn(seed + 2, n, dv)
    scale = 0.5 + seed % 3 if scaled else None
    fig = diagrams.attention_readout_diagram(q, k.numpy(), v.tolist(), scale=scale)
    out, w = attention(q[None], k, v, scale=scale)  # one query
    shown = [float(t) for t in label_list(fig) if re.fullmatch(r"-?\d+\.\d\d", t)]
    assert len(shown) == 2 * n  # a score and a weight per key
    s = 1 / np.sqrt(d) if scale is None else scale
    np.testing.assert_allclose(shown[0::2], s * (k @ q).numpy(), atol=0.0051)
    np.testing.assert_allclose(shown[1::2], w[0].numpy(), atol=0.0051)
    context = "(" + ", ".join(f"{x:.1f}" for x in out[0].tolist()) + ")"
    assert any(context in t for t in label_list(fig)) and fits(fig)
    refuses(diagrams.attention_readout_diagram, q, k)
    refuses(diagrams.attention_readout_diagram, q, randn(seed, n, d + 1), v)
    refuses(diagrams.attention_readout_diagram, q, k, randn(seed, n + 1, dv))
    refuses(diagrams.attention_readout_diagram, q, k, v, scale=-1.0)
    refuses(diagrams.attention_readout_diagram, q.fill_(float("inf")), k, v)


@covers("seqlearn.diagrams.mask_diagram")
@given(T=st.integers(2, 8), data=st.data())
def test_mask_cells_are_the_chapter_masks(T, data):
    length = data.draw(st.integers(1, T))
    causal, padding = diagrams.mask_diagram(T, length).axes
    for ax, allowed in ((causal, lambda t, i: i <= t),
                        (padding, lambda t, i: i <= length)):
        cells = {(round(p.get_y() + 0.5), round(p.get_x() + 0.5)): not p.get_hatch()
                 for p in ax.patches}  # (query t, key i) -> may attend
        assert cells == {(t, i): allowed(t, i) for t in range(1, T + 1)
                         for i in range(1, T + 1)}
    refuses(diagrams.mask_diagram, T, T + 1)
    refuses(diagrams.mask_diagram, 9, 1)
    refuses(diagrams.mask_diagram, T, float(length))


@covers("seqlearn.diagrams.memn2n_diagram")
@given(hops=st.integers(1, diagrams.MAX_HOPS),
       bad=st.sampled_from([0, -1, 7, 2.0, "3", True]))
def test_memn2n_has_one_row_per_hop(hops, bad):
    fig = diagrams.memn2n_diagram(hops)
    found = label_list(fig)
    assert sum(t.startswith("hop ") for t in found) == hops
    assert sum(t.startswith("$m^") for t in found) == hops
    assert sum(t.startswith("$c^") for t in found) == hops
    assert f"$u^{hops + 1}$" in found and fits(fig)
    refuses(diagrams.memn2n_diagram, bad)


@covers("seqlearn.diagrams.encoder_layer_diagram",
        "seqlearn.diagrams.decoder_layer_diagram",
        "seqlearn.diagrams.transformer_diagram",
        "seqlearn.diagrams.norm_placement_diagram")
@given(norm=placements, bad=not_placements,
       layer=st.sampled_from(["encoder", "decoder"]))
def test_layers_show_their_sublayers_and_one_layernorm_each(norm, bad, layer):
    sublayers = 2 if layer == "encoder" else 3
    make = getattr(diagrams, f"{layer}_layer_diagram")
    single, whole = make(norm), diagrams.transformer_diagram(norm)
    found = label_list(single)
    assert [f"LayerNorm$_{k}$" in found for k in range(1, 5)] == [
        k <= sublayers for k in range(1, 5)]
    both = label_list(diagrams.norm_placement_diagram(layer))
    assert sum(t.startswith("LayerNorm$_") for t in both) == 2 * sublayers
    norms = sum(t in ("LayerNorm", "add & norm") for t in label_list(whole))
    assert norms == 5 + (2 if norm == "pre" else 0)  # a pre-norm stack's final norm
    assert fits(single) and fits(whole)
    refuses(make, bad)
    refuses(diagrams.transformer_diagram, bad)
    refuses(diagrams.norm_placement_diagram, norm)


@covers("seqlearn.diagrams.seq2seq_diagram", "seqlearn.diagrams.bahdanau_step_diagram",
        "seqlearn.diagrams.multi_head_diagram", "seqlearn.diagrams.ntm_diagram")
@given(which=st.sampled_from(["seq2seq", "bahdanau_step", "multi_head", "ntm"]))
def test_fixed_diagrams_are_legible_figures(which):
    fig = getattr(diagrams, f"{which}_diagram")()
    assert isinstance(fig, Figure) and fits(fig) and len(label_list(fig)) >= 8


@covers("seqlearn.diagrams.show", "seqlearn.diagrams.Diagram")
@given(alt=st.text(min_size=1, max_size=40).filter(str.strip), flag=not_bools)
def test_show_escapes_any_alt_text(alt, flag):
    shown = diagrams.show(Figure(figsize=(1, 1)), alt)
    page = shown._repr_html_()
    assert f'alt="{html.escape(alt.strip(), quote=True)}"' in page
    assert page.count("<") == 1 and page.count(">") == 1  # the alt text opens no tag
    assert shown.png.startswith(b"\x89PNG")
    assert repr(shown) == f"Diagram({alt.strip()!r})"
    refuses(diagrams.show, Figure(), flag if not isinstance(flag, str) else " ")
    refuses(diagrams.show, torch.zeros(2), alt)


@covers("seqlearn.diagrams.char_lm_diagram")
@given(mode=st.sampled_from(["teacher", "sampling"]), bad=st.sampled_from(["", "greedy", 1]))
def test_char_lm_diagram_draws_four_steps(mode, bad):
    from matplotlib.text import Text

    fig = diagrams.char_lm_diagram(mode)
    found = [t.get_text() for t in fig.findobj(Text)]
    assert all(f"$h_{t}$" in found for t in range(1, 5))
    assert fig.get_size_inches()[0] <= diagrams.MAX_WIDTH
    assert ("$s_1$" in found) == (mode == "sampling")
    refuses(diagrams.char_lm_diagram, bad)
