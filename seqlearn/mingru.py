r"""minGRU and minLSTM (Feng et al. 2024), computed by a scan in log space.

Book chapter ``gru_to_attention``. The gates and the candidate read only the input ``x_t``,

.. math::

    u_t = \sigma(W_u x_t + b_u), \quad \tilde h_t = g(W_h x_t + b_h), \quad
    h_t = u_t \odot h_{t-1} + (1 - u_t) \odot \tilde h_t            \qquad (eq-g2a-mingru-log)

(``u`` is the keep gate of the book; the paper's ``z_t`` is ``1 - u_t``), with the positive
activation ``g(y) = y + 1/2`` for ``y >= 0`` and ``sigma(y)`` for ``y < 0``. The minLSTM has a
forget gate ``f_t`` and an input gate ``i_t``, normalised to sum to one:

.. math::

    f'_t = \frac{f_t}{f_t + i_t}, \quad i'_t = \frac{i_t}{f_t + i_t}, \quad
    h_t = f'_t \odot h_{t-1} + i'_t \odot \tilde h_t                 \qquad (eq-g2a-minlstm)

Both are ``h_t = a_t h_{t-1} + b_t`` with ``a_t, b_t > 0``, which the log-space scan computes
without ever forming a product of many gates:

.. math::

    h_t = \exp\Big(A_t + \operatorname{logcumsumexp}_{i \le t}(\log b_i - A_i)\Big),\qquad
    A_t = \sum_{j \le t} \log a_j                                     \qquad (eq-g2a-log-scan)

(an initial state ``h_0 > 0`` enters as ``b_0 = h_0`` before the first step).
"""

from __future__ import annotations

import torch
from torch import Tensor, nn
from torch.nn import functional as F

from seqlearn.scan import METHODS, linear_scan
from seqlearn.validate import (check_finite, check_int, check_same_dtype, check_shape,
                               check_tensor)

MINGRU_METHODS = ("log",) + METHODS


def positive_candidate(y: Tensor) -> Tensor:
    r"""``g(y) = y + 1/2`` for ``y >= 0``, ``sigma(y)`` for ``y < 0``: continuous and positive."""
    check_tensor(y, "y")
    return torch.where(y >= 0, y.clamp(min=0) + 0.5, torch.sigmoid(y))


def log_positive_candidate(y: Tensor) -> Tensor:
    r"""``log g(y)`` computed without forming ``g``: ``log(y + 1/2)`` or ``-softplus(-y)``."""
    check_tensor(y, "y")
    return torch.where(y >= 0, torch.log(y.clamp(min=0) + 0.5), -F.softplus(-y))


def log_space_scan(log_a: Tensor, log_b: Tensor,
                   log_h0: Tensor | None = None) -> Tensor:
    r"""``log h_t`` of ``h_t = a_t h_{t-1} + b_t`` (``a, b >= 0``) by
    ``eq-g2a-log-scan``.

    log_a, log_b ``(..., T, H)``, log_h0 ``(..., H)`` or None (``h_0 = 0``, i.e.
    ``log h_0 = -inf``). Returns ``log h (..., T, H)``. Uses only ``cumsum`` and
    ``logcumsumexp``: depth ``O(log T)`` on parallel hardware, and no product of gates
    can underflow to 0.

    A closed gate ``a_t = 0`` (``log a_t = -inf``) restarts the recurrence,
    ``h_t = b_t``. There the two running sums of eq-g2a-log-scan would meet as
    ``-inf + inf``, so inputs with such a gate are computed by the loop
    ``log h_t = logaddexp(log a_t + log h_{t-1}, log b_t)`` instead (the same numbers
    where both apply). ``+inf`` (an infinite coefficient) is refused.
    """
    for x, name in ((log_a, "log_a"), (log_b, "log_b")):
        if not isinstance(x, Tensor):
            raise TypeError(f"{name} must be a torch.Tensor, got {type(x).__name__}")
        check_tensor(x, name)
    dims = check_shape(log_a, "log_a", "... T H")
    if log_b.shape != log_a.shape:
        raise ValueError(f"log_b must have the shape of log_a {tuple(log_a.shape)}, "
                         f"got {tuple(log_b.shape)}")
    check_same_dtype("log_a", log_a, "log_b", log_b)
    given = [(log_a, "log_a"), (log_b, "log_b")]
    if log_h0 is not None:
        check_tensor(log_h0, "log_h0")
        check_shape(log_h0, "log_h0", "... H",
                    sizes={"...": dims["..."], "H": dims["H"]})
        check_same_dtype("log_a", log_a, "log_h0", log_h0)
        given.append((log_h0, "log_h0"))
    for x, name in given:
        if bool(torch.isposinf(x).any()):
            raise ValueError(f"{name} must be below +inf (finite coefficients)")
    if bool(torch.isneginf(log_a).any()):  # a closed gate: the loop, not the two sums
        return _log_space_loop(log_a, log_b, log_h0)
    if log_h0 is not None:
        # h_0 is one more step with a = 1 (log 0) and b = h_0, placed before step 1
        log_a = torch.cat([torch.zeros_like(log_a[..., :1, :]), log_a], dim=-2)
        log_b = torch.cat([log_h0.unsqueeze(-2), log_b], dim=-2)
    A = torch.cumsum(log_a, dim=-2)  # (..., T, H): log prod_{j <= t} a_j
    log_h = A + torch.logcumsumexp(log_b - A, dim=-2)  # (..., T, H)
    return log_h if log_h0 is None else log_h[..., 1:, :]


