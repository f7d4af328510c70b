r"""How saturated is a softmax? Largest weight, entropy and Jacobian norm of each row.

For scores ``e`` and weights ``alpha = softmax(e)`` over the last axis (the self-attention
chapter's eq-sa-softmax-jac and eq-sa-jac-norm):

.. math::

    J = \operatorname{diag}(\alpha) - \alpha \alpha^\top, \qquad
    \lVert J \rVert_F^2 = \sum_i \alpha_i^2 - 2 \sum_i \alpha_i^3 + \Big(\sum_i \alpha_i^2\Big)^2 .

A saturated row (one weight near 1) has ``max alpha -> 1``, entropy ``-> 0`` and
``||J||_F -> 0``: almost no gradient passes from the weights back to the scores.

Computed without cancellation. In a saturated row the three sums of eq-sa-jac-norm are
all near 1 and their combination near 0, so the formula loses every digit (scores
``[0, -30, -30]`` give 0 in float64, the true norm being ``2.96e-13``). The same norm
as a sum of non-negative terms,

.. math::

    \lVert J \rVert_F^2 = \sum_i \alpha_i^2 \big( r_i^2 + q_i \big), \qquad
    r_i = \sum_{j \ne i} \alpha_j = 1 - \alpha_i, \qquad
    q_i = \sum_{j \ne i} \alpha_j^2,

(the diagonal entries ``alpha_i (1 - alpha_i)`` and the off-diagonal
``alpha_i alpha_j``), with ``r_i`` and ``q_i`` summed over the other entries instead of
subtracted from a total, keeps full relative precision; so does
``log alpha_i = (e_i - m) - log1p(sum_{j != top} e^{e_j - m})`` (``m`` the largest
score) in the entropy.
"""

from __future__ import annotations

import torch
from torch import Tensor

from seqlearn.scores import _compute_dtype
from seqlearn.validate import check_finite, check_nonempty, check_tensor


def _sum_of_others(v: Tensor) -> Tensor:
    """``sum_{j != i} v_j`` for every ``i`` over the last axis, without subtracting
    ``v_i`` from a total: the sums before ``i`` plus the sums after it. (..., n) ->
    (..., n)."""
    zero = torch.zeros_like(v[..., :1])
    before = torch.cat([zero, v[..., :-1].cumsum(-1)], dim=-1)  # sum_{j < i}
    # sum_{j > i}
    after = torch.cat([v[..., 1:].flip(-1).cumsum(-1).flip(-1), zero], dim=-1)
    return before + after


def softmax_saturation(scores: Tensor) -> tuple[Tensor, Tensor, Tensor]:
    """scores (..., n) -> (largest weight, entropy in nats, ``||J||_F``), each (...,).

    Computed from the weights alone, without forming the ``(n, n)`` Jacobian, and
    without cancellation (module docstring): in float64 each result keeps its relative
    precision in saturated rows, until ``||J||_F^2`` itself underflows (``||J||_F``
    below about ``1e-154``). In float32 that happens near ``1e-19``; float16 and
    bfloat16 scores are computed in float32.
    """
    check_tensor(scores, "scores")
    check_nonempty(scores, "scores", "... n", "n")
    check_finite(scores, "scores")
    dtype, work = scores.dtype, _compute_dtype(scores.dtype)
    # (..., n): e - m <= 0
    z = scores.to(work) - scores.to(work).amax(dim=-1, keepdim=True)
    p = z.exp()  # (..., n): e^{e_i - m}, 1 at the top
    top = z.argmax(dim=-1, keepdim=True)  # (..., 1)
    rest = p.scatter(-1, top, 0.0).sum(-1, keepdim=True)  # (..., 1): sum_{j != top}
    log_alpha = z - torch.log1p(rest)  # (..., n): log softmax, accurate near 0
    alpha = log_alpha.exp()  # (..., n)
    entropy = -(alpha * log_alpha).sum(-1)  # (...,)
    r, q = _sum_of_others(alpha), _sum_of_others(alpha**2)  # (..., n) each
    # eq-sa-jac-norm, no cancellation
    jacobian_norm = (alpha**2 * (r**2 + q)).sum(-1).sqrt()
    return alpha.amax(dim=-1).to(dtype), entropy.to(dtype), jacobian_norm.to(dtype)
