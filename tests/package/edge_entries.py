"""The rows of the edge-case matrix (:mod:`edges`): one valid call per public name.

Arguments are written with the specifications of ``edges.py`` over small named
dimensions;
the matrix's columns change them one at a time. Grouped by module, in the order of
``seqlearn/__init__.py``.
"""

from __future__ import annotations

import importlib
import math
from dataclasses import replace

import numpy as np
import torch
from torch import nn

from edges import (
    F64,
    Choice,
    Entry,
    Flag,
    Floats,
    Fn,
    Ids,
    Int,
    Lengths,
    Mask,
    Obj,
    Real,
)
from seqlearn import (
    associative,
    attention as att,
    causal,
    complexity,
    conv,
    gated,
    layernorm,
    linear_attention as lin,
    local_attention as local,
    long_range,
    losses,
    masks,
    memory,
    mingru,
    multiplicative as mult,
    online_softmax as osm,
    positional,
    recurrent,
    saturation,
    scan,
    scores,
    seeding,
    seq2seq,
    table1,
    train,
    transformer,
    transformer_layers as tl,
    unroll,
    validate,
    warmup,
)
from seqlearn import bptt
from seqlearn.bptt import (
    clip,
    counter,
    lstm as blstm,
    params as bparams,
    reference,
    rnn,
)
from seqlearn.bptt import truncated
from seqlearn.data import brackets, dates, hold, multi_recall, recall, strings, vocab

st_stories = importlib.import_module("seqlearn.data.stories")

ENTRIES: dict[str, Entry] = {}
NAN, INF = math.nan, math.inf
BAD_SCHEDULES = {
    "returns -1": lambda k: -1.0,
    "returns NaN": lambda k: NAN,
    "returns inf": lambda k: INF,
    "returns None": lambda k: None,
    "returns a string": lambda k: "0.5",
}


MODULE_ARGS = ("model", "cell", "cells", "decoder", "rnn", "module", "m")


def entry(name: str, call, args=None, dims=None, **kw) -> None:
    """``mixed`` (a module whose dtype the floating arguments must share) defaults to
    True for classes and for calls that take a model."""
    args = args or {}
    kw.setdefault("mixed", name.split(".")[-1][:1].isupper()
                  or any(isinstance(s, Obj) for n, s in args.items()
                         if n in MODULE_ARGS))
    ENTRIES[f"seqlearn.{name}"] = Entry(call, args, dims or {}, **kw)


def rng_arg(seed: int = 0) -> Obj:
    """A NumPy Generator (the data sets' explicit randomness)."""
    return Obj(
        lambda a: np.random.default_rng(seed), bad=(None, 0, np.random.RandomState(0))
    )


def gen_arg(seed: int = 0, optional: bool = False) -> Obj:
    """A torch Generator; ``optional``: None is allowed (torch's global generator)."""
    return Obj(
        lambda a: torch.Generator().manual_seed(seed),
        bad=(0, "x") if optional else (None, 0, "x"),
    )


# --------------------------------------------------------------------------- conv

X_BCT = {"x": Floats("B C T")}
CONV = {"B": 2, "C": 3, "T": 5}
entry(
    "conv.output_length",
    lambda a: conv.output_length(
        a.length, a.kernel_size, a.stride, a.padding, a.dilation
    ),
    {
        "length": Int("T"),
        "kernel_size": Int("K"),
        "stride": Int(2),
        "padding": Int(1),
        "dilation": Int(1),
    },
    {"T": 5, "K": 2},
)
entry(
    "conv.pad1d",
    lambda a: conv.pad1d(a.x, a.left, a.right, a.value),
    {**X_BCT, "left": Int(1), "right": Int(2), "value": Real(0.5)},
    CONV,
)
entry(
    "conv.unfold1d",
    lambda a: conv.unfold1d(
        a.x, a.kernel_size, a.stride, a.padding, a.dilation, a.pad_value
    ),
    {
        **X_BCT,
        "kernel_size": Int("K"),
        "stride": Int(1),
        "padding": Int(1),
        "dilation": Int(1),
        "pad_value": Real(0.0),
    },
    {**CONV, "K": 2},
)
entry(
    "conv.conv1d",
    lambda a: conv.conv1d(a.x, a.weight, a.bias, a.stride, a.padding, a.dilation),
    {
        **X_BCT,
        "weight": Floats("O C K"),
        "bias": Floats("O"),
        "stride": Int(1),
        "padding": Int(1),
        "dilation": Int(1),
    },
    {**CONV, "O": 2, "K": 2},
    numeric=True,
)
entry(
    "conv.insert_zeros",
    lambda a: conv.insert_zeros(a.x, a.factor),
    {**X_BCT, "factor": Int(2)},
    CONV,
    numeric=True,
)
entry(
    "conv.conv_transpose1d",
    lambda a: conv.conv_transpose1d(
        a.x, a.weight, a.bias, a.stride, a.padding, a.output_padding, a.dilation
    ),
    {
        **X_BCT,
        "weight": Floats("C O K"),
        "bias": Floats("O"),
        "stride": Int(2),
        "padding": Int(1),
        "output_padding": Int(1),
        "dilation": Int(1),
    },
    {**CONV, "O": 2, "K": 3},
    numeric=True,
)
entry(
    "conv.max_pool1d",
    lambda a: conv.max_pool1d(a.x, a.kernel_size, a.stride, a.padding, a.dilation),
    {
        **X_BCT,
        "kernel_size": Int("K"),
        "stride": Int(1),
        "padding": Int(1),
        "dilation": Int(1),
    },
    {**CONV, "K": 2},
    numeric=True,
)
entry(
    "conv.avg_pool1d",
    lambda a: conv.avg_pool1d(a.x, a.kernel_size, a.stride, a.padding),
    {**X_BCT, "kernel_size": Int("K"), "stride": Int(1), "padding": Int(1)},
    {**CONV, "K": 2},
    numeric=True,
)
entry(
    "conv.lp_pool1d",
    lambda a: conv.lp_pool1d(a.x, a.norm_type, a.kernel_size, a.stride),
    {**X_BCT, "norm_type": Real(2.0), "kernel_size": Int("K"), "stride": Int(1)},
    {**CONV, "K": 2},
    numeric=True,
)
entry(
    "conv.impulse",
    lambda a: conv.impulse(a.length, a.at, a.dtype_),
    {"length": Int("T"), "at": Int(1), "dtype_": Choice(torch.float64)},
    {"T": 4},
)
entry(
    "conv.impulse_response",
    lambda a: conv.impulse_response(a.system, a.length),
    {
        "system": Fn(
            lambda x: 2 * x,
            {
                "returns None": lambda x: None,
                "returns a wrong shape": lambda x: x[..., :-1],
                "returns a list": lambda x: [1.0],
            },
        ),
        "length": Int("T"),
    },
    {"T": 4},
)
entry(
    "conv.causal_conv1d",
    lambda a: conv.causal_conv1d(a.x, a.weight, a.bias, a.dilation),
    {**X_BCT, "weight": Floats("O C K"), "bias": Floats("O"), "dilation": Int(2)},
    {**CONV, "O": 2, "K": 2},
    numeric=True,
)

# --------------------------------------------------------------------------- recurrent

RNN_DIMS = {"B": 2, "T": 3, "D": 2, "H": 3}


def _initialised(cell):
    """The layout's parameters are ``torch.empty`` until a subclass initialises them."""
    cell.reset_parameters(torch.Generator().manual_seed(0))
    return cell

entry(
    "recurrent.past_window",
    lambda a: recurrent.past_window(a.seq, a.width),
    {"seq": Floats("B T D"), "width": Int(2)},
    RNN_DIMS,
    numeric=True,
)
entry(
    "recurrent.NARX",
    lambda a: recurrent.NARX(
        a.input_size, a.hidden_size, a.output_size, a.input_window, a.output_window
    ).to(a.dtype)(a.x, a.y_feedback),
    {
        "input_size": Int("D"),
        "hidden_size": Int("H"),
        "output_size": Int("O"),
        "input_window": Int(2),
        "output_window": Int(2),
        "x": Floats("B T D"),
        "y_feedback": Floats("B T O"),
    },
    {**RNN_DIMS, "O": 2},
    numeric=True,
)
entry(
    "recurrent.context_step",
    lambda a: recurrent.context_step(a.c, a.y_prev, a.mu),
    {"c": Floats("B O"), "y_prev": Floats("B O"), "mu": Real(0.5)},
    {"B": 2, "O": 3},
    numeric=True,
)
entry(
    "recurrent.exponential_trace",
    lambda a: recurrent.exponential_trace(a.y, a.mu, a.c0),
    {"y": Floats("B T O"), "mu": Real(0.5), "c0": Floats("B O")},
    {"B": 2, "T": 3, "O": 2},
    numeric=True,
)
entry(
    "recurrent.JordanNetwork",
    lambda a: recurrent.JordanNetwork(
        a.input_size, a.hidden_size, a.output_size, a.mu, a.nonlinearity
    ).to(a.dtype)(a.x, a.c0),
    {
        "input_size": Int("D"),
        "hidden_size": Int("H"),
        "output_size": Int("O"),
        "mu": Real(0.5),
        "nonlinearity": Choice("tanh"),
        "x": Floats("B T D"),
        "c0": Floats("B O"),
    },
    {**RNN_DIMS, "O": 2},
    numeric=True,
)
entry(
    "recurrent.RecurrentCell",
    lambda a: _initialised(
        recurrent.RecurrentCell(a.input_size, a.hidden_size, a.bias)
    ).project_input(torch.ones(1, a.input_size)),
    {"input_size": Int("D"), "hidden_size": Int("H"), "bias": Flag(True)},
    {"D": 2, "H": 3},
)
entry(
    "recurrent.ElmanCell",
    lambda a: recurrent.ElmanCell(
        a.input_size, a.hidden_size, a.bias, a.nonlinearity, generator=a.generator
    ).to(a.dtype)(a.x, a.h),
    {
        "input_size": Int("D"),
        "hidden_size": Int("H"),
        "bias": Flag(True),
        "nonlinearity": Choice("tanh"),
        "generator": gen_arg(optional=True),
        "x": Floats("B D"),
        "h": Floats("B H"),
    },
    {"B": 2, "D": 2, "H": 3},
    numeric=True,
)
entry(
    "recurrent.scan_cell",
    lambda a: recurrent.scan_cell(a.cell, a.x, (a.h,), a.reverse),
    {
        "cell": Obj(
            lambda a: recurrent.ElmanCell(a.dims["D"], a.dims["H"]).to(a.dtype),
            bad=(None, nn.Linear(2, 2)),
        ),
        "x": Floats("B T D"),
        "h": Floats("B H"),
        "reverse": Flag(True),
    },
    RNN_DIMS,
    numeric=True,
    aliases={"h": "state[0]"},
)
entry(
    "recurrent.run_stack",
    lambda a: recurrent.run_stack(a.cells, a.x, (a.h0,), a.num_directions),
    {
        "cells": Obj(
            lambda a: [
                recurrent.ElmanCell(d, a.dims["H"]).to(a.dtype)
                for d in (a.dims["D"], a.dims["D"])
            ],
            bad=(None, [], "x"),
        ),
        "x": Floats("B T D"),
        "h0": Floats("2 B H"),
        "num_directions": Int(2),
    },
    RNN_DIMS,
    numeric=True,
    aliases={"h0": "state0[0]"},
)
def wider_cells(d):
    """A make_cell whose cells disagree with the network's hidden_size: 7 units, more
    than the matrix (3) or the fuzzer (1 to 6) ever asks for."""
    return recurrent.ElmanCell(d, 7)


def fixed_input_cells(d):
    """A make_cell whose cells ignore the input size they are asked for."""
    return recurrent.ElmanCell(2, 3)


entry(
    "recurrent.StackedRNN",
    lambda a: recurrent.StackedRNN(
        a.make_cell,
        a.input_size,
        a.hidden_size,
        a.num_layers,
        a.bidirectional,
    )
    .cells[0]
    .weight_ih,
    {
        "make_cell": Obj(lambda a: lambda d: recurrent.ElmanCell(d, a.dims["H"]),
                         bad=(None, 0, wider_cells, fixed_input_cells)),
        "input_size": Int("D"),
        "hidden_size": Int("H"),
        "num_layers": Int(2),
        "bidirectional": Flag(True),
    },
    {"D": 2, "H": 3},
)
entry(
    "recurrent.ElmanRNN",
    lambda a: recurrent.ElmanRNN(
        a.input_size,
        a.hidden_size,
        a.num_layers,
        a.nonlinearity,
        a.bias,
        a.bidirectional,
    ).to(a.dtype)(a.x, a.h0),
    {
        "input_size": Int("D"),
        "hidden_size": Int("H"),
        "num_layers": Int(1),
        "nonlinearity": Choice("tanh"),
        "bias": Flag(True),
        "bidirectional": Flag(True),
        "x": Floats("B T D"),
        "h0": Floats("2 B H"),
    },
    RNN_DIMS,
    numeric=True,
)

