import base64
import json
import re

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
import torch  # noqa: E402

from seqlearn.plots import ATTENTION_CMAP, SIGNED_CMAP, plot_attention, plot_signed  # noqa: E402
from seqlearn.widgets import FrameSlider  # noqa: E402


def draw(u, k):
    fig, ax = plt.subplots(figsize=(2, 1.5))
    ax.plot(np.arange(5) * u + k)
    return fig


def test_frames_cover_the_grid_in_row_major_order():
    demo = FrameSlider(draw, u=[0.1, 0.5, 0.9], k=[0, 1])
    assert len(demo) == 6
    assert all(base64.b64decode(f).startswith(b"\x89PNG") for f in demo.frames)
    # frame index = i_u * len(k) + i_k: the frame for (u=0.9, k=0) is drawn from those values
    again = FrameSlider(lambda u, k: draw(u, k), u=[0.9], k=[0])
    assert again.frames[0] == demo.frames[4]
    assert repr(demo) == "FrameSlider(u: 3 values, k: 2 values; 6 frames)"


def test_html_is_deterministic_and_starts_at_the_middle():
    html_a = FrameSlider(draw, u=[0.1, 0.5, 0.9], k=[0, 1])._repr_html_()
    html_b = FrameSlider(draw, u=[0.1, 0.5, 0.9], k=[0, 1])._repr_html_()
    assert html_a == html_b
    assert html_a.count('class="fs-slider"') == 2
    assert re.search(r'max="2" step="1" value="1"', html_a)
    assert "0.5" in html_a


def test_initial_values_and_errors():
    demo = FrameSlider(draw, u=[0.1, 0.5], k=[0, 1], initial={"u": 0.1})
    assert demo.initial == {"u": 0.1, "k": 1}
    with pytest.raises(ValueError, match="initial value"):
        FrameSlider(draw, u=[0.1], k=[0], initial={"u": 0.3})
    with pytest.raises(ValueError, match="at least one parameter"):
        FrameSlider(draw)
    with pytest.raises(ValueError, match="non-empty list"):
        FrameSlider(draw, u=[])
    with pytest.raises(TypeError, match="must return a matplotlib Figure"):
        FrameSlider(lambda u: None, u=[1])
    with pytest.raises(TypeError, match="callable"):
        FrameSlider(3, u=[1])


def test_live_sliders_redraw_on_change():
    demo = FrameSlider(draw, u=[0.1, 0.5, 0.9], k=[0, 1])
    live = demo.live()
    slider_u, slider_k, picture = live.children
    first = bytes(picture.value)
    assert first.startswith(b"\x89PNG")
    slider_u.value = 0.9
    assert bytes(picture.value) != first
    assert repr(live) == ("LiveSliders(u, k): sliders that redraw; run this cell in a "
                          "Jupyter kernel to see them")
    # ipywidgets cuts the text form at 110 characters; the chapters' longest names take 38
    assert len(repr(live)) - len("LiveSliders(u, k)") + 38 < 110
    assert type(slider_k).__name__ == "IntSlider"


def test_live_sliders_may_hold_values_without_stored_frames():
    """``live(k=[...])``: the notebook's sliders reach values that no stored frame holds."""
    calls = []

    def counting(u, k):
        calls.append((u, k))
        return draw(u, k)

    demo = FrameSlider(counting, u=[0.1, 0.9], k=[0], initial={"u": 0.9})
    assert len(calls) == 2                        # the stored frames only
    live = demo.live(k=[0, 3, 7])
    slider_u, slider_k, picture = live.children
    assert (slider_k.min, slider_k.max, slider_k.value) == (0, 7, 0)
    assert slider_u.value == 0.9                  # the initial value, where it is kept
    before = bytes(picture.value)
    slider_k.value = 7                            # no stored frame has k = 7
    assert calls[-1] == (0.9, 7) and bytes(picture.value) != before
    assert demo.live(u=[0.2, 0.4]).children[0].value == 0.2   # initial value gone: first
    assert len(demo.frames) == 2 and demo.params["k"] == [0]  # the frames are untouched
    with pytest.raises(ValueError, match=r"live\(\) got a parameter 'v' that is not one"):
        demo.live(v=[1])
    with pytest.raises(ValueError, match="parameter 'k' needs a non-empty list"):
        demo.live(k=[])
    with pytest.raises(ValueError, match="parameter 'k' must hold finite numbers"):
        demo.live(k=[0, float("nan")])
    plt.close("all")


