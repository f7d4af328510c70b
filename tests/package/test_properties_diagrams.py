"""Property tests of the architecture diagrams: the read-out's numbers against
``seqlearn.attention.attention``, the mask cells against the chapter's definitions, a
row per MemN2N hop, the layers in both placements, alt text, and bad input."""

import html
import re

import matplotlib

matplotlib.use("Agg")
import numpy as np  # noqa: E402
import torch  # noqa: E402
from hypothesis import given  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402
from matplotlib.text import Text  # noqa: E402

from properties import covers, not_bools, randn, refuses, seeds  # noqa: E402
from seqlearn import diagrams  # noqa: E402
from seqlearn.attention import attention  # noqa: E402

placements = st.sampled_from(["post", "pre"])
not_placements = st.sampled_from(["Post", "", "both", None, 1, True])


def labels(fig: Figure) -> list[str]:
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
    shown = [float(t) for t in labels(fig) if re.fullmatch(r"-?\d+\.\d\d", t)]
    assert len(shown) == 2 * n  # a score and a weight per key
    s = 1 / np.sqrt(d) if scale is None else scale
    np.testing.assert_allclose(shown[0::2], s * (k @ q).numpy(), atol=0.0051)
    np.testing.assert_allclose(shown[1::2], w[0].numpy(), atol=0.0051)
    context = "(" + ", ".join(f"{x:.1f}" for x in out[0].tolist()) + ")"
    assert any(context in t for t in labels(fig)) and fits(fig)
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
    found = labels(fig)
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
    found = labels(single)
    assert [f"LayerNorm$_{k}$" in found for k in range(1, 5)] == [
        k <= sublayers for k in range(1, 5)]
    both = labels(diagrams.norm_placement_diagram(layer))
    assert sum(t.startswith("LayerNorm$_") for t in both) == 2 * sublayers
    norms = sum(t in ("LayerNorm", "add & norm") for t in labels(whole))
    assert norms == 5 + (2 if norm == "pre" else 0)  # a pre-norm stack's final norm
    assert fits(single) and fits(whole)
    refuses(make, bad)
    refuses(diagrams.transformer_diagram, bad)
    refuses(diagrams.norm_placement_diagram, norm)


@covers("seqlearn.diagrams.seq2seq_diagram", "seqlearn.diagrams.bahdanau_step_diagram",
        "seqlearn.diagrams.multi_head_diagram")
@given(which=st.sampled_from(["seq2seq", "bahdanau_step", "multi_head"]))
def test_fixed_diagrams_are_legible_figures(which):
    fig = getattr(diagrams, f"{which}_diagram")()
    assert isinstance(fig, Figure) and fits(fig) and len(labels(fig)) >= 8


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