# --------------------------------------------------------------------------- gated

entry(
    "gated.GRUCell",
    lambda a: gated.GRUCell(a.input_size, a.hidden_size, a.bias, a.reset).to(a.dtype)(
        a.x, a.h
    ),
    {
        "input_size": Int("D"),
        "hidden_size": Int("H"),
        "bias": Flag(True),
        "reset": Choice("before"),
        "x": Floats("B D"),
        "h": Floats("B H"),
    },
    {"B": 2, "D": 2, "H": 3},
    numeric=True,
)
entry(
    "gated.LSTMCell",
    lambda a: gated.LSTMCell(a.input_size, a.hidden_size, a.bias, a.peephole).to(
        a.dtype
    )(a.x, (a.h, a.c)),
    {
        "input_size": Int("D"),
        "hidden_size": Int("H"),
        "bias": Flag(True),
        "peephole": Flag(True),
        "x": Floats("B D"),
        "h": Floats("B H"),
        "c": Floats("B H"),
    },
    {"B": 2, "D": 2, "H": 3},
    numeric=True,
)
entry(
    "gated.GRU",
    lambda a: gated.GRU(
        a.input_size, a.hidden_size, a.num_layers, a.bias, a.bidirectional, a.reset
    ).to(a.dtype)(a.x, a.h0),
    {
        "input_size": Int("D"),
        "hidden_size": Int("H"),
        "num_layers": Int(1),
        "bias": Flag(True),
        "bidirectional": Flag(True),
        "reset": Choice("after"),
        "x": Floats("B T D"),
        "h0": Floats("2 B H"),
    },
    RNN_DIMS,
    numeric=True,
)
entry(
    "gated.LSTM",
    lambda a: gated.LSTM(
        a.input_size, a.hidden_size, a.num_layers, a.bias, a.bidirectional, a.peephole
    ).to(a.dtype)(a.x, (a.h0, a.c0)),
    {
        "input_size": Int("D"),
        "hidden_size": Int("H"),
        "num_layers": Int(1),
        "bias": Flag(True),
        "bidirectional": Flag(False),
        "peephole": Flag(True),
        "x": Floats("B T D"),
        "h0": Floats("1 B H"),
        "c0": Floats("1 B H"),
    },
    RNN_DIMS,
    numeric=True,
)
entry("gated.GRUGates", lambda a: gated.GRUGates(1, 2, 3, 4), record=True)
entry("gated.LSTMGates", lambda a: gated.LSTMGates(1, 2, 3, 4, 5, 6), record=True)

# --------------------------------------------------------------------------- bptt

BP = {"B": 2, "T": 3, "D": 2, "H": 3, "O": 2}


def _rnn_params(a, layers: int = 1, bidirectional: bool = False):
    return bparams.init_params(
        a.dims["D"],
        a.dims["H"],
        a.dims["O"],
        np.random.default_rng(0),
        num_layers=layers,
        bidirectional=bidirectional,
    )


PARAMS = Obj(_rnn_params, bad=(None, {}, {"W1": 1.0}))
entry(
    "bptt.params.suffixes",
    lambda a: bparams.suffixes(a.bidirectional),
    {"bidirectional": Flag(True)},
)
entry(
    "bptt.params.param_names",
    lambda a: bparams.param_names(a.num_layers, a.bidirectional),
    {"num_layers": Int(2), "bidirectional": Flag(True)},
)
entry(
    "bptt.params.init_params",
    lambda a: bparams.init_params(
        a.input_size,
        a.hidden_size,
        a.output_size,
        a.rng,
        num_layers=a.num_layers,
        bidirectional=a.bidirectional,
        scale=a.scale,
        orthogonal=a.orthogonal,
    ),
    {
        "input_size": Int("D"),
        "hidden_size": Int("H"),
        "output_size": Int("O"),
        "rng": rng_arg(),
        "num_layers": Int(2),
        "bidirectional": Flag(True),
        "scale": Real(0.9),
        "orthogonal": Flag(True),
    },
    {"D": 2, "H": 3, "O": 2},
)
entry(
    "bptt.params.orthogonal_matrix",
    lambda a: bparams.orthogonal_matrix(a.n, a.rng),
    {"n": Int("n"), "rng": rng_arg()},
    {"n": 3},
)
entry(
    "bptt.params.check_array",
    lambda a: bparams.check_array(a.x, "x", "B T", {}, like=None),
    {"x": Floats("B T", numpy=True)},
    {"B": 2, "T": 3},
)
entry(
    "bptt.params.check_keys",
    lambda a: bparams.check_keys(a.params, ["W1", "b1"]),
    {
        "params": Obj(
            lambda a: {"W1": np.zeros(1), "b1": np.zeros(1)},
            bad=(None, {"W1": 1}, {"W1": 1, "b1": 1, "W2": 1}),
        )
    },
)
entry(
    "bptt.params.check_params",
    lambda a: bparams.check_params(
        a.params, 1, False, {"D": a.dims["D"], "H": a.dims["H"]}, a.x
    ),
    {"params": PARAMS, "x": Floats("B T D", numpy=True)},
    BP,
)
entry(
    "bptt.rnn.rnn_step",
    lambda a: rnn.rnn_step(a.x_t, a.h_prev, a.W, a.U, a.b),
    {
        "x_t": Floats("B D", numpy=True),
        "h_prev": Floats("B H", numpy=True),
        "W": Floats("H D", numpy=True),
        "U": Floats("H H", numpy=True),
        "b": Floats("H", numpy=True),
    },
    {"B": 2, "D": 2, "H": 3},
)
entry(
    "bptt.rnn.rnn_layer_forward",
    lambda a: rnn.rnn_layer_forward(a.x, a.h0, a.W, a.U, a.b),
    {
        "x": Floats("B T D", numpy=True),
        "h0": Floats("B H", numpy=True),
        "W": Floats("H D", numpy=True),
        "U": Floats("H H", numpy=True),
        "b": Floats("H", numpy=True),
    },
    {"B": 2, "T": 3, "D": 2, "H": 3},
)
entry(
    "bptt.rnn.rnn_layer_backward",
    lambda a: rnn.rnn_layer_backward(a.dh, a.cache),
    {
        "dh": Floats("B T H", numpy=True),
        "cache": Obj(
            lambda a: rnn.rnn_layer_forward(
                *(
                    np.random.default_rng(1).standard_normal(s)
                    for s in (
                        (a.dims["B"], a.dims["T"], 2),
                        (a.dims["B"], a.dims["H"]),
                        (a.dims["H"], 2),
                        (a.dims["H"], a.dims["H"]),
                        (a.dims["H"],),
                    )
                )
            )[1],
            bad=(None, {}, "x"),
        ),
    },
    {"B": 2, "T": 3, "H": 3},
)


def _forward_cache(fn, a, layers: int = 1, bidirectional: bool = False, h0_layers=None):
    g = np.random.default_rng(1)
    x = g.standard_normal((a.dims["B"], a.dims["T"], a.dims["D"]))
    h0 = g.standard_normal(
        ((h0_layers,) if h0_layers else ()) + (a.dims["B"], a.dims["H"])
    )
    return fn(x, h0, _rnn_params(a, layers, bidirectional))[1]


entry(
    "bptt.rnn.rnn_forward",
    lambda a: rnn.rnn_forward(a.x, a.h0, a.params),
    {
        "x": Floats("B T D", numpy=True),
        "h0": Floats("B H", numpy=True),
        "params": PARAMS,
    },
    BP,
)
entry(
    "bptt.rnn.rnn_backward",
    lambda a: rnn.rnn_backward(a.dy, a.cache),
    {
        "dy": Floats("B T O", numpy=True),
        "cache": Obj(lambda a: _forward_cache(rnn.rnn_forward, a), bad=(None, {}, "x")),
    },
    BP,
)
entry(
    "bptt.rnn.deep_rnn_forward",
    lambda a: rnn.deep_rnn_forward(a.x, a.h0, a.params, a.bidirectional),
    {
        "x": Floats("B T D", numpy=True),
        "h0": Floats("4 B H", numpy=True),
        "params": Obj(lambda a: _rnn_params(a, 2, True), bad=(None, {}, "x")),
        "bidirectional": Flag(True),
    },
    BP,
)
entry(
    "bptt.rnn.deep_rnn_backward",
    lambda a: rnn.deep_rnn_backward(a.dy, a.cache),
    {
        "dy": Floats("B T O", numpy=True),
        "cache": Obj(
            lambda a: _forward_cache(
                lambda x, h, p: rnn.deep_rnn_forward(x, h, p, True), a, 2, True, 4
            ),
            bad=(None, {}, "x"),
        ),
    },
    BP,
)
entry(
    "bptt.rnn.birnn_forward",
    lambda a: rnn.birnn_forward(a.x, a.h0, a.params),
    {
        "x": Floats("B T D", numpy=True),
        "h0": Floats("2 B H", numpy=True),
        "params": Obj(lambda a: _rnn_params(a, 1, True), bad=(None, {}, "x")),
    },
    BP,
)
entry(
    "bptt.rnn.birnn_backward",
    lambda a: rnn.birnn_backward(a.dy, a.cache),
    {
        "dy": Floats("B T O", numpy=True),
        "cache": Obj(
            lambda a: _forward_cache(rnn.birnn_forward, a, 1, True, 2),
            bad=(None, {}, "x"),
        ),
    },
    BP,
)
entry(
    "bptt.rnn.hidden_jacobians",
    lambda a: rnn.hidden_jacobians(a.cache),
    {"cache": Obj(lambda a: _forward_cache(rnn.rnn_forward, a), bad=(None, {}, "x"))},
    BP,
)
entry(
    "bptt.truncated.pre_activation_gradients",
    lambda a: truncated.pre_activation_gradients(a.dy, a.cache, a.k),
    {
        "dy": Floats("B T O", numpy=True),
        "cache": Obj(lambda a: _forward_cache(rnn.rnn_forward, a), bad=(None, {}, "x")),
        "k": Int(2),
    },
    BP,
)
entry(
    "bptt.truncated.truncated_rnn_backward",
    lambda a: truncated.truncated_rnn_backward(a.dy, a.cache, a.k),
    {
        "dy": Floats("B T O", numpy=True),
        "cache": Obj(lambda a: _forward_cache(rnn.rnn_forward, a), bad=(None, {}, "x")),
        "k": Int(2),
    },
    BP,
)
entry(
    "bptt.truncated.recurrent_gradient_terms",
    lambda a: truncated.recurrent_gradient_terms(a.dy, a.cache),
    {
        "dy": Floats("B T O", numpy=True),
        "cache": Obj(lambda a: _forward_cache(rnn.rnn_forward, a), bad=(None, {}, "x")),
    },
    BP,
)
entry(
    "bptt.counter.counter_params",
    lambda a: counter.counter_params(a.depth, a.gain),
    {"depth": Int(2), "gain": Real(20.0)},
)
entry(
    "bptt.clip.global_norm",
    lambda a: clip.global_norm({"W": a.W, "b": a.b}),
    {"W": Floats("H D", numpy=True), "b": Floats("H", numpy=True)},
    {"H": 3, "D": 2},
)
entry(
    "bptt.clip.clip_grad_norm",
    lambda a: clip.clip_grad_norm({"W": a.W, "b": a.b}, a.max_norm, a.eps),
    {
        "W": Floats("H D", numpy=True),
        "b": Floats("H", numpy=True),
        "max_norm": Real(0.5),
        "eps": Real(1e-6),
    },
    {"H": 3, "D": 2},
)
entry(
    "bptt.reference.torch_names",
    lambda a: reference.torch_names(a.num_layers, a.bidirectional),
    {"num_layers": Int(2), "bidirectional": Flag(True)},
)
entry(
    "bptt.reference.to_torch",
    lambda a: reference.to_torch(a.params, a.bidirectional),
    {
        "params": Obj(lambda a: _rnn_params(a, 1, True), bad=(None, {}, "x")),
        "bidirectional": Flag(True),
    },
    BP,
)
entry(
    "bptt.reference.torch_reference",
    lambda a: reference.torch_reference(a.x, a.h0, a.params, a.dy),
    {
        "x": Floats("B T D", numpy=True),
        "h0": Floats("B H", numpy=True),
        "params": PARAMS,
        "dy": Floats("B T O", numpy=True),
    },
    BP,
)