def test_a_parameter_with_one_value_is_text_not_a_slider():
    """A slider that cannot move is no control: the page shows the fixed value as text, and
    the frame index comes from the other sliders (frames in itertools.product order)."""
    demo = FrameSlider(draw, u=[0.5], k=[0, 1, 2], initial={"k": 2})
    page = demo._repr_html_()
    assert page.count('class="fs-slider"') == 1 and 'data-param="k"' in page
    assert 'data-param="u"' not in page and '<span class="fs-fixed"' in page
    assert ">u 0.5</span>" in page
    assert json.loads(page.split('class="fs-labels">')[1].split("</script>")[0]) == [
        ["0", "1", "2"]]
    assert f'src="data:image/png;base64,{demo.frames[2]}"' in page   # k = 2 shown first
    both = FrameSlider(draw, u=[0.1, 0.9], k=[0, 1])._repr_html_()
    assert both.count('class="fs-slider"') == 2 and "fs-fixed" not in both
    plt.close("all")


def test_plots_use_the_book_colour_maps():
    w = torch.softmax(torch.randn(4, 4), dim=-1)
    ax = plot_attention(w, title="weights")
    assert ax.images[0].get_cmap().name == ATTENTION_CMAP
    assert ax.images[0].get_clim() == (0.0, pytest.approx(float(w.max())))
    ax = plot_signed(np.array([[-2.0, 1.0]]))
    assert ax.images[0].get_cmap().name == SIGNED_CMAP
    assert ax.images[0].get_clim() == (-2.0, 2.0)
    with pytest.raises(ValueError, match="2-D"):
        plot_attention(torch.zeros(2, 2, 2))
    plt.close("all")


def test_live_sliders_accept_mixed_values():
    demo = FrameSlider(lambda mode: draw(0.5, 0 if mode == "none" else mode), mode=["none", 2, 5])
    live = demo.live()
    assert type(live.children[0]).__name__ == "SelectionSlider"
    live.children[0].value = 5
    assert bytes(live.children[-1].value).startswith(b"\x89PNG")


def test_frames_are_sharp_small_palette_pngs_with_a_hint_for_blocked_scripts():
    from PIL import Image
    import io

    demo = FrameSlider(draw, u=[0.1, 0.9], k=[0])
    image = Image.open(io.BytesIO(base64.b64decode(demo.frames[0])))
    assert image.size == (200, 150)          # figsize (2, 1.5) at 100 dpi
    assert image.mode == "P"                 # palette: a few kB per frame
    html_text = demo._repr_html_()
    assert 'class="fs-hint"' in html_text and "run the next cell" in html_text
    assert 'root.querySelector(".fs-hint")' in html_text   # the script removes the hint


def test_live_picture_fits_the_window():
    picture = FrameSlider(draw, u=[0.1, 0.9], k=[0]).live().children[-1]
    assert picture.layout.max_height == "65vh" and picture.layout.max_width == "100%"


def test_frames_are_never_below_100_dpi():
    with pytest.raises(ValueError, match="dpi must be an int of at least 100"):
        FrameSlider(draw, dpi=72, u=[0.1], k=[0])
    assert FrameSlider(draw, dpi=120, u=[0.1], k=[0]).dpi == 120


# ------------------------------ edge cases: wrong types, NaN, complex (issue 31)

def test_figure_png_refuses_what_is_not_a_figure():
    from seqlearn.widgets import figure_png

    for bad in (None, np.zeros((2, 2)), plt.subplots()[1]):
        with pytest.raises(TypeError, match="fig must be a matplotlib Figure"):
            figure_png(bad)
    fig = plt.figure(figsize=(1, 1))
    with pytest.raises(ValueError, match="dpi must be a positive finite number"):
        figure_png(fig, dpi=float("nan"))
    with pytest.raises(TypeError, match="colours must be None or an int, got float"):
        figure_png(fig, colours=2.5)
    plt.close("all")


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), np.float64("nan")])
def test_slider_values_must_be_finite(bad):
    """A NaN value was accepted and made ``live()`` fail with a TraitError."""
    with pytest.raises(ValueError, match=r"parameter 'u' must hold finite numbers"):
        FrameSlider(draw, u=[0.0, bad], k=[0])


@pytest.mark.parametrize("plot, name", [(plot_attention, "weights"),
                                        (plot_signed, "matrix")])
def test_plots_refuse_complex_and_empty_matrices(plot, name):
    """Complex input lost its imaginary part silently; a (0, 0) matrix gave NumPy's
    error."""
    for bad in (np.ones((2, 2)) * (1 + 1j), torch.ones(2, 2, dtype=torch.complex64),
                [[1 + 2j, 0.0]]):
        with pytest.raises(TypeError, match=f"{name} must hold real numbers"):
            plot(bad)
    with pytest.raises(
            ValueError, match=f"{name} must have at least one row and one column"):
        plot(np.zeros((0, 0)))
    with pytest.raises(
            TypeError, match=f"{name} must be a 2-D tensor or array, got NoneType"):
        plot(None)
    # bf16 has no NumPy type
    ax = plot(torch.tensor([[0.25, 0.75]], dtype=torch.bfloat16))
    assert ax.images[0].get_array().tolist() == [[0.25, 0.75]]
    plt.close("all")
