r"""How saturated is a softmax? Largest weight, entropy and Jacobian norm of each row.

For scores ``e`` and weights ``alpha = softmax(e)`` over the last axis (the self-attention
chapter's eq-sa-softmax-jac and eq-sa-jac-norm):

.. math::

    J = \operatorname{diag}(\alpha) - \alpha \alpha^\top, \qquad
    \lVert J \rVert_F^2 = \sum_i \alpha_i^2 - 2 \sum_i \alpha_i^3 + \Big(\sum_i \alpha_i^2\Big)^2 .

A saturated row (one weight near 1) has ``max alpha -> 1``, entropy ``-> 0`` and
``||J||_F -> 0``: almost no gradient passes from the weights back to the scores.
"""

from __future__ import annotations

import torch
from torch import Tensor

from seqlearn.validate import check_finite, check_nonempty, check_tensor


def softmax_saturation(scores: Tensor) -> tuple[Tensor, Tensor, Tensor]:
    """scores (..., n) -> (largest weight, entropy in nats, ``||J||_F``), each (...,).

    Computed from the weights alone, without forming the ``(n, n)`` Jacobian. Use float64
    for strongly saturated rows: in float32 the small weights underflow to zero.
    """
    check_tensor(scores, "scores")
    check_nonempty(scores, "scores", "... n", "n")
    check_finite(scores, "scores")
    alpha = torch.softmax(scores, dim=-1)  # (..., n)
    entropy = -(alpha * alpha.clamp_min(torch.finfo(alpha.dtype).tiny).log()).sum(-1)
    s2, s3 = (alpha**2).sum(-1), (alpha**3).sum(-1)  # (...,)
    jacobian_norm = (s2 - 2 * s3 + s2**2).clamp_min(0.0).sqrt()  # eq-sa-jac-norm
    return alpha.amax(dim=-1), entropy, jacobian_norm