def _lstm_params(a, peephole: bool = True):
    g = np.random.default_rng(2)
    D, H = a.dims["D"], a.dims["H"]
    p = {
        f"{w}{k}": g.standard_normal(
            (H, D) if w == "W_x" else (H, H) if w == "W_h" else (H,)
        )
        for k in "ifoc"
        for w in ("W_x", "W_h", "b_")
    }
    if peephole:
        p.update({f"W_c{k}": g.standard_normal((H, H)) for k in "ifo"})
    return p


entry(
    "bptt.lstm.sigmoid",
    lambda a: blstm.sigmoid(a.a_),
    {"a_": Floats("B H", numpy=True)},
    {"B": 2, "H": 3},
)
entry(
    "bptt.lstm.lstm_forward",
    lambda a: blstm.lstm_forward(a.x, a.h0, a.c0, a.params),
    {
        "x": Floats("B T D", numpy=True),
        "h0": Floats("B H", numpy=True),
        "c0": Floats("B H", numpy=True),
        "params": Obj(_lstm_params, bad=(None, {}, {"W_xi": 1.0})),
    },
    BP,
)
entry(
    "bptt.lstm.lstm_backward",
    lambda a: blstm.lstm_backward(a.dh, a.cache),
    {
        "dh": Floats("B T H", numpy=True),
        "cache": Obj(
            lambda a: blstm.lstm_forward(
                *(
                    np.random.default_rng(3).standard_normal(s)
                    for s in (
                        (a.dims["B"], a.dims["T"], a.dims["D"]),
                        (a.dims["B"], a.dims["H"]),
                        (a.dims["B"], a.dims["H"]),
                    )
                ),
                _lstm_params(a),
            )[1],
            bad=(None, {}, "x"),
        ),
    },
    BP,
)
entry("bptt.lstm.LSTMCache", lambda a: None, record=True)

# ----------------------------------------------------------------------- multiplicative

MULT = {"B": 2, "n": 3, "d": 2, "m": 2}
entry(
    "multiplicative.multiplicative_weights",
    lambda a: mult.multiplicative_weights(a.U, a.z),
    {"U": Floats("m n d"), "z": Floats("B d")},
    MULT,
    numeric=True,
)
entry(
    "multiplicative.MultiplicativeLinear",
    lambda a: mult.MultiplicativeLinear(
        a.in_features, a.out_features, a.context_features, a.bias, generator=a.generator
    ).to(a.dtype)(a.x, a.z),
    {
        "in_features": Int("n"),
        "out_features": Int("m"),
        "context_features": Int("d"),
        "bias": Flag(True),
        "generator": gen_arg(optional=True),
        "x": Floats("B n"),
        "z": Floats("B d"),
    },
    MULT,
    numeric=True,
)
entry(
    "multiplicative.HyperLinear",
    lambda a: mult.HyperLinear(
        a.in_features,
        a.out_features,
        a.context_features,
        a.hidden_features,
        generator=a.generator,
    ).to(a.dtype)(a.x, a.z),
    {
        "in_features": Int("n"),
        "out_features": Int("m"),
        "context_features": Int("d"),
        "hidden_features": Int(4),
        "generator": gen_arg(optional=True),
        "x": Floats("B n"),
        "z": Floats("B d"),
    },
    MULT,
    numeric=True,
)
entry(
    "multiplicative.soft_switch",
    lambda a: mult.soft_switch(a.xs, a.scores),
    {"xs": Floats("B K D"), "scores": Floats("B K")},
    {"B": 2, "K": 3, "D": 2},
    numeric=True,
)
entry(
    "multiplicative.switch_tensor",
    lambda a: mult.switch_tensor(a.num_inputs, a.dim, a.dtype_),
    {"num_inputs": Int("K"), "dim": Int("D"), "dtype_": Choice(torch.float64)},
    {"K": 3, "D": 2},
)
entry(
    "multiplicative.SoftSwitch",
    lambda a: mult.SoftSwitch(
        a.context_features, a.num_inputs, generator=a.generator
    ).to(a.dtype)(a.xs, a.z),
    {
        "context_features": Int("C"),
        "num_inputs": Int("K"),
        "generator": gen_arg(optional=True),
        "xs": Floats("B K D"),
        "z": Floats("B C"),
    },
    {"B": 2, "K": 3, "D": 2, "C": 2},
    numeric=True,
)

# --------------------------------------------------------------------------- unroll

GATES = {"B": 2, "T": 3, "H": 2}
entry(
    "unroll.gru_implied_weights",
    lambda a: unroll.gru_implied_weights(a.u),
    {"u": Floats("B T H", "unit")},
    GATES,
    numeric=True,
)
entry(
    "unroll.apply_implied_weights",
    lambda a: unroll.apply_implied_weights(a.alpha, a.beta, a.h_tilde, a.h0),
    {
        "alpha": Floats("B T T H"),
        "beta": Floats("B T H"),
        "h_tilde": Floats("B T H"),
        "h0": Floats("B H"),
    },
    GATES,
    numeric=True,
)
entry(
    "unroll.gru_update_loop",
    lambda a: unroll.gru_update_loop(a.u, a.h_tilde, a.h0, a.method),
    {
        "u": Floats("B T H", "unit"),
        "h_tilde": Floats("B T H"),
        "h0": Floats("B H"),
        "method": Choice("parallel"),
    },
    GATES,
    numeric=True,
)
entry(
    "unroll.notes_printed_weights",
    lambda a: unroll.notes_printed_weights(a.u),
    {"u": Floats("B T H", "unit")},
    GATES,
    numeric=True,
)
entry(
    "unroll.gru_gates",
    lambda a: unroll.gru_gates(a.gru, a.x, a.h0),
    {
        "gru": Obj(
            lambda a: nn.GRU(a.dims["D"], a.dims["H"], batch_first=True, dtype=F64).to(
                a.dtype
            ),
            bad=(None, nn.GRU(2, 2), nn.LSTM(2, 2, batch_first=True)),
        ),
        "x": Floats("B T D"),
        "h0": Floats("B H"),
    },
    {**GATES, "D": 2},
    numeric=True,
)

# --------------------------------------------------------------------------- scan

SCAN = {"B": 2, "T": 5, "H": 2}
AB = {"a": Floats("B T H"), "b": Floats("B T H")}
entry(
    "scan.linear_scan",
    lambda a: scan.linear_scan(a.a, a.b, a.h0, a.method, a.chunk),
    {**AB, "h0": Floats("B H"), "method": Choice("parallel"), "chunk": Int(2)},
    SCAN,
    numeric=True,
)
entry(
    "scan.sequential_scan",
    lambda a: scan.sequential_scan(a.a, a.b, a.h0),
    {**AB, "h0": Floats("B H")},
    SCAN,
    numeric=True,
)
entry(
    "scan.blocked_scan",
    lambda a: scan.blocked_scan(a.a, a.b, a.h0, a.chunk),
    {**AB, "h0": Floats("B H"), "chunk": Int(2)},
    SCAN,
    numeric=True,
)
entry(
    "scan.hillis_steele_scan",
    lambda a: scan.hillis_steele_scan(a.a, a.b),
    AB,
    SCAN,
    numeric=True,
)
entry(
    "scan.blelloch_scan", lambda a: scan.blelloch_scan(a.a, a.b), AB, SCAN, numeric=True
)
entry(
    "scan.ExtendedScan",
    lambda a: scan.ExtendedScan.apply(a.a, a.b, a.h0, a.method, a.chunk),
    {**AB, "h0": Floats("B H"), "method": Choice("parallel"), "chunk": Int(2)},
    SCAN,
    numeric=True,
)
entry(
    "scan.combine",
    lambda a: scan.combine((a.a1, a.b1), (a.a2, a.b2)),
    {"a1": Floats("H"), "b1": Floats("H"), "a2": Floats("H"), "b2": Floats("H")},
    {"H": 2},
    numeric=True,
)
entry("scan.Arithmetic", lambda a: None, record=True)
entry(
    "scan.default_chunk", lambda a: scan.default_chunk(a.T), {"T": Int("T")}, {"T": 5}
)
entry(
    "scan.to_extended",
    lambda a: scan.to_extended(a.x),
    {"x": Floats("B H")},
    {"B": 2, "H": 3},
)
entry(
    "scan.from_extended",
    lambda a: scan.from_extended(a.x, a.dtype_),
    {"x": Floats("2 B H"), "dtype_": Choice(torch.float32)},
    {"B": 2, "H": 3},
)
entry(
    "scan.work_depth",
    lambda a: scan.work_depth(a.T, a.method, a.chunk),
    {"T": Int("T"), "method": Choice("parallel"), "chunk": Int(2)},
    {"T": 5},
)

# --------------------------------------------------------------------------- scores

QK = {"B": 2, "Tq": 3, "Tk": 4, "d": 4}
QKV = {"q": Floats("B Tq d"), "k": Floats("B Tk d")}
entry(
    "scores.check_query_key",
    lambda a: scores.check_query_key(a.q, a.k, same_dim=True),
    QKV,
    QK,
)
entry(
    "scores.default_scale",
    lambda a: scores.default_scale(a.d),
    {"d": Int("d")},
    {"d": 4},
)
entry("scores.dot_score", lambda a: scores.dot_score(a.q, a.k), QKV, QK, numeric=True)
entry(
    "scores.scaled_dot_score",
    lambda a: scores.scaled_dot_score(a.q, a.k, a.scale),
    {**QKV, "scale": Real(0.5)},
    QK,
    numeric=True,
)
entry(
    "scores.concat_pairs",
    lambda a: scores.concat_pairs(a.q, a.k),
    QKV,
    QK,
    numeric=True,
)
entry(
    "scores.BilinearScore",
    lambda a: scores.BilinearScore(a.d_q, a.d_k).to(a.dtype)(a.q, a.k),
    {"d_q": Int("d"), "d_k": Int("d"), **QKV},
    QK,
    numeric=True,
)
entry(
    "scores.ConcatScore",
    lambda a: scores.ConcatScore(a.d_q, a.d_k, a.d_hidden, a.bias).to(a.dtype)(
        a.q, a.k
    ),
    {"d_q": Int("d"), "d_k": Int("d"), "d_hidden": Int(3), "bias": Flag(True), **QKV},
    QK,
    numeric=True,
)
entry(
    "scores.AdditiveScore",
    lambda a: scores.AdditiveScore.from_concat(
        scores.ConcatScore(a.d_q, a.d_k, a.d_hidden, a.bias)
    ).to(a.dtype)(a.q, a.k),
    {"d_q": Int("d"), "d_k": Int("d"), "d_hidden": Int(3), "bias": Flag(True), **QKV},
    QK,
    numeric=True,
)
entry(
    "scores.MLPScore",
    lambda a: scores.MLPScore(a.d_q, a.d_k, (a.width,), nn.Tanh, a.bias).to(a.dtype)(
        a.q, a.k
    ),
    {"d_q": Int("d"), "d_k": Int("d"), "width": Int(3), "bias": Flag(True), **QKV},
    QK,
    numeric=True,
)
entry(
    "scores.LocationScore",
    lambda a: scores.LocationScore(a.d_q, a.max_len).to(a.dtype)(a.q, a.k),
    {"d_q": Int("d"), "max_len": Int(5), **QKV},
    QK,
    numeric=True,
)

# --------------------------------------------------------------------------- attention

ATT = {**QK, "dv": 2}
QKV3 = {**QKV, "v": Floats("B Tk dv")}
entry(
    "masks.causal_mask",
    lambda a: masks.causal_mask(a.Tq, a.Tk),
    {"Tq": Int("Tq"), "Tk": Int("Tk")},
    {"Tq": 3, "Tk": 4},
)
entry(
    "masks.padding_mask",
    lambda a: masks.padding_mask(a.lengths, a.T),
    {"lengths": Lengths("B", "T", low=0), "T": Int("T")},
    {"B": 2, "T": 4},
)
entry(
    "attention.masked_softmax",
    lambda a: att.masked_softmax(a.scores, a.mask),
    {"scores": Floats("B Tq Tk"), "mask": Mask("B Tq Tk")},
    {"B": 2, "Tq": 3, "Tk": 4},
    numeric=True,
)
entry(
    "attention.attend",
    lambda a: att.attend(a.scores, a.v, mask=a.mask, causal=a.causal),
    {
        "scores": Floats("B Tq Tk"),
        "v": Floats("B Tk dv"),
        "mask": Mask("B Tq Tk"),
        "causal": Flag(True),
    },
    ATT,
    numeric=True,
)
entry(
    "attention.attention",
    lambda a: att.attention(a.q, a.k, a.v, mask=a.mask, causal=a.causal, scale=a.scale),
    {**QKV3, "mask": Mask("B Tq Tk"), "causal": Flag(True), "scale": Real(0.7)},
    ATT,
    numeric=True,
)
entry(
    "attention.MultiHeadAttention",
    lambda a: att.MultiHeadAttention(a.d_model, a.num_heads, a.bias).to(a.dtype)(
        a.query, a.key, a.value, mask=a.mask, causal=a.causal
    ),
    {
        "d_model": Int("d"),
        "num_heads": Int("heads"),
        "bias": Flag(True),
        "query": Floats("B Tq d"),
        "key": Floats("B Tk d"),
        "value": Floats("B Tk d"),
        "mask": Mask("B Tq Tk", also="B heads Tq Tk"),
        "causal": Flag(False),
    },
    {**QK, "heads": 2},
    numeric=True,
)

