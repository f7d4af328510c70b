"""The Elman networks of :mod:`seqlearn.bptt.rnn` rebuilt from ``torch.nn`` modules.

This is the independent reference the hand-written gradients are checked against: the same
parameters copied into ``torch.nn.RNN(batch_first=True)`` and ``torch.nn.Linear`` (float64),
differentiated by autograd.
"""

from __future__ import annotations

import numpy as np
import torch

from seqlearn.bptt.params import Params, check_array, check_keys, param_names, suffixes


def torch_names(num_layers: int = 1, bidirectional: bool = False) -> dict[str, str]:
    """Our parameter names -> the parameter names in :func:`to_torch`'s module.

    ``W{i}`` -> ``rnn.weight_ih_l{i-1}``, ``W{i}{i}`` -> ``rnn.weight_hh_l{i-1}``,
    ``b{i}`` -> ``rnn.bias_ih_l{i-1}`` (suffix ``_b`` -> ``_reverse``),
    ``W{n+1}, b{n+1}`` -> ``head.weight, head.bias``.
    """
    param_names(num_layers, bidirectional)  # validates both
    names = {}
    for i in range(1, num_layers + 1):
        for s, t in zip(suffixes(bidirectional), ["", "_reverse"]):
            names[f"W{i}{s}"] = f"rnn.weight_ih_l{i - 1}{t}"
            names[f"W{i}{i}{s}"] = f"rnn.weight_hh_l{i - 1}{t}"
            names[f"b{i}{s}"] = f"rnn.bias_ih_l{i - 1}{t}"
    n = num_layers + 1
    names.update({f"W{n}": "head.weight", f"b{n}": "head.bias"})
    return names


def to_torch(params: Params, bidirectional: bool = False) -> torch.nn.ModuleDict:
    """The same network in torch (float64): ``{"rnn": nn.RNN, "head": nn.Linear}``.

    torch adds two biases, ``bias_ih + bias_hh``, where the CMU 11-785 notes have one: ``bias_hh`` is zero.
    """
    dirs = 2 if bidirectional else 1
    if not isinstance(params, dict):
        raise TypeError(f"params must be a dict of arrays, got {type(params).__name__}")
    n = max((len(params) - 2) // (3 * dirs), 1)
    check_keys(params, param_names(n, bidirectional))
    s = suffixes(bidirectional)[0]
    H, D = params[f"W11{s}"].shape[0], params[f"W1{s}"].shape[1]
    net = torch.nn.ModuleDict({
        "rnn": torch.nn.RNN(D, H, num_layers=n, bidirectional=bidirectional, batch_first=True,
                            dtype=torch.float64),
        "head": torch.nn.Linear(dirs * H, params[f"W{n + 1}"].shape[0], dtype=torch.float64)})
    with torch.no_grad():
        for ours, theirs in torch_names(n, bidirectional).items():
            net.get_parameter(theirs).copy_(torch.from_numpy(params[ours]))
        for name, p in net["rnn"].named_parameters():
            if name.startswith("bias_hh"):
                p.zero_()
    return net


def torch_reference(x: np.ndarray, h0: np.ndarray, params: Params, dy: np.ndarray,
                    bidirectional: bool = False
                   ) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """``y`` and the gradients of ``sum(y * dy)`` by autograd, under our names (with x,
    h0).

    ``h0 (B, H)`` for the single-layer network, ``(L*dirs, B, H)`` for the stacked ones.
    ``x``, ``h0`` and ``dy`` are float64 NumPy arrays, as for
    :func:`seqlearn.bptt.rnn_forward`.
    """
    dims: dict[str, int] = {}
    check_array(x, "x", "B T D", dims)
    if dims["T"] < 1:
        raise ValueError(f"x must have at least one time step, got shape {x.shape}")
    if not isinstance(h0, np.ndarray):
        raise TypeError(f"h0 must be a numpy.ndarray, got {type(h0).__name__}")
    check_array(h0, "h0", "B H" if h0.ndim == 2 else "S B H", dims, like=x)
    check_array(dy, "dy", "B T O", dims, like=x)
    net = to_torch(params, bidirectional)
    xt = torch.tensor(x, requires_grad=True)
    # (L*dirs, B, H)
    h0t = torch.tensor(h0 if h0.ndim == 3 else h0[None], requires_grad=True)
    out, _ = net["rnn"](xt, h0t)
    # (B, T, O)
    y = net["head"](out)
    (y * torch.from_numpy(dy)).sum().backward()
    n = len(net["rnn"].all_weights) // (2 if bidirectional else 1)
    grads = {k: net.get_parameter(v).grad.numpy()
             for k, v in torch_names(n, bidirectional).items()}
    grads["x"], grads["h0"] = xt.grad.numpy(), h0t.grad.numpy().reshape(h0.shape)
    return y.detach().numpy(), grads
