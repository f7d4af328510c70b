"""Plotting helpers shared by every chapter (imported by the book, never by a model module).

One colour map for attention / mixing weights (sequential, starts at 0) and one diverging map
for signed values (gradients, weights, differences), so that a reader learns them once.
"""

from __future__ import annotations

from typing import Any, Sequence

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.axes import Axes

ATTENTION_CMAP = "viridis"
SIGNED_CMAP = "RdBu_r"


def as_matrix(x: Any, name: str = "matrix") -> np.ndarray:
    """Return a 2-D NumPy float array from a tensor or array (detached, on the CPU).

    ``TypeError`` for values that are not real numbers (complex ones would lose their
    imaginary part), ``ValueError`` unless 2-D with at least one entry.
    """
    if x is None or isinstance(x, (str, bytes)):
        raise TypeError(f"{name} must be a 2-D tensor or array, got {type(x).__name__}")
    if hasattr(x, "detach"):
        x = x.detach().cpu()
        if x.is_complex():
            raise TypeError(f"{name} must hold real numbers, got dtype {x.dtype}")
        x = (x.float() if str(x.dtype) == "torch.bfloat16" else x).numpy()  # no bf16
    raw = np.asarray(x)
    if raw.dtype.kind == "c":
        raise TypeError(f"{name} must hold real numbers, got dtype {raw.dtype}")
    if raw.dtype.kind not in "biuf":  # objects (Python complex, tensors), strings
        try:
            raw = np.asarray(x, dtype=float)
        except (TypeError, ValueError) as error:
            raise TypeError(f"{name} must hold real numbers, got dtype {raw.dtype} "
                            f"({error})") from None
    m = raw.astype(float)
    if m.ndim != 2:
        raise ValueError(f"{name} must be 2-D (rows, columns), got shape {m.shape}")
    if m.size == 0:
        raise ValueError(f"{name} must have at least one row and one column, got shape "
                         f"{m.shape}")
    return m


def _heatmap(m: np.ndarray, ax: Axes | None, cmap: str, vmin: float, vmax: float, title: str | None,
             xlabel: str | None, ylabel: str | None, xticklabels: Sequence[str] | None,
             yticklabels: Sequence[str] | None, colorbar: bool, colorbar_label: str | None) -> Axes:
    if ax is None:
        _, ax = plt.subplots(figsize=(4.2, 3.6))
    image = ax.imshow(m, cmap=cmap, vmin=vmin, vmax=vmax, aspect="auto", interpolation="nearest")
    if title:
        ax.set_title(title)
    if xlabel:
        ax.set_xlabel(xlabel)
    if ylabel:
        ax.set_ylabel(ylabel)
    if xticklabels is not None:
        ax.set_xticks(range(len(xticklabels)), labels=list(xticklabels), rotation=90)
    if yticklabels is not None:
        ax.set_yticks(range(len(yticklabels)), labels=list(yticklabels))
    if colorbar:
        bar = ax.figure.colorbar(image, ax=ax, fraction=0.046, pad=0.04)
        if colorbar_label:
            bar.set_label(colorbar_label)
    return ax


def plot_attention(weights: Any, ax: Axes | None = None, *, title: str | None = None,
                   xlabel: str | None = "key position $i$", ylabel: str | None = "query position $t$",
                   xticklabels: Sequence[str] | None = None, yticklabels: Sequence[str] | None = None,
                   colorbar: bool = True, vmax: float | None = None,
                   colorbar_label: str | None = r"weight $\alpha_{t,i}$") -> Axes:
    """Draw a weight matrix ``weights[t, i]`` (rows: queries / outputs, columns: keys / inputs).

    The colour scale starts at 0 and ends at ``vmax`` (default: the largest weight, at least 1e-12).
    """
    m = as_matrix(weights, "weights")
    top = float(vmax) if vmax is not None else max(float(m.max()), 1e-12)
    return _heatmap(m, ax, ATTENTION_CMAP, 0.0, top, title, xlabel, ylabel, xticklabels,
                    yticklabels, colorbar, colorbar_label)


def plot_signed(matrix: Any, ax: Axes | None = None, *, title: str | None = None,
                xlabel: str | None = None, ylabel: str | None = None,
                xticklabels: Sequence[str] | None = None, yticklabels: Sequence[str] | None = None,
                colorbar: bool = True, limit: float | None = None,
                colorbar_label: str | None = None) -> Axes:
    """Draw signed values with a diverging map centred on 0 (limits ``±limit``, default ``±max|m|``)."""
    m = as_matrix(matrix, "matrix")
    top = float(limit) if limit is not None else max(float(np.abs(m).max()), 1e-12)
    return _heatmap(m, ax, SIGNED_CMAP, -top, top, title, xlabel, ylabel, xticklabels,
                    yticklabels, colorbar, colorbar_label)