# ----------------------------------------------------------------------- online softmax

entry(
    "online_softmax.online_normalizer",
    lambda a: osm.online_normalizer(a.scores, a.block_size),
    {"scores": Floats("B n"), "block_size": Int(2)},
    {"B": 2, "n": 5},
    numeric=True,
)
entry(
    "online_softmax.memory_efficient_attention",
    lambda a: osm.memory_efficient_attention(
        a.q,
        a.k,
        a.v,
        mask=a.mask,
        causal=a.causal,
        scale=a.scale,
        block_size=a.block_size,
    ),
    {
        **QKV3,
        "mask": Mask("B Tq Tk"),
        "causal": Flag(True),
        "scale": Real(0.7),
        "block_size": Int(3),
    },
    ATT,
    numeric=True,
)

# ---------------------------------------------------------------------- local attention

entry(
    "local_attention.band_mask",
    lambda a: local.band_mask(a.T, a.radius, causal=a.causal),
    {"T": Int("T"), "radius": Int(1), "causal": Flag(True)},
    {"T": 4},
)
entry(
    "local_attention.restricted_attention",
    lambda a: local.restricted_attention(
        a.q, a.k, a.v, a.radius, causal=a.causal, scale=a.scale
    ),
    {
        "q": Floats("B T d"),
        "k": Floats("B T d"),
        "v": Floats("B T dv"),
        "radius": Int(1),
        "causal": Flag(True),
        "scale": Real(0.7),
    },
    {"B": 2, "T": 4, "d": 3, "dv": 2},
    numeric=True,
)

# --------------------------------------------------------------------------- complexity

BAD_MAPS = {"returns None": lambda x: None, "returns a list": lambda x: [1.0]}
entry(
    "complexity.jacobian_pattern",
    lambda a: complexity.jacobian_pattern(a.fn, a.x),
    {"fn": Fn(lambda x: x.cumsum(0), BAD_MAPS), "x": Floats("T D")},
    {"T": 3, "D": 2},
)
entry(
    "complexity.max_path_length",
    lambda a: complexity.max_path_length(
        [a.layer], within=a.within, causal=a.causal, max_layers=a.max_layers
    ),
    {
        "layer": Mask("T T", full=True),
        "within": Mask("T T"),
        "causal": Flag(True),
        "max_layers": Int(8),
    },
    {"T": 3},
)
entry(
    "complexity.sequential_steps",
    lambda a: complexity.sequential_steps(a.within),
    {
        "within": Obj(
            lambda a: torch.ones(a.dims["T"], a.dims["T"], dtype=torch.bool).tril(-1),
            bad=(0, "x", torch.ones(3, 3)),
        )
    },
    {"T": 3},
)
entry(
    "complexity.graph_depth",
    lambda a: complexity.graph_depth(a.fn, a.x),
    {"fn": Fn(lambda x: x.cumsum(0), BAD_MAPS), "x": Floats("T D")},
    {"T": 3, "D": 2},
)
entry(
    "complexity.op_input_elements",
    lambda a: complexity.op_input_elements(a.fn, a.x),
    {
        "fn": Fn(lambda x: x.cumsum(0), {"is None": None}),
        "x": Obj(lambda a: torch.ones(3, 2), bad=()),
    },
)
entry(
    "complexity.loglog_slope",
    lambda a: complexity.loglog_slope(a.n, a.cost),
    {
        "n": Obj(lambda a: [1.0, 2.0, 4.0], bad=(None, [], [1.0], [NAN, 1.0, 2.0])),
        "cost": Obj(lambda a: [3.0, 12.0, 48.0], bad=(None, [1.0], [INF, 1.0, 2.0])),
    },
)
entry(
    "complexity.saved_tensor_bytes",
    lambda a: complexity.saved_tensor_bytes(a.fn, a.x),
    {
        "fn": Fn(lambda x: (x * x).sum(), {"is None": None}),
        "x": Obj(lambda a: torch.ones(3, 2, requires_grad=True), bad=()),
    },
)
entry(
    "complexity.fastest_times",
    lambda a: complexity.fastest_times(a.fns, a.inputs, a.repeats),
    {
        "fns": Obj(lambda a: {"sum": lambda x: x.sum()}, bad=(None, [], {"f": 1})),
        "inputs": Obj(lambda a: [torch.ones(2)], bad=(None, 0)),
        "repeats": Int(1),
    },
)

# --------------------------------------------------------------------------- table1

entry(
    "table1.layer",
    lambda a: table1.layer(
        a.kind,
        a.d,
        kernel=a.kernel,
        radius=a.radius,
        dilation=a.dilation,
        dtype=torch.float64,
    )(a.x),
    {
        "kind": Choice("dilated convolutional"),
        "d": Int("d"),
        "kernel": Int(2),
        "radius": Int(1),
        "dilation": Int(2),
        "x": Floats("B n d"),
    },
    {"B": 1, "n": 4, "d": 2},
)
entry(
    "table1.dependency_patterns",
    lambda a: table1.dependency_patterns(
        a.kind, a.T, d=a.d, kernel=a.kernel, radius=a.radius, seed=a.seed
    ),
    {
        "kind": Choice("dilated convolutional"),
        "T": Int("T"),
        "d": Int(2),
        "kernel": Int(2),
        "radius": Int(1),
        "seed": Int(0, bad=(True, 2.5, "2")),
    },
    {"T": 4},
)

# --------------------------------------------------------------------------- long range

LR = {"B": 2, "T": 4, "V": 5, "d": 2}
entry(
    "long_range.recall_batch",
    lambda a: long_range.recall_batch(a.B, a.T, a.vocab, a.generator),
    {"B": Int("B"), "T": Int("T"), "vocab": Int("V"), "generator": gen_arg()},
    LR,
)
entry(
    "long_range.LastStepReader",
    lambda a: long_range.LastStepReader(a.kind, a.vocab, a.d, a.T, hidden=a.hidden).to(
        a.dtype
    )(a.tokens),
    {
        "kind": Choice("attention"),
        "vocab": Int("V"),
        "d": Int("d"),
        "T": Int("T"),
        "hidden": Int(3),
        "tokens": Ids("B T", "V"),
    },
    LR,
)
entry(
    "long_range.input_gradient_norms",
    lambda a: long_range.input_gradient_norms(a.model, a.tokens, a.target),
    {
        "model": Obj(
            lambda a: long_range.LastStepReader(
                "rnn", a.dims["V"], a.dims["d"], a.dims["T"], hidden=3
            ).to(a.dtype),
            bad=(None, nn.Linear(2, 2)),
        ),
        "tokens": Ids("B T", "V"),
        "target": Ids("B", "V"),
    },
    LR,
)

# --------------------------------------------------------------------------- saturation

entry(
    "saturation.softmax_saturation",
    lambda a: saturation.softmax_saturation(a.scores),
    {"scores": Floats("B n")},
    {"B": 2, "n": 4},
    numeric=True,
)

# -------------------------------------------------------------------------- transformer

TF = {"B": 2, "S": 3, "T": 3, "d": 4, "heads": 2, "V": 7}


def _transformer(a):
    return transformer.Transformer(
        a.src_vocab,
        a.tgt_vocab,
        a.d_model,
        a.num_heads,
        a.num_layers,
        a.d_ff,
        norm_first=a.norm_first,
        max_len=a.max_len,
    ).to(a.dtype)


TF_ARGS = {
    "src_vocab": Int("V"),
    "tgt_vocab": Int("V"),
    "d_model": Int("d"),
    "num_heads": Int("heads"),
    "num_layers": Int(1),
    "d_ff": Int(5),
    "norm_first": Flag(True),
    "max_len": Int(8),
}
entry(
    "positional.sinusoidal_positional_encoding",
    lambda a: positional.sinusoidal_positional_encoding(a.T, a.d, base=a.base),
    {"T": Int("T"), "d": Int("d"), "base": Real(100.0)},
    {"T": 3, "d": 4},
)
entry(
    "transformer.Transformer",
    lambda a: _transformer(a)(a.src, a.tgt_in, src_mask=a.src_mask),
    {
        **TF_ARGS,
        "src": Ids("B S", "V"),
        "tgt_in": Ids("B T", "V"),
        "src_mask": Mask("B S"),
    },
    TF,
    numeric=True,
)


def _batch(a):
    return vocab.Seq2SeqBatch(
        a.src,
        torch.full((a.dims["B"],), a.dims["S"]),
        a.src_mask,
        a.tgt_in,
        a.tgt_out,
        a.tgt_mask,
    )


SEQ_BATCH = {
    "src": Ids("B S", "V", low=3),
    "src_mask": Mask("B S", full=True),
    "tgt_in": Ids("B T", "V"),
    "tgt_out": Ids("B T", "V"),
    "tgt_mask": Mask("B T"),
}
entry(
    "transformer.transformer_loss",
    lambda a: transformer.transformer_loss(_transformer(a), _batch(a)),
    {**TF_ARGS, **SEQ_BATCH},
    TF,
)
entry(
    "transformer.decoded_exact_match",
    lambda a: transformer.decoded_exact_match(_transformer(a), _batch(a), a.vocab),
    {
        **TF_ARGS,
        **SEQ_BATCH,
        "vocab": Obj(lambda a: vocab.Vocab("abcd"), bad=(None, 7, "abcd")),
    },
    TF,
)

LAYER = {
    "d_model": Int("d"),
    "num_heads": Int("heads"),
    "d_ff": Int(5),
    "norm_first": Flag(True),
    "activation": Choice("gelu"),
}
entry(
    "transformer_layers.FeedForward",
    lambda a: tl.FeedForward(a.d_model, a.d_ff, a.activation).to(a.dtype)(a.x),
    {
        "d_model": Int("d"),
        "d_ff": Int(5),
        "activation": Choice("relu"),
        "x": Floats("B S d"),
    },
    TF,
    numeric=True,
)
entry(
    "transformer_layers.EncoderLayer",
    lambda a: tl.EncoderLayer(
        a.d_model, a.num_heads, a.d_ff, norm_first=a.norm_first, activation=a.activation
    ).to(a.dtype)(a.x, mask=a.mask),
    {**LAYER, "x": Floats("B S d"), "mask": Mask("B S")},
    TF,
    numeric=True,
)
entry(
    "transformer_layers.DecoderLayer",
    lambda a: tl.DecoderLayer(
        a.d_model, a.num_heads, a.d_ff, norm_first=a.norm_first, activation=a.activation
    ).to(a.dtype)(a.y, a.memory, memory_mask=a.memory_mask),
    {
        **LAYER,
        "y": Floats("B T d"),
        "memory": Floats("B S d"),
        "memory_mask": Mask("B S"),
    },
    TF,
    numeric=True,
)
entry(
    "layernorm.LayerNorm",
    lambda a: layernorm.LayerNorm(
        a.d, a.eps, elementwise_affine=a.elementwise_affine, bias=a.bias
    ).to(a.dtype)(a.x),
    {
        "d": Int("d"),
        "eps": Real(1e-5),
        "elementwise_affine": Flag(True),
        "bias": Flag(False),
        "x": Floats("B T d"),
    },
    {"B": 2, "T": 3, "d": 4},
    numeric=True,
    torch_twin=lambda a: torch.nn.LayerNorm(
        a.d, a.eps, elementwise_affine=a.elementwise_affine, bias=a.bias
    ).to(a.dtype)(a.x),
)

# ------------------------------------------------------------------------ warmup, train

