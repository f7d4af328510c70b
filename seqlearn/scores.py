r"""Attention score functions: how well does key ``k_i`` answer query ``q_t``?

A score function maps a query sequence and a key sequence to a matrix of scores

.. math::

    e_{t,i} = \mathrm{score}(q_t, k_i), \qquad
    q \in \mathbb{R}^{\dots \times T_q \times d_q},\;
    k \in \mathbb{R}^{\dots \times T_k \times d_k}
    \;\longmapsto\; e \in \mathbb{R}^{\dots \times T_q \times T_k},

which :func:`seqlearn.attention.attend` turns into weights with a (masked) softmax over ``i``.
The functions below are the ones the book compares (Luong et al. 2015, table of score functions;
Bahdanau et al. 2015; Vaswani et al. 2017):

==================  =====================================================  ====================
name                score(q_t, k_i)                                        object
==================  =====================================================  ====================
dot                 q_t^T k_i                                              :func:`dot_score`
scaled dot          q_t^T k_i / sqrt(d)                                    :func:`scaled_dot_score`
general / bilinear  q_t^T W k_i                                            :class:`BilinearScore`
concat              w^T tanh(W [q_t; k_i])                                 :class:`ConcatScore`
additive            w^T tanh(W_q q_t + W_k k_i), with W = [W_q W_k]        :class:`AdditiveScore`
MLP                 MLP([q_t; k_i])                                        :class:`MLPScore`
location            (W q_t)_i  (ignores the keys' content)                 :class:`LocationScore`
==================  =====================================================  ====================

Concat and additive are one function written two ways: a matrix acting on a stacked vector is
the sum of its column blocks acting on the pieces, ``W [q; k] = W_q q + W_k k``
(:meth:`AdditiveScore.from_concat` splits the weights; the book's attention chapter proves the
identity). They differ in cost: the concatenated form multiplies ``W`` into all ``Tq * Tk``
pairs, the additive form projects each query and each key once.

Erratum (source notes): one set of notes divides the scaled dot product ``a^T b`` by
``sqrt(||a||)``, with ``a`` the key; the scale of Vaswani et al. is ``1/sqrt(d)`` with ``d`` the
key dimension, a constant that keeps the scores' variance near one when the entries of ``q`` and
``k`` are independent with variance one.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import torch
from torch import Tensor, nn

from seqlearn.validate import (check_bool, check_int, check_real, check_same_dtype,
                               check_shape, check_tensor)


def check_query_key(q: Tensor, k: Tensor, *, dq: int | None = None,
                    dk: int | None = None, same_dim: bool = False) -> dict[str, int]:
    """Validate a query/key pair and return the sizes ``Tq, dq, Tk, dk``.

    ``q`` is ``(..., Tq, dq)``, ``k`` is ``(..., Tk, dk)`` with the same leading (batch)
    dimensions, both floating point of one dtype. ``dq``/``dk`` fix the feature sizes (a
    module's input widths); ``same_dim=True`` requires ``dq == dk`` (dot-product
    scores).
    """
    check_tensor(q, "q")
    check_tensor(k, "k")
    check_same_dtype("q", q, "k", k)
    lead: dict = {}
    qd = check_shape(q, "q", "... Tq dq", sizes=None if dq is None else {"dq": dq},
                     bound=lead)
    key_dim = "dq" if same_dim else "dk"  # "dq": the size q fixed
    kd = check_shape(k, "k", f"... Tk {key_dim}",
                     sizes=None if dk is None else {"dk": dk}, bound=lead)
    return {"Tq": qd["Tq"], "dq": qd["dq"], "Tk": kd["Tk"], "dk": kd[key_dim]}


def default_scale(d: int) -> float:
    """The scaled dot product's factor ``1/sqrt(d)`` (Vaswani et al. 2017),
    ``d >= 1``."""
    return 1.0 / math.sqrt(check_int(d, "d"))


def _scale_for(scale: float | None, d: int) -> float:
    """``scale``, checked, or the default ``1/sqrt(d)`` for queries of ``d``
    features."""
    if scale is not None:
        return check_real(scale, "scale")
    if d == 0:
        raise ValueError("q and k have d=0 features, so the default scale 1/sqrt(d) is "
                         "undefined; pass scale= (the scores are then all 0)")
    return default_scale(d)


def _compute_dtype(dtype: torch.dtype) -> torch.dtype:
    """float32 for float16 and bfloat16 inputs, else ``dtype`` itself.

    Reduced-precision attention sums its products and its exponentials in float32 and
    rounds once at the end, as ``torch.nn.functional.scaled_dot_product_attention`` and
    FlashAttention do: a float16 score ``q . k`` above 65504 would otherwise overflow to
    ``inf`` and turn a softmax into NaN, and a running sum in bfloat16 keeps 8 bits.
    """
    return torch.float32 if dtype in (torch.float16, torch.bfloat16) else dtype


def dot_score(q: Tensor, k: Tensor) -> Tensor:
    """Dot-product score ``e_{t,i} = q_t^T k_i`` (Luong et al. 2015).

    q (..., Tq, d), k (..., Tk, d) -> e (..., Tq, Tk).
    """
    check_query_key(q, k, same_dim=True)
    return q @ k.transpose(-2, -1)  # (..., Tq, Tk)


def scaled_dot_score(q: Tensor, k: Tensor, scale: float | None = None) -> Tensor:
    """Scaled dot-product score ``e_{t,i} = s * q_t^T k_i`` with ``s = 1/sqrt(d)`` by
    default.

    q (..., Tq, d), k (..., Tk, d) -> e (..., Tq, Tk). ``scale`` overrides ``s`` (any
    finite real number; ``0`` gives uniform attention). float16 and bfloat16 scores are
    computed in float32 and rounded once (a product ``q . k`` may exceed their range
    before scaling).
    """
    dims = check_query_key(q, k, same_dim=True)
    scale = _scale_for(scale, dims["dq"])
    work = _compute_dtype(q.dtype)
    # (..., Tq, Tk)
    return (scale * (q.to(work) @ k.to(work).transpose(-2, -1))).to(q.dtype)


def concat_pairs(q: Tensor, k: Tensor) -> Tensor:
    """Every pair ``[q_t; k_i]`` stacked: q (..., Tq, dq), k (..., Tk, dk) -> (..., Tq, Tk, dq + dk).

    The input of the concatenated scores (:class:`ConcatScore`, :class:`MLPScore`); it holds
    ``Tq * Tk`` vectors, which is why the additive form avoids it.
    """
    dims = check_query_key(q, k)
    lead = q.shape[:-2]
    return torch.cat([  # (..., Tq, Tk, dq + dk)
        q.unsqueeze(-2).expand(*lead, dims["Tq"], dims["Tk"], dims["dq"]),
        k.unsqueeze(-3).expand(*lead, dims["Tq"], dims["Tk"], dims["dk"]),
    ], dim=-1)


class BilinearScore(nn.Module):
    """General (bilinear) score ``e_{t,i} = q_t^T W k_i`` with ``W`` of shape ``(d_q, d_k)``.

    Luong et al. (2015) call it "general"; with ``W = I`` it is the dot score.
    """

    def __init__(self, d_q: int, d_k: int) -> None:
        super().__init__()
        check_int(d_q, "d_q")
        check_int(d_k, "d_k")
        self.weight = nn.Parameter(torch.empty(d_q, d_k))
        nn.init.xavier_uniform_(self.weight)

    def forward(self, q: Tensor, k: Tensor) -> Tensor:
        check_query_key(q, k, dq=self.weight.shape[0], dk=self.weight.shape[1])
        return q @ self.weight @ k.transpose(-2, -1)  # (..., Tq, dk) @ (..., dk, Tk)


class ConcatScore(nn.Module):
    r"""Concat score as the CMU 11-785 notes write it: a one-layer network reads each pair.

    .. math::

        e_{t,i} = v^\top \tanh\big(W [q_t; k_i] + b\big), \qquad
        W \in \mathbb{R}^{h \times (d_q + d_k)},\; v \in \mathbb{R}^{h}.

    The readable form: it builds all ``Tq * Tk`` stacked pairs and multiplies ``W`` into each.
    :class:`AdditiveScore` computes the same numbers without the pairs
    (:meth:`AdditiveScore.from_concat`). ``bias`` adds ``b``.
    """

    def __init__(self, d_q: int, d_k: int, d_hidden: int, bias: bool = False) -> None:
        super().__init__()
        for value, name in ((d_q, "d_q"), (d_k, "d_k"), (d_hidden, "d_hidden")):
            check_int(value, name)
        check_bool(bias, "bias")
        self.d_q, self.d_k = d_q, d_k
        self.W = nn.Linear(d_q + d_k, d_hidden, bias=bias)  # W (and b)
        self.v = nn.Linear(d_hidden, 1, bias=False)  # v^T

    def forward(self, q: Tensor, k: Tensor) -> Tensor:
        check_query_key(q, k, dq=self.d_q, dk=self.d_k)
        pairs = concat_pairs(q, k)  # (..., Tq, Tk, dq + dk)
        return self.v(torch.tanh(self.W(pairs))).squeeze(-1)  # (..., Tq, Tk)


class AdditiveScore(nn.Module):
    r"""Additive score of Bahdanau et al. (2015): the concat score with ``W`` split in two.

    .. math::

        e_{t,i} = w^\top \tanh\big(W_q q_t + W_k k_i + b\big)
                = w^\top \tanh\big(W [q_t; k_i] + b\big),
        \qquad W = [W_q \; W_k] \in \mathbb{R}^{h \times (d_q + d_k)}.

    The Sequence Models notes write it ``W_a^T tanh(W_b q_t + W_c k_i)``: ``W_b = W_q`` is
    ``self.query``, ``W_c = W_k`` is ``self.key`` and ``W_a = w`` is ``self.w``. Splitting
    ``W`` into the blocks that multiply ``q`` and ``k`` projects each sequence once, so the
    ``(Tq, Tk, h)`` tensor is formed by broadcasting a sum instead of concatenating all
    pairs (:class:`ConcatScore`). ``bias`` adds ``b`` (Bahdanau et al. have none).
    """

    def __init__(self, d_q: int, d_k: int, d_hidden: int, bias: bool = False) -> None:
        super().__init__()
        for value, name in ((d_q, "d_q"), (d_k, "d_k"), (d_hidden, "d_hidden")):
            check_int(value, name)
        check_bool(bias, "bias")
        self.query = nn.Linear(d_q, d_hidden, bias=bias)  # W_q (and b)
        self.key = nn.Linear(d_k, d_hidden, bias=False)  # W_k
        self.w = nn.Linear(d_hidden, 1, bias=False)  # w^T

    def forward(self, q: Tensor, k: Tensor) -> Tensor:
        check_query_key(q, k, dq=self.query.in_features, dk=self.key.in_features)
        hidden = self.query(q).unsqueeze(-2) + self.key(k).unsqueeze(-3)  # (..., Tq, Tk, h)
        return self.w(torch.tanh(hidden)).squeeze(-1)  # (..., Tq, Tk)

    @classmethod
    def from_concat(cls, concat: ConcatScore) -> AdditiveScore:
        """The additive score with the weights of ``concat``: ``[W_q W_k] = W``, ``w = v``.

        Both compute the same scores (up to rounding), because ``W [q; k] = W_q q + W_k k``.
        """
        if not isinstance(concat, ConcatScore):
            raise TypeError(f"concat must be a ConcatScore, got {type(concat).__name__}")
        W = concat.W.weight  # (h, dq + dk)
        score = cls(concat.d_q, concat.d_k, W.shape[0], bias=concat.W.bias is not None)
        score.to(dtype=W.dtype, device=W.device)
        with torch.no_grad():
            score.query.weight.copy_(W[:, : concat.d_q])  # W_q: the first d_q columns
            score.key.weight.copy_(W[:, concat.d_q:])  # W_k: the last d_k columns
            if concat.W.bias is not None:
                score.query.bias.copy_(concat.W.bias)
            score.w.weight.copy_(concat.v.weight)
        return score


class MLPScore(nn.Module):
    """MLP score ``e_{t,i} = MLP([q_t; k_i])``: a small network reads each concatenated pair.

    ``hidden`` lists the hidden layer widths; each hidden layer is ``Linear`` then
    ``activation()``, and a last ``Linear`` maps to one number. With one hidden layer, ``tanh``
    and no biases this is :class:`AdditiveScore`.
    """

    def __init__(self, d_q: int, d_k: int, hidden: Sequence[int] = (32,),
                 activation: type[nn.Module] = nn.ReLU, bias: bool = True) -> None:
        super().__init__()
        check_int(d_q, "d_q")
        check_int(d_k, "d_k")
        check_bool(bias, "bias")
        if isinstance(hidden, (str, bytes)) or not isinstance(hidden, Sequence):
            raise TypeError(f"hidden must be a sequence of ints, got {type(hidden).__name__}")
        if not (isinstance(activation, type) and issubclass(activation, nn.Module)):
            raise TypeError(f"activation must be a torch.nn.Module class, got {activation!r}")
        widths = [d_q + d_k, *hidden]
        for width in hidden:
            check_int(width, "each hidden width")
        layers: list[nn.Module] = []
        for n_in, n_out in zip(widths[:-1], widths[1:]):
            layers += [nn.Linear(n_in, n_out, bias=bias), activation()]
        layers.append(nn.Linear(widths[-1], 1, bias=bias))
        self.d_q, self.d_k = d_q, d_k
        self.mlp = nn.Sequential(*layers)

    def forward(self, q: Tensor, k: Tensor) -> Tensor:
        check_query_key(q, k, dq=self.d_q, dk=self.d_k)
        return self.mlp(concat_pairs(q, k)).squeeze(-1)  # (..., Tq, Tk)


class LocationScore(nn.Module):
    """Location-based score of Luong et al. (2015): ``e_t = W q_t``, one score per position.

    The query alone decides where to look; the keys only fix how many positions there are:
    ``e_{t,i} = (W q_t)_i`` for ``i < Tk <= max_len``, ``W`` of shape ``(max_len, d_q)``.
    """

    def __init__(self, d_q: int, max_len: int) -> None:
        super().__init__()
        check_int(d_q, "d_q")
        check_int(max_len, "max_len")
        self.proj = nn.Linear(d_q, max_len, bias=False)

    def forward(self, q: Tensor, k: Tensor) -> Tensor:
        dims = check_query_key(q, k, dq=self.proj.in_features)
        if dims["Tk"] > self.proj.out_features:
            raise ValueError(f"k has Tk={dims['Tk']} positions, more than max_len="
                             f"{self.proj.out_features}")
        return self.proj(q)[..., : dims["Tk"]]  # (..., Tq, Tk)