def _log_space_loop(log_a: Tensor, log_b: Tensor, log_h0: Tensor | None) -> Tensor:
    """``log h_t = logaddexp(log a_t + log h_{t-1}, log b_t)``, one step after the
    other."""
    log_h = log_b.new_full(log_b[..., 0, :].shape, float("-inf"))  # (..., H): log 0
    log_h = log_h if log_h0 is None else log_h0
    states = []
    for log_a_t, log_b_t in zip(log_a.unbind(-2), log_b.unbind(-2)):  # each (..., H)
        log_h = _logaddexp(log_a_t + log_h, log_b_t)
        states.append(log_h)
    return torch.stack(states, -2) if states else log_b.clone()  # (..., T, H)


def _logaddexp(x: Tensor, y: Tensor) -> Tensor:
    """``log(e^x + e^y)``; ``-inf`` with gradient 0 (not NaN) where both are
    ``-inf``."""
    both = torch.isneginf(x) & torch.isneginf(y)
    out = torch.logaddexp(x.masked_fill(both, 0.0), y.masked_fill(both, 0.0))
    return out.masked_fill(both, float("-inf"))


def _check_input(x: Tensor, size: int, weight: Tensor) -> None:
    """``x`` finite ``(B, T, D=size)`` of the parameters' dtype (an infinite input would
    reach the scan as an infinite coefficient)."""
    if not isinstance(x, Tensor):
        raise TypeError(f"x must be a torch.Tensor, got {type(x).__name__}")
    check_tensor(x, "x")
    check_shape(x, "x", "B T D", sizes={"D": size})
    check_same_dtype("x", x, "the module's parameters", weight)
    check_finite(x, "x")


def _check_method(method: str) -> None:
    if not isinstance(method, str) or method not in MINGRU_METHODS:
        raise ValueError(f"method must be one of {MINGRU_METHODS}, got {method!r}")


class MinGRU(nn.Module):
    r"""One minGRU layer, ``eq-g2a-mingru-log``: ``forward(x (B, T, D), method) -> h (B, T, H)``.

    ``method="log"`` runs the log-space scan ``eq-g2a-log-scan`` (the paper's stable form);
    any method of :func:`seqlearn.scan.linear_scan` runs the same recurrence there.
    ``h_0 = 0``.
    """

    def __init__(self, input_size: int, hidden_size: int) -> None:
        super().__init__()
        check_int(input_size, "input_size")
        check_int(hidden_size, "hidden_size")
        self.input_size, self.hidden_size = input_size, hidden_size
        self.linear_u = nn.Linear(input_size, hidden_size)  # keep-gate logits
        self.linear_h = nn.Linear(input_size, hidden_size)  # candidate pre-activations

    def gates(self, x: Tensor) -> tuple[Tensor, Tensor]:
        """Keep gates ``u`` and candidates ``h~``, each ``(B, T, H)``, all steps at once."""
        _check_input(x, self.input_size, self.linear_u.weight)
        return torch.sigmoid(self.linear_u(x)), positive_candidate(self.linear_h(x))

    def forward(self, x: Tensor, method: str = "log") -> Tensor:
        _check_method(method)
        if method != "log":
            u, h_tilde = self.gates(x)  # (B, T, H) each
            return linear_scan(u, (1 - u) * h_tilde, method=method)
        _check_input(x, self.input_size, self.linear_u.weight)
        k = self.linear_u(x)  # (B, T, H)
        log_u, log_one_minus_u = -F.softplus(-k), -F.softplus(k)  # log u, log (1 - u)
        log_b = log_one_minus_u + log_positive_candidate(self.linear_h(x))
        return log_space_scan(log_u, log_b).exp()  # (B, T, H)


class MinLSTM(nn.Module):
    r"""One minLSTM layer, ``eq-g2a-minlstm``: ``forward(x (B, T, D), method) -> h (B, T, H)``.

    The normalised gates are computed in log space: with ``d = softplus(-k_f) - softplus(-k_i)``
    (``= log i_t - log f_t``), ``log f'_t = -softplus(d)`` and ``log i'_t = -softplus(-d)``.
    """

    def __init__(self, input_size: int, hidden_size: int) -> None:
        super().__init__()
        check_int(input_size, "input_size")
        check_int(hidden_size, "hidden_size")
        self.input_size, self.hidden_size = input_size, hidden_size
        self.linear_f = nn.Linear(input_size, hidden_size)
        self.linear_i = nn.Linear(input_size, hidden_size)
        self.linear_h = nn.Linear(input_size, hidden_size)

    def gates(self, x: Tensor) -> tuple[Tensor, Tensor, Tensor]:
        """Normalised gates ``f'``, ``i'`` (``f' + i' = 1``) and candidates, each ``(B, T, H)``."""
        _check_input(x, self.input_size, self.linear_f.weight)
        f, i = torch.sigmoid(self.linear_f(x)), torch.sigmoid(self.linear_i(x))
        return f / (f + i), i / (f + i), positive_candidate(self.linear_h(x))

    def forward(self, x: Tensor, method: str = "log") -> Tensor:
        _check_method(method)
        if method != "log":
            f, i, h_tilde = self.gates(x)  # (B, T, H) each
            return linear_scan(f, i * h_tilde, method=method)
        _check_input(x, self.input_size, self.linear_f.weight)
        d = F.softplus(-self.linear_f(x)) - F.softplus(-self.linear_i(x))  # log i - log f
        log_f, log_i = -F.softplus(d), -F.softplus(-d)  # log f', log i'
        log_b = log_i + log_positive_candidate(self.linear_h(x))
        return log_space_scan(log_f, log_b).exp()  # (B, T, H)