entry(
    "warmup.noam_rate",
    lambda a: warmup.noam_rate(a.step, a.d_model, a.warmup, factor=a.factor),
    {"step": Int(3), "d_model": Int(4), "warmup": Int(2), "factor": Real(2.0)},
)
entry(
    "warmup.linear_warmup_rate",
    lambda a: warmup.linear_warmup_rate(a.step, a.steps, a.warmup),
    {"step": Int(1), "steps": Int(5), "warmup": Int(2)},
)
entry(
    "warmup.adam_moments",
    lambda a: warmup.adam_moments(a.grads, betas=(a.beta1, a.beta2), eps=a.eps),
    {
        "grads": Floats("N P"),
        "beta1": Real(0.9),
        "beta2": Real(0.99),
        "eps": Real(1e-8),
    },
    {"N": 3, "P": 2},
    numeric=True,
)


def _classifier(a):
    torch.manual_seed(0)
    return train.SequenceClassifier(
        nn.RNN(a.dims["D"], 3, batch_first=True), 3, a.dims["C"]
    ).to(a.dtype)


CLS = {"B": 3, "T": 4, "D": 2, "C": 2}


def _xy(a):
    return a.x, a.labels


MODEL = Obj(_classifier, bad=(None, "model"))
entry(
    "train.SequenceClassifier",
    lambda a: train.SequenceClassifier(a.rnn, a.features, a.num_classes).to(a.dtype)(
        a.x
    ),
    {
        "rnn": Obj(
            lambda a: nn.RNN(a.dims["D"], 3, batch_first=True), bad=(None, "rnn")
        ),
        "features": Int(3, bad=(0, -1, True, 2.5, "2", 4)),  # 4: not the RNN's 3
        "num_classes": Int("C"),
        "x": Floats("B T D"),
    },
    CLS,
)
entry(
    "train.accuracy",
    lambda a: train.accuracy(a.model, a.x, a.labels),
    {"model": MODEL, "x": Floats("B T D"), "labels": Ids("B", "C")},
    CLS,
)
entry(
    "train.fit",
    lambda a: train.fit(
        a.model,
        lambda k: _xy(a),
        a.steps,
        lr=a.lr,
        clip=a.clip,
        weight_decay=a.weight_decay,
        schedule=a.schedule,
        loss=a.loss,
    ),
    {
        "model": MODEL,
        "x": Floats("B T D"),
        "labels": Ids("B", "C"),
        "steps": Int(2),
        "lr": Real(1e-2),
        "clip": Real(1.0),
        "weight_decay": Real(0.0),
        "schedule": Fn(lambda k: 1.0, BAD_SCHEDULES),
        "loss": Fn(
            None,
            {
                "returns a float": lambda m, b: 1.0,
                "returns None": lambda m, b: None,
                "returns a vector": lambda m, b: m(b[0]).sum(-1),
            },
        ),
    },
    CLS,
    aliases={"x": "batches", "labels": "batches"},
)
entry(
    "warmup.fit_scheduled",
    lambda a: warmup.fit_scheduled(
        a.model,
        lambda k: _xy(a),
        a.steps,
        loss=train._classification_loss,
        lr=a.lr,
        schedule=a.schedule,
        clip=a.clip,
    ),
    {
        "model": MODEL,
        "x": Floats("B T D"),
        "labels": Ids("B", "C"),
        "steps": Int(2),
        "lr": Real(1e-2),
        "schedule": Fn(lambda k: warmup.linear_warmup_rate(k, 2, 1), BAD_SCHEDULES),
        "clip": Real(1.0),
    },
    CLS,
    aliases={"x": "batches", "labels": "batches"},
)

# --------------------------------------------------------------------------- causal

CA = {"B": 2, "T": 3, "D": 4}
entry(
    "causal.causal_attention_loop",
    lambda a: causal.causal_attention_loop(a.q, a.k, a.v, scale=a.scale),
    {
        "q": Floats("B T D"),
        "k": Floats("B T D"),
        "v": Floats("B T dv"),
        "scale": Real(0.5),
    },
    {**CA, "dv": 2},
    numeric=True,
)
entry(
    "causal.free_candidates",
    lambda a: causal.free_candidates(a.fx, scale=a.scale),
    {"fx": Floats("B T D"), "scale": Real(0.5)},
    CA,
    numeric=True,
)
entry(
    "causal.KeyValueAttention",
    lambda a: causal.KeyValueAttention(a.d_in, a.d_k, a.d_v, a.bias).to(a.dtype)(a.fx),
    {
        "d_in": Int("D"),
        "d_k": Int(3),
        "d_v": Int(2),
        "bias": Flag(True),
        "fx": Floats("B T D"),
    },
    CA,
    numeric=True,
)
entry(
    "causal.MultiHeadCausalAttention",
    lambda a: causal.MultiHeadCausalAttention(
        a.d_in, a.num_heads, a.d_k, a.d_v, g=a.g, bias=a.bias
    ).to(a.dtype)(a.fx),
    {
        "d_in": Int("D"),
        "num_heads": Int("heads"),
        "d_k": Int(3),
        "d_v": Int(2),
        "g": Fn(
            torch.tanh,
            {"returns None": lambda x: None, "returns a number": lambda x: 1.0},
        ),
        "bias": Flag(True),
        "fx": Floats("B T D"),
    },
    {**CA, "heads": 2},
    numeric=True,
)
entry(
    "causal.add_positions",
    lambda a: causal.add_positions(a.fx),
    {"fx": Floats("B T D")},
    CA,
    numeric=True,
)

# -------------------------------------------------------------------------- associative

MEM = {"B": 2, "N": 4, "d": 3, "dv": 2}
LOOKUP = {
    "x": Floats("B d"),
    "keys": Floats("B N d"),
    "values": Floats("B N dv"),
    "mask": Mask("B N"),
}
entry(
    "associative.soft_lookup",
    lambda a: associative.soft_lookup(
        a.x, a.keys, a.values, temperature=a.temperature, mask=a.mask
    ),
    {**LOOKUP, "temperature": Real(0.5)},
    MEM,
    numeric=True,
)
entry(
    "associative.hard_lookup",
    lambda a: associative.hard_lookup(a.x, a.keys, a.values, mask=a.mask),
    LOOKUP,
    MEM,
)

# --------------------------------------------------------------------------- memory

MN = {"B": 2, "S": 3, "W": 4, "V": 9, "d": 4, "hops": 2}


def _memn2n(a, V=None):
    torch.manual_seed(0)
    return memory.MemN2N(
        V or a.dims["V"], a.dims["d"], a.dims["hops"], max_sentences=5, max_words=5
    ).to(a.dtype)


STORY = {"story": Ids("B S W", "V"), "query": Ids("B W", "V"), "answer": Ids("B", "V")}
entry(
    "memory.position_encoding",
    lambda a: memory.position_encoding(a.J, a.d, width=a.width, dtype=a.dtype),
    {"J": Lengths("B S", "W", low=0), "d": Int("d"), "width": Int("W")},
    MN,
    numeric=True,
)
entry(
    "memory.MemN2N",
    lambda a: memory.MemN2N(
        a.vocab_size, a.d, a.hops, max_sentences=a.max_sentences, max_words=a.max_words,
        position_encoding=a.position_encoding, temporal_encoding=a.temporal_encoding,
    ).to(a.dtype)(a.story, a.query, linear=a.linear, ages=a.ages),
    {
        "vocab_size": Int("V"),
        "d": Int("d"),
        "hops": Int("hops"),
        "max_sentences": Int(5),
        "max_words": Int(5),
        "position_encoding": Flag(True),
        "temporal_encoding": Flag(True),
        "story": Ids("B S W", "V"),
        "query": Ids("B W", "V"),
        "linear": Flag(False),
        "ages": Ids("B S", 5),
    },
    MN,
    numeric=True,
)
entry(
    "memory.answer_loss",
    lambda a: memory.answer_loss(
        a.model, st_stories.StoryBatch(a.story, a.query, a.answer, None)
    ),
    {"model": Obj(_memn2n, bad=(None, nn.Linear(2, 2))), **STORY},
    MN,
)
entry(
    "memory.answer_accuracy",
    lambda a: memory.answer_accuracy(
        a.model, st_stories.StoryBatch(a.story, a.query, a.answer, None)
    ),
    {"model": Obj(_memn2n, bad=(None, nn.Linear(2, 2))), **STORY},
    MN,
)
entry(
    "train.fit_memn2n",
    lambda a: train.fit_memn2n(
        a.model,
        a.batches,
        a.steps,
        lr=a.lr,
        linear_steps=a.linear_steps,
        clip=a.clip,
        decay=a.decay,
        noise=a.noise,
        generator=a.generator,
    ),
    {
        "model": Obj(_memn2n, bad=(None, nn.Linear(2, 2))),
        **STORY,
        "batches": Obj(
            lambda a: lambda k: st_stories.StoryBatch(a.story, a.query, a.answer, None),
            bad=(None, 1, lambda k: None),
        ),
        "steps": Int(2),
        "lr": Real(1e-2),
        "linear_steps": Int(1),
        "clip": Real(40.0),
        "decay": Flag(True),
        "noise": Real(0.1),
        "generator": gen_arg(optional=True),
    },
    MN,
)
entry(
    "memory.supporting_share",
    lambda a: memory.supporting_share(a.attention, a.supporting),
    {"attention": Floats("B hops S", "unit"), "supporting": Mask("B S")},
    MN,
    numeric=True,
)

# ----------------------------------------------------------------------- mingru, linear

MG = {"B": 2, "T": 4, "D": 2, "H": 3}
entry(
    "mingru.positive_candidate",
    lambda a: mingru.positive_candidate(a.y),
    {"y": Floats("B T H")},
    MG,
    numeric=True,
)
entry(
    "mingru.log_positive_candidate",
    lambda a: mingru.log_positive_candidate(a.y),
    {"y": Floats("B T H")},
    MG,
    numeric=True,
)
entry(
    "mingru.log_space_scan",
    lambda a: mingru.log_space_scan(a.log_a, a.log_b, a.log_h0),
    {
        "log_a": Floats("B T H", "negative"),
        "log_b": Floats("B T H"),
        "log_h0": Floats("B H"),
    },
    MG,
    numeric=True,
)
entry(
    "mingru.MinGRU",
    lambda a: mingru.MinGRU(a.input_size, a.hidden_size).to(a.dtype)(a.x, a.method),
    {
        "input_size": Int("D"),
        "hidden_size": Int("H"),
        "x": Floats("B T D"),
        "method": Choice("log"),
    },
    MG,
    numeric=True,
)
entry(
    "mingru.MinLSTM",
    lambda a: mingru.MinLSTM(a.input_size, a.hidden_size).to(a.dtype)(a.x, a.method),
    {
        "input_size": Int("D"),
        "hidden_size": Int("H"),
        "x": Floats("B T D"),
        "method": Choice("parallel"),
    },
    MG,
    numeric=True,
)
LA = {"B": 2, "T": 4, "dk": 3, "dv": 2}
LA_ARGS = {
    "q": Floats("B T dk"),
    "k": Floats("B T dk"),
    "v": Floats("B T dv"),
    "log_decay": Floats("B T", "negative"),
}
entry(
    "linear_attention.decay_mask",
    lambda a: lin.decay_mask(a.log_decay),
    {"log_decay": Floats("B T", "negative")},
    LA,
    numeric=True,
)
entry(
    "linear_attention.masked_linear_attention",
    lambda a: lin.masked_linear_attention(a.q, a.k, a.v, a.log_decay),
    LA_ARGS,
    LA,
    numeric=True,
)
entry(
    "linear_attention.recurrent_linear_attention",
    lambda a: lin.recurrent_linear_attention(a.q, a.k, a.v, a.log_decay, a.method),
    {**LA_ARGS, "method": Choice("parallel")},
    LA,
    numeric=True,
)
entry(
    "linear_attention.mingru_as_attention",
    lambda a: lin.mingru_as_attention(a.u, a.h_tilde),
    {"u": Floats("B T H", "unit"), "h_tilde": Floats("B T H")},
    MG,
    numeric=True,
)

# --------------------------------------------------------------------------- seq2seq

S2S = {"B": 2, "S": 4, "T": 3, "h": 4}
CHARS = vocab.Vocab("abcd")  # 7 ids


def _s2s(a, score="additive"):
    torch.manual_seed(0)
    return seq2seq.Seq2Seq(CHARS, CHARS, a.dims["h"], score=score).to(a.dtype)


S2S_IDS = {
    "src": Ids("B S", 7, low=3),
    "src_lengths": Lengths("B", "S"),
    "tgt_in": Ids("B T", 7),
}
entry(
    "seq2seq.Seq2Seq",
    lambda a: seq2seq.Seq2Seq(
        a.src_vocab,
        a.tgt_vocab,
        a.hidden,
        score=a.score,
        bidirectional=a.bidirectional,
        init=a.init,
        embedding=a.embedding,
        max_src_len=a.max_src_len,
    ).to(a.dtype)(a.src, a.src_lengths, a.tgt_in),
    {
        "src_vocab": Obj(lambda a: CHARS, bad=(None, "abcd", 0, 2.5)),
        "tgt_vocab": Obj(lambda a: CHARS, bad=(None, "abcd", -1, True, 2)),
        "hidden": Int("h"),
        # a score module of other sizes (d_k = 7 > any hidden the fuzzer draws)
        "score": Choice("location", bad=("unknown", 1, scores.AdditiveScore(5, 7, 4))),
        "bidirectional": Flag(True),
        "init": Choice("mean"),
        "embedding": Int(3),
        "max_src_len": Int(6),
        **S2S_IDS,
    },
    S2S,
    numeric=True,
)
entry(
    "losses.masked_cross_entropy",
    lambda a: losses.masked_cross_entropy(a.logits, a.target, a.mask),
    {"logits": Floats("B T V"), "target": Ids("B T", "V"), "mask": Mask("B T")},
    {"B": 2, "T": 3, "V": 5},
    numeric=True,
)
entry(
    "losses.exact_match",
    lambda a: losses.exact_match(a.tokens, a.target, a.eos),
    {"tokens": Ids("B T", 4), "target": Ids("B T", 4), "eos": Int(2)},
    {"B": 3, "T": 4},
    skip={
        f"{n}[0] = vocab": "exact_match has no vocabulary: any id >= 0 is a token"
        for n in ("tokens", "target")
    },
)


def _s2s_batch(a):
    return vocab.Seq2SeqBatch(
        a.src, a.src_lengths, a.src != 0, a.tgt_in, a.tgt_out, a.tgt_mask
    )


S2S_BATCH = {**S2S_IDS, "tgt_out": Ids("B T", 7), "tgt_mask": Mask("B T")}
entry(
    "seq2seq.greedy_exact_match",
    lambda a: seq2seq.greedy_exact_match(a.model, _s2s_batch(a), max_len=a.max_len),
    {"model": Obj(_s2s, bad=(None, nn.Linear(2, 2))), **S2S_BATCH, "max_len": Int(3)},
    S2S,
)
entry(
    "train.fit_seq2seq",
    lambda a: train.fit_seq2seq(
        a.model, a.batches, a.steps, lr=a.lr, clip=a.clip, decay=a.decay
    ),
    {
        "model": Obj(lambda a: _s2s(a, None), bad=(None, nn.Linear(2, 2))),
        **S2S_BATCH,
        "batches": Obj(
            lambda a: lambda k: _s2s_batch(a), bad=(None, 1, lambda k: None)
        ),
        "steps": Int(2),
        "lr": Real(1e-2),
        "clip": Real(1.0),
        "decay": Flag(True),
    },
    S2S,
)

# --------------------------------------------------------------------------- data

STRING = Obj(lambda a: "(x)()", bad=(None, 3, "(a)"))
entry(
    "data.brackets.running_count", lambda a: brackets.running_count(a.s), {"s": STRING}
)
entry(
    "data.brackets.nesting_depth", lambda a: brackets.nesting_depth(a.s), {"s": STRING}
)
entry("data.brackets.is_balanced", lambda a: brackets.is_balanced(a.s), {"s": STRING})
entry(
    "data.brackets.balanced_string",
    lambda a: brackets.balanced_string(
        a.length, a.rng, max_depth=a.max_depth, fill=a.fill
    ),
    {"length": Int(6), "rng": rng_arg(), "max_depth": Int(2), "fill": Real(0.3)},
)
entry(
    "data.brackets.hard_negative",
    lambda a: brackets.hard_negative(a.s, a.rng, kind=a.kind, max_depth=a.max_depth),
    {
        "s": Obj(lambda a: "(()())", bad=(None, 3, ")(")),
        "rng": rng_arg(),
        "kind": Choice("swap", bad=("unknown", 1)),
        "max_depth": Int(2),
    },
)
entry(
    "data.brackets.bracket_strings",
    lambda a: brackets.bracket_strings(
        a.n, a.length, a.rng, max_depth=a.max_depth, fill=a.fill, kind=a.kind
    ),
    {
        "n": Int(3),
        "length": Int(6),
        "rng": rng_arg(),
        "max_depth": Int(2),
        "fill": Real(0.3),
        "kind": Choice("flip", bad=("unknown", 1)),
    },
)
entry(
    "data.brackets.encode_brackets",
    lambda a: brackets.encode_brackets(a.strings, onehot=a.onehot, dtype=a.dtype_),
    {
        "strings": Obj(lambda a: ["(x)", "()x"], bad=(None, "()", [], ["()", "(x)"])),
        "onehot": Flag(True),
        "dtype_": Choice(torch.float64),
    },
)
entry(
    "data.brackets.bracket_dataset",
    lambda a: brackets.bracket_dataset(
        a.n,
        a.length,
        a.rng,
        max_depth=a.max_depth,
        fill=a.fill,
        kind=a.kind,
        onehot=a.onehot,
    ),
    {
        "n": Int(3),
        "length": Int(6),
        "rng": rng_arg(),
        "max_depth": Int(2),
        "fill": Real(0.3),
        "kind": Choice("flip", bad=("unknown", 1)),
        "onehot": Flag(False),
    },
)
entry(
    "data.dates.date_pairs",
    lambda a: dates.date_pairs(a.n, a.rng, formats=a.formats),
    {
        "n": Int(3),
        "rng": rng_arg(),
        "formats": Obj(lambda a: ("dotted", "short"), bad=(None, "dotted", (), ("x",))),
    },
)
entry(
    "data.hold.sample_and_hold",
    lambda a: hold.sample_and_hold(
        a.n, a.T, a.p_write, a.generator, write_at_start=a.write_at_start
    ),
    {
        "n": Int("n"),
        "T": Int("T"),
        "p_write": Real(0.3),
        "generator": gen_arg(),
        "write_at_start": Flag(True),
    },
    {"n": 2, "T": 4},
)
entry(
    "data.multi_recall.multi_recall_vocab_size",
    lambda a: multi_recall.multi_recall_vocab_size(
        a.num_items, a.num_symbols, a.num_distractors
    ),
    {"num_items": Int(2), "num_symbols": Int(3), "num_distractors": Int(2)},
)
entry(
    "data.multi_recall.multi_recall_dataset",
    lambda a: multi_recall.multi_recall_dataset(
        a.n,
        a.num_items,
        a.delay,
        a.rng,
        num_symbols=a.num_symbols,
        num_distractors=a.num_distractors,
        onehot=a.onehot,
    ),
    {
        "n": Int(3),
        "num_items": Int(2),
        "delay": Int(1),
        "rng": rng_arg(),
        "num_symbols": Int(3),
        "num_distractors": Int(2),
        "onehot": Flag(True),
    },
)
entry(
    "data.recall.recall_vocab_size",
    lambda a: recall.recall_vocab_size(a.num_symbols, a.num_distractors),
    {"num_symbols": Int(3), "num_distractors": Int(2)},
)
entry(
    "data.recall.recall_tokens",
    lambda a: recall.recall_tokens(
        a.n,
        a.delay,
        a.rng,
        num_symbols=a.num_symbols,
        num_distractors=a.num_distractors,
    ),
    {
        "n": Int(3),
        "delay": Int(2),
        "rng": rng_arg(),
        "num_symbols": Int(3),
        "num_distractors": Int(2),
    },
)
entry(
    "data.recall.recall_dataset",
    lambda a: recall.recall_dataset(
        a.n,
        a.delay,
        a.rng,
        num_symbols=a.num_symbols,
        num_distractors=a.num_distractors,
        onehot=a.onehot,
    ),
    {
        "n": Int(3),
        "delay": Int(2),
        "rng": rng_arg(),
        "num_symbols": Int(3),
        "num_distractors": Int(2),
        "onehot": Flag(True),
    },
)
entry(
    "data.recall.recall_batches",
    lambda a: recall.recall_batches(
        a.batch_size, a.delays, a.rng, num_symbols=a.num_symbols
    )(0),
    {
        "batch_size": Int(2),
        "delays": Obj(lambda a: [1, 2], bad=(None, 2, [], [-1], ["1"])),
        "rng": rng_arg(),
        "num_symbols": Int(3),
    },
)
entry("data.stories.Story", lambda a: None, record=True)
entry("data.stories.StoryBatch", lambda a: None, record=True)
entry("data.stories.story_vocab", lambda a: len(st_stories.story_vocab()))
entry(
    "data.stories.stories",
    lambda a: st_stories.stories(
        a.n,
        a.rng,
        task=a.task,
        min_sentences=a.min_sentences,
        max_sentences=a.max_sentences,
        people=a.people,
        places=a.places,
        objects=a.objects,
    ),
    {
        "n": Int(2),
        "rng": rng_arg(),
        "task": Int(2, bad=(0, 3, True, 2.5, "2")),
        "min_sentences": Int(3),
        "max_sentences": Int(5),
        "people": Int(3),
        "places": Int(3),
        "objects": Int(2),
    },
)
entry(
    "data.stories.encode_stories",
    lambda a: st_stories.encode_stories(
        a.batch, a.vocab, sentences=a.sentences, words=a.words
    ),
    {
        "batch": Obj(
            lambda a: st_stories.stories(2, np.random.default_rng(0)),
            bad=(None, [], ["x"], "story"),
        ),
        "vocab": Obj(
            lambda a: st_stories.story_vocab(), bad=(None, 5, vocab.Vocab("ab"))
        ),
        "sentences": Int(30),
        "words": Int(9),
    },
)
entry(
    "data.strings.string_pairs",
    lambda a: strings.string_pairs(
        a.n,
        a.rng,
        task=a.task,
        min_len=a.min_len,
        max_len=a.max_len,
        alphabet=a.alphabet,
    ),
    {
        "n": Int(2),
        "rng": rng_arg(),
        "task": Choice("copy"),
        "min_len": Int(2),
        "max_len": Int(4),
        "alphabet": Obj(lambda a: "abc", bad=(None, "a", "aab", 3)),
    },
)
entry(
    "data.vocab.Vocab",
    lambda a: (lambda v: (len(v), v.encode("ab"), v.decode(a.ids)))(
        vocab.Vocab(a.tokens, specials=a.specials)
    ),
    {
        "tokens": Obj(lambda a: "abc", bad=(None, 3, ["a", "a"], [""])),
        "specials": Obj(lambda a: ("<p>", "<b>", "<e>"), bad=(None, "pbe", ("p", "b"))),
        "ids": Ids("T", 6),
    },
    {"T": 4},
    skip={"tokens empty": "a vocabulary of no tokens is valid; the row then encodes "
                          "'ab', which it lacks (ValueError naming the token)"},
)
entry(
    "data.vocab.vocab_size",
    lambda a: vocab.vocab_size(a.vocab, "vocab", minimum=a.minimum),
    {
        "vocab": Obj(lambda a: CHARS, bad=(None, "abcd", 2.5, True, -1)),
        "minimum": Int(3, bad=(True, 2.5, "2", -1)),
    },
)
entry("data.vocab.PaddedBatch", lambda a: None, record=True)
entry("data.vocab.Seq2SeqBatch", lambda a: None, record=True)
entry(
    "data.vocab.pad_batch",
    lambda a: vocab.pad_batch(a.sequences, a.pad, width=a.width),
    {
        "sequences": Obj(
            lambda a: [[3, 4], [5]], bad=(None, [], "ab", [[1.5]], [[-1]])
        ),
        "pad": Int(0, bad=(-1, True, 2.5, "2")),
        "width": Int(3),
    },
)
entry(
    "data.vocab.seq2seq_batch",
    lambda a: vocab.seq2seq_batch(
        a.pairs, CHARS, CHARS, src_width=a.src_width, tgt_width=a.tgt_width
    ),
    {
        "pairs": Obj(
            lambda a: [("ab", "ba"), ("c", "c")],
            bad=(None, [], [("ab",)], [("ax", "b")]),
        ),
        "src_width": Int(3),
        "tgt_width": Int(4),
    },
)

# -------------------------------------------------------------------- validate, seeding

entry(
    "validate.check_shape",
    lambda a: validate.check_shape(a.x, "x", "B T", sizes={"T": 3}),
    {"x": Floats("B T")},
    {"B": 2, "T": 3},
)
entry(
    "validate.check_floating",
    lambda a: validate.check_floating(a.x, "x"),
    {"x": Floats("B T")},
    {"B": 2, "T": 3},
)
entry(
    "validate.check_tensor",
    lambda a: validate.check_tensor(a.x, "x"),
    {"x": Floats("B T")},
    {"B": 2, "T": 3},
)
entry(
    "validate.check_nonempty",
    lambda a: validate.check_nonempty(a.x, "x", "B T", "T"),
    {"x": Floats("B T")},
    {"B": 2, "T": 3},
)
entry(
    "validate.check_bool",
    lambda a: validate.check_bool(a.flag, "flag"),
    {"flag": Flag(True)},
)
entry(
    "validate.check_real",
    lambda a: validate.check_real(a.value, "value", minimum=0.0),
    {"value": Real(0.5)},
)
entry(
    "validate.check_same_dtype",
    lambda a: validate.check_same_dtype("x", a.x, "y", a.y),
    {"x": Floats("B"), "y": Floats("B")},
    {"B": 2},
)
entry(
    "validate.check_dtypes_agree",
    lambda a: validate.check_dtypes_agree(("x", a.x), ("y", a.y), ("z", None)),
    {"x": Floats("B"), "y": Floats("B")},
    {"B": 2},
)
entry(
    "validate.first_weight",
    lambda a: validate.first_weight(a.module),
    # anything else is a module without parameters: None, by documentation
    {"module": Obj(lambda a: nn.Linear(2, 2).to(a.dtype), bad=())},
)
entry(
    "validate.check_finite",
    lambda a: validate.check_finite(a.x, "x"),
    {"x": Floats("B T")},
    {"B": 2, "T": 3},
)
entry(
    "validate.check_int",
    lambda a: validate.check_int(a.value, "value"),
    {"value": Int(3)},
)
entry(
    "validate.check_tokens",
    lambda a: validate.check_tokens(a.ids, "ids", "B T", 5),
    {"ids": Ids("B T", 5)},
    {"B": 2, "T": 3},
)
entry("validate.check_rng", lambda a: validate.check_rng(a.rng), {"rng": rng_arg()})
entry(
    "validate.check_float_dtype",
    lambda a: validate.check_float_dtype(a.dtype_, "dtype"),
    {"dtype_": Choice(torch.float16, bad=(torch.int64, torch.bool, None, "float64"))},
)
entry(
    "seeding.seed_all",
    lambda a: seeding.seed_all(a.seed, threads=None),
    {"seed": Int(3, bad=(True, 2.5, "2"))},
)

# -------------------------------------------------------------------- decoding, metrics

from seqlearn import decoding, metrics  # noqa: E402 - kept with their rows


def _markov_decoder(a):
    """A StepDecoder whose next token depends on the source and the previous token only."""
    table = torch.randn(a.dims["B"], 5, 5, generator=torch.Generator().manual_seed(0),
                        dtype=F64)  # (B, y_prev, y) logits over 5 ids

    def step(y_prev, state):
        return table[state[:, 0], y_prev], state

    return decoding.StepDecoder(step, torch.arange(a.dims["B"])[:, None], a.dims["B"], 5,
                                bos=1, eos=2, pad=0)


DEC = {"B": 2, "K": 3}
entry("decoding.StepDecoder",
      lambda a: decoding.beam_search(
          decoding.StepDecoder(a.step, a.state, a.batch_size, a.vocab_size, a.bos, a.eos,
                               a.pad, max_len=a.max_len), 2, 3),
      {"step": Obj(lambda a: lambda y, s: (torch.zeros(len(y), 5, dtype=F64), s),
                   bad=(None, 0, "x")),
       "state": Obj(lambda a: torch.zeros(a.dims["B"], 1), bad=(None, 0, "x", [[0.0]])),
       "batch_size": Int("B"), "vocab_size": Int(5, bad=(0, -1, 1, True, 2.5, "2")),
       "bos": Int(1), "eos": Int(2), "pad": Int(0), "max_len": Int(4)}, {"B": 2})
entry("decoding.BeamResult",
      lambda a: decoding.BeamResult(torch.zeros(1, 1, 1, dtype=torch.long),
                                    torch.zeros(1, 1), torch.ones(1, 1, dtype=torch.long),
                                    torch.zeros(1, 1)), record=True)
entry("decoding.normalised_score",
      lambda a: decoding.normalised_score(a.log_prob, a.length, a.alpha),
      {"log_prob": Floats("B K", "negative"), "length": Lengths("B K", 4),
       "alpha": Real(0.5)}, DEC, numeric=True,
      skip={"length[0] = 5": "a length has no upper bound"})
entry("decoding.beam_search",
      lambda a: decoding.beam_search(a.decoder, a.beam_size, a.max_len,
                                     length_penalty=a.length_penalty),
      {"decoder": Obj(_markov_decoder, bad=(None, 0, "x")), "beam_size": Int("K"),
       "max_len": Int(3), "length_penalty": Real(0.5)}, DEC)
entry("decoding.seq2seq_decoder",
      lambda a: decoding.beam_search(decoding.seq2seq_decoder(a.model, a.src, a.src_lengths),
                                     2, 3),
      {"model": Obj(_s2s, bad=(None, nn.Linear(2, 2))),
       "src": Ids("B S", 7, low=3), "src_lengths": Lengths("B", "S")}, S2S)
entry("decoding.transformer_decoder",
      lambda a: decoding.beam_search(
          decoding.transformer_decoder(a.model, a.src, bos=a.bos, eos=a.eos, pad=a.pad,
                                       src_mask=a.src_mask), 2, 3),
      {"model": Obj(lambda a: transformer.Transformer(7, 7, 4, 2, 1, 5, max_len=8).to(a.dtype),
                    bad=(None, nn.Linear(2, 2))),
       "src": Ids("B S", 7), "bos": Int(1), "eos": Int(2), "pad": Int(0),
       "src_mask": Mask("B S")}, {"B": 2, "S": 3})

TEXTS = Obj(lambda a: ["1998-03-03", "2001-12-31"], bad=(None, "1998-03-03", ["1998", 3], []))
entry("metrics.edit_distance", lambda a: metrics.edit_distance(a.hypothesis, a.reference),
      {"hypothesis": Obj(lambda a: "kitten", bad=(None, 3, 2.5)),
       "reference": Obj(lambda a: "sitting", bad=(None, 3, b"x"))})
entry("metrics.character_error_rate",
      lambda a: metrics.character_error_rate(a.hypotheses, a.references),
      {"hypotheses": Obj(lambda a: ["1998-03-30", "2001-12-3"],
                         bad=(None, "1998-03-03", ["1998", 3], [])),
       "references": TEXTS})
entry("metrics.corpus_bleu",
      lambda a: metrics.corpus_bleu(a.hypotheses, a.references, tokenize=a.tokenize),
      {"hypotheses": Obj(lambda a: ["1998-03-30", "2001-12-3"],
                         bad=(None, "1998-03-03", ["1998", 3], [])),
       "references": TEXTS, "tokenize": Choice("char")})

# --------------------------------------------------------------------- documented edges
# Where the matrix's default expectation does not apply, and why.

# an infinite entry may give NaN through inf - inf or 0 * inf, as in torch
IEEE = ("*",)
for _name in (
    "attention.MultiHeadAttention",
    "attention.attend",
    "attention.attention",
    "attention.masked_softmax",
    "associative.soft_lookup",
    "associative.hard_lookup",
    "bptt.reference.torch_reference",
    "causal.causal_attention_loop",
    "causal.free_candidates",
    "causal.KeyValueAttention",
    "causal.MultiHeadCausalAttention",
    "conv.conv1d",
    "conv.causal_conv1d",
    "conv.conv_transpose1d",
    "gated.GRU",
    "gated.GRUCell",
    "gated.LSTM",
    "gated.LSTMCell",
    "layernorm.LayerNorm",
    "linear_attention.masked_linear_attention",
    "local_attention.restricted_attention",
    "losses.masked_cross_entropy",
    "mingru.MinGRU",
    "multiplicative.MultiplicativeLinear",
    "multiplicative.SoftSwitch",
    "multiplicative.soft_switch",
    "online_softmax.memory_efficient_attention",
    "scores.BilinearScore",
    "transformer_layers.DecoderLayer",
    "transformer_layers.EncoderLayer",
    "transformer_layers.FeedForward",
    "unroll.gru_gates",
    "warmup.adam_moments",
):
    ENTRIES[f"seqlearn.{_name}"] = replace(ENTRIES[f"seqlearn.{_name}"], inf_nan=IEEE)

SHAPE_ONLY = "checks shapes and dtypes, not values"
for _name in (
    "validate.check_shape",
    "validate.check_floating",
    "validate.check_nonempty",
    "validate.check_same_dtype",
    "validate.check_dtypes_agree",
    "validate.check_tensor",
    "scores.check_query_key",
    "bptt.params.check_params",
):
    ENTRIES[f"seqlearn.{_name}"] = replace(
        ENTRIES[f"seqlearn.{_name}"], finite_nan=("*",)
    )
for _name in ("validate.check_shape", "validate.check_nonempty"):
    ENTRIES[f"seqlearn.{_name}"] = replace(
        ENTRIES[f"seqlearn.{_name}"],
        skip={"integer": SHAPE_ONLY, "complex": SHAPE_ONLY},
    )
ENTRIES["seqlearn.validate.check_finite"] = replace(
    ENTRIES["seqlearn.validate.check_finite"],
    skip={"integer": "an integer array is finite",
          "complex": "a complex array is finite where both parts are (torch.isfinite)"},
)
# gradients of several dtypes are legitimate: each array's sum of squares is a float
for _name in ("bptt.clip.global_norm", "bptt.clip.clip_grad_norm"):
    ENTRIES[f"seqlearn.{_name}"] = replace(
        ENTRIES[f"seqlearn.{_name}"],
        skip={"dtypes": "gradients of several dtypes are summed as Python floats, as "
                        "torch's clip_grad_norm_ takes them"})
ANY_NUMBER = "combine works on any number type (integers, complex, sympy symbols)"
ENTRIES["seqlearn.scan.combine"] = replace(
    ENTRIES["seqlearn.scan.combine"],
    skip={"integer": ANY_NUMBER, "complex": ANY_NUMBER, "dtypes": ANY_NUMBER},
    aliases={"a1": "first[0]", "b1": "first[1]", "a2": "second[0]", "b2": "second[1]"},
)
ENTRIES["seqlearn.scores.LocationScore"] = replace(
    ENTRIES["seqlearn.scores.LocationScore"], finite_nan=("k",)
)  # ignores the keys' content
for _name in ("complexity.jacobian_pattern", "complexity.graph_depth"):
    ENTRIES[f"seqlearn.{_name}"] = replace(
        ENTRIES[f"seqlearn.{_name}"], finite_nan=("x",)
    )
ENTRIES["seqlearn.attention.MultiHeadAttention"] = replace(
    ENTRIES["seqlearn.attention.MultiHeadAttention"],
    skip={"mask[None]": "a 4-D mask broadcastable to (B, heads, Tq, Tk) is per head"},
)

# --------------------------------------------------------------------------- language models
from seqlearn import char_text, diagrams, ngram, sampling  # noqa: E402 - kept with rows
from seqlearn import language_model as lm  # noqa: E402

TEXT = Obj(lambda a: 'ab "c"\n  d', bad=(None, 3, b"x"))
NO_VOCAB = "the text has no vocabulary: any id >= 0 is a character"
entry("char_text.reference_topics", lambda a: len(char_text.reference_topics()))
entry("char_text.split_reference_text",
      lambda a: (lambda s: (len(s.train), len(s.held_out)))(
          char_text.split_reference_text(a.topics, every=a.every)),
      {"topics": Obj(lambda a: {f"t{i}": "text\n" for i in range(20)},
                     bad=(0, "x", ["a"], {"a": 1})),
       "every": Int(3, bad=(0, -1, 1, True, 2.5, "2"))})
entry("char_text.TextSplit", lambda a: None, record=True)
entry("char_text.text_fingerprint", lambda a: len(char_text.text_fingerprint(a.text)),
      {"text": TEXT})
entry("char_text.CharVocab",
      lambda a: (lambda v: (len(v), v.encode("ab"), v.decode(a.ids)))(
          char_text.CharVocab(a.text)),
      {"text": Obj(lambda a: "abcd", bad=(None, 3, "", ["a"])), "ids": Ids("T", 4)},
      {"T": 3})
entry("char_text.random_windows",
      lambda a: char_text.random_windows(a.ids, a.batch_size, a.length, a.generator),
      {"ids": Ids("N", 5), "batch_size": Int("B"), "length": Int("L"),
       "generator": gen_arg(optional=True)}, {"N": 8, "B": 2, "L": 3},
      skip={"ids[0] = vocab": NO_VOCAB})
entry("char_text.consecutive_windows",
      lambda a: char_text.consecutive_windows(a.ids, a.length),
      {"ids": Ids("N", 5), "length": Int("L")}, {"N": 8, "L": 3},
      skip={"ids[0] = vocab": NO_VOCAB})
for _name in ("line_position", "inside_quotes", "indentation"):
    entry(f"char_text.{_name}", (lambda f: lambda a: f(a.text))(getattr(char_text, _name)),
          {"text": TEXT})

entry("ngram.NGramModel",
      lambda a: (lambda m: (m.next_probabilities(a.ids), m.log_likelihood(a.ids),
                            m.count([0], 1)))(
          ngram.NGramModel(a.n, a.vocab_size, k=a.k, start=a.start).fit(a.train)),
      {"n": Int(2), "vocab_size": Int("V"), "k": Real(0.5),
       "start": Int(0, bad=(-1, True, 2.5, "2")), "train": Ids("N", "V"),
       "ids": Ids("T", "V")}, {"V": 4, "N": 10, "T": 3}, aliases={"train": "ids"})
entry("ngram.KneserNeyModel",
      lambda a: (lambda m: (m.next_probabilities(a.ids), m.log_likelihood(a.ids)))(
          ngram.KneserNeyModel(a.n, a.vocab_size, discount=a.discount,
                               start=a.start).fit(a.train)),
      {"n": Int(2), "vocab_size": Int("V"),
       "discount": Real(0.5, bad=(math.nan, math.inf, 0.0, 1.5, True, "1")),
       "start": Int(0, bad=(-1, True, 2.5, "2")), "train": Ids("N", "V"),
       "ids": Ids("T", "V")}, {"V": 4, "N": 10, "T": 3}, aliases={"train": "ids"})


def _lm(a, cell="lstm"):
    return lm.RecurrentLM(5, 3, 4, cell=cell).to(a.dtype)


LM_MODEL = Obj(_lm, bad=(None, 0, "x"))
LM = {"B": 2, "T": 3}
entry("language_model.bits_per_character",
      lambda a: lm.bits_per_character(a.logits, a.targets),
      {"logits": Floats("B T V"), "targets": Ids("B T", "V")}, {"B": 2, "T": 3, "V": 4},
      numeric=True, inf_nan=("logits",),
      skip={"targets[0] = -1": "-1 is the ignore_index: that target is left out"})
entry("language_model.language_model_loss",
      lambda a: lm.language_model_loss(a.model, (a.x, a.y)),
      {"model": LM_MODEL, "x": Ids("B T", 5), "y": Ids("B T", 5)}, LM)
entry("language_model.held_out_bits",
      lambda a: lm.held_out_bits(a.model, a.ids, a.length, batch_size=a.batch_size,
                                 carry=a.carry),
      {"model": LM_MODEL, "ids": Ids("N", 5), "length": Int("L"), "batch_size": Int(2),
       "carry": Flag(False)},
      {"N": 7, "L": 3})
entry("language_model.parameter_count", lambda a: lm.parameter_count(a.model),
      {"model": LM_MODEL})
entry("language_model.RecurrentLM",
      lambda a: lm.RecurrentLM(a.vocab_size, a.embed_dim, a.hidden_size, cell=a.cell,
                               fast=a.fast).to(a.dtype)(a.x),
      {"vocab_size": Int("V"), "embed_dim": Int("E"), "hidden_size": Int("H"),
       "cell": Choice("lstm"), "fast": Flag(False), "x": Ids("B T", "V")},
      {"B": 2, "T": 3, "V": 5, "E": 2, "H": 3}, numeric=True)
entry("language_model.lstm_gates", lambda a: lm.lstm_gates(a.model, a.x),
      {"model": Obj(_lm, bad=(None, 0, "x", lm.RecurrentLM(5, 3, 4, cell="elman"))),
       "x": Ids("B T", 5)}, LM, numeric=True)
entry("language_model.CausalBlock",
      lambda a: lm.CausalBlock(a.d_model, a.num_heads, a.d_ff).to(a.dtype)(a.x),
      {"d_model": Int("d"), "num_heads": Int(2), "d_ff": Int(5), "x": Floats("B T d")},
      {"B": 2, "T": 3, "d": 4}, numeric=True, inf_nan=IEEE)
entry("language_model.CausalTransformerLM",
      lambda a: lm.CausalTransformerLM(a.vocab_size, a.d_model, a.num_heads, a.num_layers,
                                       a.d_ff, context=a.context).to(a.dtype)(a.x, a.state),
      {"vocab_size": Int("V"), "d_model": Int(4), "num_heads": Int(2), "num_layers": Int(1),
       "d_ff": Int(5), "context": Int(6), "x": Ids("B T", "V"), "state": Ids("B S", "V")},
      {"B": 2, "T": 3, "S": 2, "V": 5}, numeric=True)

SAMPLE = {"logits": Floats("B V"), "temperature": Real(0.7), "top_k": Int(2)}
# not numeric: top-k is discontinuous, and rounding logits to 8 bits can tie or swap the
# k-th largest; test_sampling.py compares half precision at a fixed, untied input
entry("sampling.sampling_distribution",
      lambda a: sampling.sampling_distribution(a.logits, a.temperature, a.top_k),
      SAMPLE, {"B": 2, "V": 4})
entry("sampling.sample_next",
      lambda a: sampling.sample_next(a.logits, a.temperature, a.top_k,
                                     generator=a.generator),
      {**SAMPLE, "generator": gen_arg(optional=True)}, {"B": 2, "V": 4})
entry("sampling.generate",
      lambda a: sampling.generate(a.model, a.prompt, a.steps, temperature=a.temperature,
                                  top_k=a.top_k, generator=a.generator),
      {"model": LM_MODEL, "prompt": Ids("B T", 5), "steps": Int(3),
       "temperature": Real(0.7), "top_k": Int(2), "generator": gen_arg(optional=True)}, LM)
entry("diagrams.char_lm_diagram", lambda a: diagrams.char_lm_diagram(a.mode).dpi,
      {"mode": Choice("sampling")})

# ----------------------------------------------------------------------- ntm, copy task
from seqlearn import copy_task, ntm  # noqa: E402 - kept with rows

NT = {"B": 2, "N": 5, "W": 3, "S": 3}
WEIGHTING = Floats("B N", lambda x: torch.softmax(x, -1))
HEAD = {"key": Floats("B W"), "beta": Floats("B", "positive"),
        "gate": Floats("B", "unit"),
        "shifts": Floats("B S", lambda x: torch.softmax(x, -1)),
        "gamma": Floats("B", lambda x: 1 + x.abs())}
entry("ntm.cosine_similarity",
      lambda a: ntm.cosine_similarity(a.key, a.memory, eps=a.eps),
      {"key": Floats("B W"), "memory": Floats("B N W"), "eps": Real(1e-8)}, NT,
      numeric=True, inf_nan=IEEE)
entry("ntm.content_weights",
      lambda a: ntm.content_weights(a.key, a.beta, a.memory, eps=a.eps),
      {"key": Floats("B W"), "beta": HEAD["beta"], "memory": Floats("B N W"),
       "eps": Real(1e-8)}, NT, numeric=True, inf_nan=IEEE)
entry("ntm.interpolate", lambda a: ntm.interpolate(a.content, a.previous, a.gate),
      {"content": WEIGHTING, "previous": WEIGHTING, "gate": HEAD["gate"]}, NT,
      numeric=True, inf_nan=IEEE)
entry("ntm.shift", lambda a: ntm.shift(a.weights, a.shifts),
      {"weights": WEIGHTING, "shifts": HEAD["shifts"]}, NT, numeric=True, inf_nan=IEEE)
entry("ntm.sharpen", lambda a: ntm.sharpen(a.weights, a.gamma),
      {"weights": WEIGHTING, "gamma": HEAD["gamma"]}, NT, numeric=True)
entry("ntm.address",
      lambda a: ntm.address(a.memory, a.previous, a.key, a.beta, a.gate, a.shifts,
                            a.gamma, eps=a.eps),
      {"memory": Floats("B N W"), "previous": WEIGHTING, **HEAD, "eps": Real(1e-8)}, NT,
      numeric=True, inf_nan=IEEE)
entry("ntm.Addressing", lambda a: None, record=True)
entry("ntm.read", lambda a: ntm.read(a.memory, a.weights),
      {"memory": Floats("B N W"), "weights": WEIGHTING}, NT, numeric=True, inf_nan=IEEE)
entry("ntm.write", lambda a: ntm.write(a.memory, a.weights, a.erase, a.add),
      {"memory": Floats("B N W"), "weights": WEIGHTING, "erase": Floats("B W", "unit"),
       "add": Floats("B W")}, NT, numeric=True, inf_nan=IEEE)
entry("ntm.NTMState", lambda a: None, record=True)
entry("ntm.HeadParameters", lambda a: None, record=True)
entry("ntm.NTMTrace", lambda a: None, record=True)
NTM_ARGS = {"input_size": Int("D"), "controller_size": Int("C"),
            "memory_size": Int("N"), "word_size": Int("W"), "read_heads": Int(2), "shift_radius": Int(1),
            "controller": Choice("lstm")}
NTM_DIMS = {"B": 2, "T": 3, "D": 2, "C": 4, "N": 5, "W": 3}
entry("ntm.NTMCell",
      lambda a: ntm.NTMCell(a.input_size, a.controller_size, a.memory_size, a.word_size,
                            read_heads=a.read_heads, shift_radius=a.shift_radius,
                            controller=a.controller).to(a.dtype)(a.x)[0],
      {**NTM_ARGS, "x": Floats("B D")}, NTM_DIMS, numeric=True, inf_nan=IEEE)
entry("ntm.NTM",
      lambda a: ntm.NTM(a.input_size, a.output_size, a.controller_size, a.memory_size,
                        a.word_size, read_heads=a.read_heads,
                        shift_radius=a.shift_radius,
                        controller=a.controller).to(a.dtype)(a.x),
      {**NTM_ARGS, "output_size": Int(2), "x": Floats("B T D")}, NTM_DIMS, numeric=True,
      inf_nan=IEEE)

COPY = {"B": 2, "L": 2, "T": 5, "width": 3, "D": 4}


def _copier(a):
    torch.manual_seed(0)
    return copy_task.LSTMCopier(a.dims["width"], 4).to(a.dtype)


COPY_BATCH = {"model": Obj(_copier, bad=(None, 0, "x")),
              "x": Floats("B T D", "unit"), "y": Floats("B L width", "unit")}
entry("copy_task.CopyBatch", lambda a: None, record=True)
entry("copy_task.copy_batch",
      lambda a: copy_task.copy_batch(a.n, a.length, a.width, a.rng, dtype=a.dtype),
      {"n": Int("B"), "length": Int("L"), "width": Int("width"), "rng": rng_arg()},
      COPY)
entry("copy_task.LSTMCopier",
      lambda a: copy_task.LSTMCopier(a.width, a.hidden, a.layers).to(a.dtype)(a.x),
      {"width": Int("width"), "hidden": Int(4), "layers": Int(1), "x": Floats("B T D")},
      COPY, numeric=True, inf_nan=IEEE)
entry("copy_task.copy_loss",
      lambda a: copy_task.copy_loss(a.model, copy_task.CopyBatch(a.x, a.y)), COPY_BATCH,
      COPY, numeric=True)
entry("copy_task.copy_errors",
      lambda a: copy_task.copy_errors(a.model, copy_task.CopyBatch(a.x, a.y)),
      COPY_BATCH, COPY)

# ------------------------------------------------ conv encoder, memory network switches
from seqlearn import conv_encoder  # noqa: E402 - kept with rows

entry("conv_encoder.ConvEncoder",
      lambda a: conv_encoder.ConvEncoder(
          a.input_size, a.hidden_size, layers=a.layers, kernel_size=a.kernel_size,
          causal=a.causal).to(a.dtype)(a.x, a.mask),
      {"input_size": Int("D"), "hidden_size": Int("H"), "layers": Int(2),
       "kernel_size": Int(3), "causal": Flag(False), "x": Floats("B T D"),
       "mask": Mask("B T")},
      {"B": 2, "T": 4, "D": 3, "H": 2}, numeric=True, inf_nan=IEEE)
LAYOUT = "any (B, S) mask is a story layout: a cut or transposed one is another input"
entry("memory.random_noise_ages",
      lambda a: memory.random_noise_ages(a.present, a.rate, generator=a.generator,
                                         max_age=a.max_age),
      {"present": Mask("B S"), "rate": Real(0.5), "generator": gen_arg(optional=True),
       "max_age": Int(4)}, {"B": 2, "S": 3},
      skip={"present[..., :-1]": LAYOUT, "present.transpose": LAYOUT})
