"""A gallery of submissions from students of every kind, and the scores they deserve.

Each entry starts from the handout (``blank``) or from the model answers (``solution``),
replaces some answer cells, adds some cells, and says what ``otter run`` must give each
question. Together they cover: blank, correct, correct written differently, float32, one
classic bug in every question (later questions that build on a buggy one keep their
points), outputs hard-coded for the public tests, answers that call the reference, a
cell that patches the comparison helper in memory or on disk, rewrites the test files or
monkey-patches ``seqlearn``, a cell that ends the kernel, and an endless loop.

:func:`build` writes a submission notebook; it runs in the worker processes of
``conftest.py``.
"""

from __future__ import annotations

import copy
import inspect
import re
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import nbformat
from seqlearn_grading.grader import checks_module, load_checks

ASSIGNMENTS = Path(__file__).resolve().parents[2] / "assignments"
PROMPT = re.compile(r"^(?:<!--\s*BEGIN QUESTION\s*-->\s*)?\*\*Question (\d+)\b")


@dataclass
class Variant:
    base: str                                    # "blank" (the handout) or "solution"
    expected: dict[str, float]             # questions whose score is not the default
    answers: dict[str, Any] = field(default_factory=dict)   # question -> its answer
    # (source; None: the model answer, then the kernel ends; a function: made from the
    # model answer's source)
    cells: list[tuple[str, str]] = field(default_factory=list)  # (after, new cell)
    hardcode: list[str] = field(default_factory=list)   # answers that copy the public
    # tests' expected outputs
    why: str = ""


COMMON = {"blank": Variant("blank", {}, why="the untouched handout"),
          "correct": Variant("solution", {}, why="the model answers")}
"""The two entries of every assignment's gallery."""


def bugs(answers: dict[str, str | None], why: str, name: str = "",
         **scores: float) -> dict[str, Variant]:
    """The entry ``one bug in q1 and q3``: the model answers with ``answers`` in place;
    each of those questions scores 0 unless ``scores`` says otherwise, and every other
    question keeps its points (a later question that builds on a buggy one included)."""
    questions = list(answers)
    listed = " and ".join([", ".join(questions[:-1]), questions[-1]] if questions[:-1]
                          else questions)
    expected = {q: 0.0 for q in questions} | scores
    return {name or f"one bug in {listed}": Variant("solution", expected,
                                                     answers=answers, why=why)}


def tampering(name: str, cell: str, why: str) -> dict[str, Variant]:
    """An entry whose answers are all zero, after a cell that tries to make zeros
    pass."""
    return {name: Variant("blank", {}, answers={"q1": R_ZERO}, cells=[("q1", cell)],
                          why=f"{why}, answers zero")}


# -----------------------------------------------------------------------------
# recurrence

R_ZERO = '''\
def elman_forward(x, h0, params):
    B, T, _ = x.shape
    return (np.zeros((B, T, params["W2"].shape[0])),
            np.zeros((B, T, params["W11"].shape[0])))


def elman_backward(dy, x, h0, params, h):
    zeros = {k: np.zeros_like(v) for k, v in params.items()}
    return {**zeros, "x": np.zeros_like(x), "h0": np.zeros_like(h0)}


def jacobian_norms(h, W11):
    return np.zeros(h.shape[:2])


def train_echo(x, y, rng, steps=300):
    return init_params(1, 8, 1, rng)
'''

R_DIFFERENT = {
    "q1": '''\
def elman_forward(x, h0, params):
    """einsum and a while loop."""
    states, h_t, t = [], h0, 0
    while t < x.shape[1]:
        h_t = np.tanh(np.einsum("hd,bd->bh", params["W1"], x[:, t])
                      + np.einsum("hk,bk->bh", params["W11"], h_t) + params["b1"])
        states.append(h_t)
        t += 1
    h = np.stack(states, axis=1)
    return np.einsum("oh,bth->bto", params["W2"], h) + params["b2"], h
''',
    "q2": '''\
def elman_backward(dy, x, h0, params, h):
    """All dz1 first, then every gradient at once with einsum."""
    T = x.shape[1]
    h_prev = np.concatenate([h0[:, None], h[:, :-1]], axis=1)
    dz1, carry = np.zeros_like(h), np.zeros_like(h0)
    for t in range(T - 1, -1, -1):
        dz1[:, t] = (dy[:, t] @ params["W2"] + carry) * (1 - h[:, t] ** 2)
        carry = dz1[:, t] @ params["W11"]
    return {"W1": np.einsum("bth,btd->hd", dz1, x),
            "W11": np.einsum("bth,btk->hk", dz1, h_prev), "b1": dz1.sum(axis=(0, 1)),
            "W2": np.einsum("bto,bth->oh", dy, h), "b2": dy.sum(axis=(0, 1)),
            "x": dz1 @ params["W1"], "h0": carry}
''',
    "q3": '''\
def jacobian_norms(h, W11):
    """One sequence at a time, the largest singular value from an SVD."""
    B, T, H = h.shape
    norms = np.zeros((B, T))
    for b in range(B):
        J = np.eye(H)
        for t in range(T):
            J = np.diag(1 - h[b, t] ** 2) @ W11 @ J
            norms[b, t] = np.linalg.svd(J, compute_uv=False)[0]
    return norms
''',
    "q5": '''\
def train_echo(x, y, rng, steps=250):
    """RMSprop with momentum on 24 units."""
    H = 24
    params = init_params(1, H, 1, rng)
    speed = {k: np.zeros_like(v) for k, v in params.items()}
    scale = {k: np.zeros_like(v) for k, v in params.items()}
    for _ in range(steps):
        rows = rng.integers(0, len(x), 48)
        h0 = np.zeros((len(rows), H))
        out, h = elman_forward(x[rows], h0, params)
        grads = elman_backward(2 * (out - y[rows]) / out.size, x[rows], h0, params, h)
        for k in params:
            scale[k] = 0.99 * scale[k] + 0.01 * grads[k] ** 2
            speed[k] = 0.9 * speed[k] + grads[k] / (np.sqrt(scale[k]) + 1e-8)
            params[k] = params[k] - 0.002 * speed[k]
    return params
''',
}

R_BUGS_A = {
    "q1": '''\
def elman_forward(x, h0, params):
    B, T, _ = x.shape
    h = np.empty((B, T, params["W11"].shape[0]))
    h_t = h0
    for t in range(T):
        h_t = np.tanh(x[:, t] @ params["W1"].T + h_t @ params["W11"].T)   # b1 forgotten
        h[:, t] = h_t
    return h @ params["W2"].T + params["b2"], h
''',
    "q3": '''\
def jacobian_norms(h, W11):
    B, T, H = h.shape
    norms = np.empty((B, T))
    J = np.eye(H)
    for t in range(T):
        J = W11 @ J                                  # the factor D(t) forgotten
        norms[:, t] = np.linalg.norm(J, ord=2)
    return norms
''',
}

R_BUGS_B = {
    "q2": '''\
def elman_backward(dy, x, h0, params, h):
    W1, W11, W2 = params["W1"], params["W11"], params["W2"]
    T = x.shape[1]
    grads = {"W2": np.einsum("bto,bth->oh", dy, h), "b2": dy.sum(axis=(0, 1)),
             "W1": np.zeros_like(W1), "W11": np.zeros_like(W11),
             "b1": np.zeros_like(params["b1"]), "x": np.zeros_like(x)}
    for t in reversed(range(T)):
        h_prev = h[:, t - 1] if t > 0 else h0
        dz1 = (dy[:, t] @ W2) * (1 - h[:, t] ** 2)   # the gradient from t+1 forgotten
        grads["W1"] += dz1.T @ x[:, t]
        grads["W11"] += dz1.T @ h_prev
        grads["b1"] += dz1.sum(axis=0)
        grads["x"][:, t] = dz1 @ W1
        if t == 0:
            grads["h0"] = dz1 @ W11
    return grads
''',
    "q5": '''\
def train_echo(x, y, rng, steps=300):
    H = 32
    params = init_params(1, H, 1, rng)
    for _ in range(steps):
        rows = rng.choice(len(x), size=64, replace=False)
        h0 = np.zeros((64, H))
        out, h = elman_forward(x[rows], h0, params)
        grads = elman_backward(2 * (out - y[rows]) / out.size, x[rows], h0, params, h)
        for k in params:
            params[k] = params[k] + 0.05 * grads[k]     # up the gradient
    return params
''',
}

R_REFERENCE = '''\
from seqlearn.bptt import hidden_jacobians, rnn_backward, rnn_forward


def elman_forward(x, h0, params):
    y, cache = rnn_forward(x, h0, params)
    return y, cache["h"]


def elman_backward(dy, x, h0, params, h):
    _, cache = rnn_forward(x, h0, params)
    return rnn_backward(dy, cache)


def jacobian_norms(h, W11):
    J = hidden_jacobians({"made_by": "rnn_layer_forward", "h": h, "U": W11})
    return np.linalg.norm(J, ord=2, axis=(-2, -1))


def train_echo(x, y, rng, steps=300):
    H = 32
    params = init_params(1, H, 1, rng)
    for _ in range(steps):
        rows = rng.choice(len(x), size=64, replace=False)
        out, cache = rnn_forward(x[rows], np.zeros((64, H)), params)
        grads = rnn_backward(2 * (out - y[rows]) / out.size, cache)
        for k in params:
            params[k] = params[k] - 0.5 * grads[k]
    return params
'''

R_PATCH_MEMORY = '''\
import checks

checks.assert_close = lambda *args, **kwargs: None
checks.assert_all_close = lambda *args, **kwargs: None
checks.require = lambda function, name: function
'''

R_PATCH_DISK = '''\
with open("checks.py", "a") as f:
    f.write("\\n\\ndef assert_close(*args, **kwargs):\\n    pass\\n"
            "\\n\\ndef assert_all_close(*args, **kwargs):\\n    pass\\n")
import importlib
import checks

importlib.reload(checks)
'''

R_REWRITE_TESTS = '''\
import glob
import os

PASSING = ("from otter.test_files import test_case\\n\\nOK_FORMAT = False\\n\\n"
           "name = {name!r}\\npoints = 100\\n\\n@test_case(points=100, hidden=False)\\n"
           "def test_passes():\\n    pass\\n")


def parent_of(pid):
    with open(f"/proc/{pid}/stat") as f:
        return int(f.read().rsplit(")", 1)[1].split()[1])


places = [os.getcwd()]
try:
    grader = parent_of(os.getppid())             # the process that started this one
    places.append(os.path.realpath(f"/proc/{grader}/cwd"))
except OSError:
    pass
for place in places:
    for path in glob.glob(os.path.join(place, "tests", "q*.py")) + glob.glob(
            os.path.join(place, "..", "source", "tests", "q*.py")):
        with open(path) as f:
            if "from otter.test_files import test_case" not in f.read():
                continue
        name = os.path.splitext(os.path.basename(path))[0]
        with open(path, "w") as f:
            f.write(PASSING.format(name=name))
'''

R_MONKEY = '''\
import seqlearn.bptt
import seqlearn.bptt.rnn


def _zeros_forward(x, h0, params):
    B, T, _ = x.shape
    H, O = params["W11"].shape[0], params["W2"].shape[0]
    return np.zeros((B, T, O)), {"h": np.zeros((B, T, H)), "made_by": "rnn_forward"}


def _zeros_backward(dy, cache):
    return {"W1": 0, "W11": 0, "b1": 0, "W2": 0, "b2": 0, "x": 0, "h0": 0}


for module in (seqlearn.bptt, seqlearn.bptt.rnn):
    module.rnn_forward = _zeros_forward
    module.rnn_backward = _zeros_backward
    module.hidden_jacobians = lambda cache: np.zeros(cache["h"].shape
                                                     + cache["h"].shape[-1:])
'''

R_LOOP = {"q2": '''\
def elman_backward(dy, x, h0, params, h):
    grads = None
    while grads is None:                                 # never ends
        pass
    return grads
'''}

RECURRENCE = {
    **COMMON,
    "correct written differently": Variant(
        "solution", {}, answers=R_DIFFERENT,
        why="einsum, a while loop, dz1 all at once, an SVD, RMSprop"),
    **bugs(R_BUGS_A, "b1 forgotten; D(t) forgotten"),
    **bugs(R_BUGS_B, "the gradient from t+1 forgotten; training up the gradient"),
    "hard-coded public outputs": Variant(
        "blank", {}, hardcode=["q1", "q2", "q3"],
        answers={"q5": "def train_echo(x, y, rng, steps=300):\n"
                       "    return init_params(1, 8, 1, rng)\n"},
        why="the public tests' expected values returned whatever the input"),
    "calls the reference": Variant(
        "blank", {}, answers={"q1": R_REFERENCE, "q2": "", "q3": "", "q5": ""},
        why="every answer calls seqlearn.bptt"),
    **tampering("patches checks in memory", R_PATCH_MEMORY,
                "assert_close set to a no-op"),
    **tampering("patches checks on disk", R_PATCH_DISK,
                "no-op functions appended to checks.py"),
    **tampering("rewrites the tests", R_REWRITE_TESTS,
                "every otter test file it can find rewritten to pass"),
    **tampering("monkey-patches seqlearn", R_MONKEY,
                "rnn_forward and friends return zeros"),
    **bugs(R_LOOP, "an endless loop in elman_backward", name="loops forever in q2"),
}

# ----------------------------------------------------------------------------- gating

GA_BUGS_A = {
    "q1": '''\
def gru_cell(x, h, weight_ih, weight_hh, bias_ih, bias_hh):
    H = h.shape[1]
    gx = x @ weight_ih.T + bias_ih
    gh = h @ weight_hh.T + bias_hh
    r = torch.sigmoid(gx[:, :H] + gh[:, :H])
    u = torch.sigmoid(gx[:, H:2 * H] + gh[:, H:2 * H])
    candidate = torch.tanh(gx[:, 2 * H:] + r * gh[:, 2 * H:])   # torch's reset
    return u * h + (1 - u) * candidate
''',
    "q3": '''\
def cell_path_gradient(dc, f):
    return dc * f[:, -1]                                 # only the last forget gate
''',
}

GA_BUGS_B = {
    "q2": '''\
def lstm_step_backward(dh, dc_next, step, params):
    i, f, o, g, c = (step[k] for k in ("i", "f", "o", "g", "c"))
    m = np.tanh(c)
    dc = dh * o * (1 - m ** 2)                           # dc_next forgotten
    delta = {"o": dh * m * o * (1 - o), "i": dc * g * i * (1 - i),
             "f": dc * step["c_prev"] * f * (1 - f), "c": dc * i * (1 - g ** 2)}
    grads = {"c_prev": dc * f,
             "h_prev": sum(delta[k] @ params[f"W_h{k}"] for k in delta),
             "x": sum(delta[k] @ params[f"W_x{k}"] for k in delta)}
    for k, d in delta.items():
        grads[f"W_x{k}"] = d.T @ step["x"]
        grads[f"W_h{k}"] = d.T @ step["h_prev"]
        grads[f"b_{k}"] = d.sum(axis=0)
    return grads
''',
    "q5": '''\
def train_memory(x, y, seed, steps=300):
    from seqlearn.gated import GRUCell

    torch.manual_seed(seed)
    H = 16
    cell = GRUCell(1, H, reset="before")
    weights = {k: p.detach().clone() for k, p in cell.named_parameters()}
    weights["W_out"], weights["b_out"] = torch.randn(1, H) / 4, torch.zeros(1)
    for w in weights.values():
        w.requires_grad_()
    optimizer = torch.optim.Adam(weights.values(), lr=1e-2)
    for _ in range(steps):
        rows = torch.randint(len(x), (64,))
        h = gru_cell(x[rows, 0], torch.zeros(64, H), weights["weight_ih"],
                     weights["weight_hh"], weights["bias_ih"], weights["bias_hh"])
        first = h                                    # reads out after the first step
        for t in range(1, x.shape[1]):
            h = gru_cell(x[rows, t], h, weights["weight_ih"], weights["weight_hh"],
                         weights["bias_ih"], weights["bias_hh"])
        loss = ((first @ weights["W_out"].T + weights["b_out"] - y[rows]) ** 2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    return {k: w.detach() for k, w in weights.items()}
''',
}

GATING = {
    **COMMON,
    **bugs(GA_BUGS_A, "torch's reset convention; only the last forget gate"),
    **bugs(GA_BUGS_B, "dc_next forgotten; the read-out trained on the first state"),
}

# -----------------------------------------------------------------------------
# attention

A_BUGS_A = {
    "q1": '''\
def dot_score(q, k):
    return q @ k.transpose(-2, -1)


def general_score(q, k, W):
    return q @ W.T @ k.transpose(-2, -1)                # W transposed
''',
    "q3": '''\
def bahdanau_attention(s, states, mask, W_q, W_k, w):
    e = additive_score(s[:, None], states, W_q, W_k, w)[:, 0]
    weights = torch.softmax(e, dim=-1)                   # the padding gets weight too
    return (weights[:, :, None] * states).sum(dim=1), weights
''',
    "q6": '''\
def train_dates(pairs, seed, steps=5):                   # far too few steps to learn
    class DateTranslator(Seq2Seq):
        def _context(self, s, states, mask):
            score = self.score
            return bahdanau_attention(s, states, mask, score.query.weight,
                                      score.key.weight, score.w.weight[0])

    seed_all(int(seed))
    model = DateTranslator(SOURCE_VOCAB, TARGET_VOCAB, 64, score="additive",
                           embedding=32)
    def batch(k):
        return seq2seq_batch(pairs[64 * k:64 * (k + 1)], SOURCE_VOCAB, TARGET_VOCAB)

    fit_seq2seq(model, batch, steps, lr=5e-3)
    return model.state_dict()
''',
}

A_BUGS_B = {
    "q2": '''\
def additive_score(q, k, W_q, W_k, w):
    pairs = (q @ W_q.T).unsqueeze(-2) + (k @ W_k.T).unsqueeze(-3)
    return pairs @ w                                     # tanh forgotten
''',
    "q4": '''\
def attention_entropy(weights):
    p = torch.as_tensor(weights, dtype=torch.float64)
    return -(p * torch.log(p)).sum(dim=-1)               # 0 log 0 gives NaN
''',
}

ATTENTION = {
    **COMMON,
    **bugs(A_BUGS_A, "W transposed in general_score (dot_score right); softmax over "
                     "the padding; five training steps", q1=1),
    **bugs(A_BUGS_B, "tanh forgotten (q3 and q6 build on it and keep their points); "
                     "0 log 0"),
}

# -----------------------------------------------------------------------------
# transformer

T_DIFFERENT = {
    "q1": '''\
def masked_attention(q, k, v, mask=None):
    """einsum, -1e9 for the blocked scores, and empty rows zeroed afterwards."""
    scores = torch.einsum("...td,...sd->...ts", q, k) / q.shape[-1] ** 0.5
    if mask is None:
        return torch.softmax(scores, -1) @ v, torch.softmax(scores, -1)
    mask = torch.broadcast_to(mask, scores.shape)
    blocked = torch.tensor(-1e9, dtype=q.dtype)
    weights = torch.softmax(torch.where(mask, scores, blocked), -1)
    weights = weights * mask.any(-1, keepdim=True)
    return torch.einsum("...ts,...sd->...td", weights, v), weights
''',
    "q2": '''\
def multi_head_self_attention(x, params, num_heads, causal=True):
    """One head at a time, concatenated."""
    B, T, d = x.shape
    d_h = d // num_heads
    q, k, v = (x @ params[f"W_{n}"].T + params[f"b_{n}"] for n in "qkv")
    mask = torch.arange(T)[:, None] >= torch.arange(T)[None] if causal else None
    outs, weights = [], []
    for n in range(num_heads):
        cols = slice(n * d_h, (n + 1) * d_h)
        o, w = masked_attention(q[..., cols], k[..., cols], v[..., cols], mask)
        outs.append(o)
        weights.append(w)
    out = torch.cat(outs, -1) @ params["W_o"].T + params["b_o"]
    return out, torch.stack(weights, 1)
''',
    "q3": '''\
def positional_encoding(T, d):
    """Two loops, as the formula reads."""
    pe = torch.zeros(T, d, dtype=torch.float64)
    for t in range(T):
        for j in range(d):
            angle = t / 10000 ** (2 * (j // 2) / d)
            pe[t, j] = math.sin(angle) if j % 2 == 0 else math.cos(angle)
    return pe
''',
    "q4": '''\
def score_variance(d, m_q, v_q, m_k, v_k, c):
    """E[s^2] - E[s]^2 term by term."""
    c = sympy.sympify(c)
    mean_s = c * d * m_q * m_k
    squares = d * (v_q + m_q ** 2) * (v_k + m_k ** 2) + d * (d - 1) * (m_q * m_k) ** 2
    second = c ** 2 * squares
    return sympy.expand(second - mean_s ** 2)
''',
}

T_BUG_Q1 = {"q1": '''\
def masked_attention(q, k, v, mask=None):
    scores = q @ k.transpose(-2, -1)                     # no division by sqrt(d_k)
    if mask is None:
        weights = torch.softmax(scores, dim=-1)
    else:
        mask = mask.expand_as(scores)
        empty = ~mask.any(dim=-1, keepdim=True)
        scores = scores.masked_fill(~mask, float("-inf")).masked_fill(empty, 0.0)
        weights = torch.softmax(scores, dim=-1).masked_fill(empty, 0.0)
    return weights @ v, weights
'''}

T_BUGS_B = {
    "q2": '''\
def multi_head_self_attention(x, params, num_heads, causal=True):
    B, T, d = x.shape

    def heads(W, b):
        # not split by feature
        return (x @ W.T + b).reshape(B, num_heads, T, d // num_heads)

    q, k, v = (heads(params[f"W_{n}"], params[f"b_{n}"]) for n in "qkv")
    mask = torch.ones(T, T, dtype=torch.bool).tril() if causal else None
    out, weights = masked_attention(q, k, v, mask)
    out = out.reshape(B, T, d)
    return out @ params["W_o"].T + params["b_o"], weights
''',
    "q3": '''\
def positional_encoding(T, d):
    t = torch.arange(T, dtype=torch.float64)[:, None]
    angle = t / 10000 ** (torch.arange(0, d, 2, dtype=torch.float64) / d)
    pe = torch.empty(T, d, dtype=torch.float64)
    pe[:, 0::2] = torch.cos(angle)                       # sine and cosine swapped
    pe[:, 1::2] = torch.sin(angle[:, : d // 2])
    return pe
''',
    "q4": '''\
def score_variance(d, m_q, v_q, m_k, v_k, c):
    return sympy.sympify(c) ** 2 * d * v_q * v_k        # the means forgotten
''',
    "q5": '''\
def train_copy(seed, steps=300):
    L, V, d, num_heads = 6, 8, 32, 2
    generator = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    params = {"E": 0.5 * torch.randn(V, d), "W_out": torch.randn(V, d) / d ** 0.5,
              "b_out": torch.zeros(V)}
    for n in "qkvo":
        params[f"W_{n}"] = torch.randn(d, d) / d ** 0.5
        params[f"b_{n}"] = torch.zeros(d)
    for p in params.values():
        p.requires_grad_()
    optimizer = torch.optim.Adam(params.values(), lr=3e-3)
    for _ in range(steps):
        z = copy_task(64, L, V, generator)
        x = params["E"][z[:, :-1]]                   # the positional encoding forgotten
        a, _ = multi_head_self_attention(x, params, num_heads, causal=True)
        logits = (x + a) @ params["W_out"].T + params["b_out"]
        loss = torch.nn.functional.cross_entropy(logits[:, L - 1:].reshape(-1, V),
                                                 z[:, L:].reshape(-1))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    return {**{k: p.detach() for k, p in params.items()}, "num_heads": num_heads}
''',
}

T_REFERENCE = {
    "q1": '''\
from seqlearn.attention import MultiHeadAttention, attention
from seqlearn.transformer import sinusoidal_positional_encoding


def masked_attention(q, k, v, mask=None):
    return attention(q, k, v, mask=mask)
''',
    "q2": '''\
def multi_head_self_attention(x, params, num_heads, causal=True):
    mha = MultiHeadAttention(x.shape[-1], num_heads).to(x.dtype)
    layers = {"q": mha.q_proj, "k": mha.k_proj, "v": mha.v_proj, "o": mha.out_proj}
    with torch.no_grad():
        for n, layer in layers.items():
            layer.weight.copy_(params[f"W_{n}"])
            layer.bias.copy_(params[f"b_{n}"])
    return mha(x, x, x, causal=causal)
''',
    "q3": '''\
def positional_encoding(T, d):
    return sinusoidal_positional_encoding(T, d, dtype=torch.float64)
''',
    "q5": '''\
def train_copy(seed, steps=300):
    L, V, d = 6, 8, 32
    generator = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    mha = MultiHeadAttention(d, 2)
    E, out = torch.nn.Embedding(V, d), torch.nn.Linear(d, V)
    optimizer = torch.optim.Adam([*mha.parameters(), *E.parameters(),
                                  *out.parameters()])
    for _ in range(steps):
        z = copy_task(64, L, V, generator)
        x = E(z[:, :-1]) + sinusoidal_positional_encoding(2 * L - 1, d)
        a, _ = mha(x, x, x, causal=True)
        loss = torch.nn.functional.cross_entropy(out(x + a)[:, L - 1:].reshape(-1, V),
                                                 z[:, L:].reshape(-1))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    layers = {"q": mha.q_proj, "k": mha.k_proj, "v": mha.v_proj, "o": mha.out_proj}
    params = {f"{p}_{n}": getattr(layer, a).detach() for n, layer in layers.items()
              for p, a in (("W", "weight"), ("b", "bias"))}
    return {**params, "E": E.weight.detach(), "W_out": out.weight.detach(),
            "b_out": out.bias.detach(), "num_heads": 2}
''',
}

TRANSFORMER = {
    **COMMON,
    "correct written differently": Variant(
        "solution", {}, answers=T_DIFFERENT,
        why="einsum, -1e9 for -inf, one head at a time, loops, E[s^2] - E[s]^2"),
    **bugs(T_BUG_Q1, "q2 and q5 reuse masked_attention and keep their points",
           name="one missing sqrt(d_k) in q1"),
    **bugs(T_BUGS_B, "heads not split by feature; sin and cos swapped; means "
                     "forgotten; trained without positions"),
    "hard-coded public outputs": Variant(
        "blank", {}, hardcode=["q1", "q2", "q3", "q4"], why="public outputs returned"),
    "calls the reference": Variant(
        "blank", {}, answers=T_REFERENCE,
        why="seqlearn.attention, seqlearn.transformer"),
}

# ----------------------------------------------------------------------------- GRU ->
# attention

G_FLOAT32 = {
    "q1": '''\
def implied_weights(u):
    """In float32, where no dtype is asked for."""
    u = u.float()
    B, T, H = u.shape
    alpha = torch.zeros(B, T, T, H)
    beta = torch.cumprod(u, dim=1)
    for i in range(T):
        weight = 1 - u[:, i]
        alpha[:, i, i] = weight
        for t in range(i + 1, T):
            weight = weight * u[:, t]
            alpha[:, t, i] = weight
    return alpha, beta
''',
    "q2": '''\
def unrolled_states(alpha, beta, h_tilde, h0):
    alpha, beta, h_tilde, h0 = (a.float() for a in (alpha, beta, h_tilde, h0))
    return torch.einsum("btih,bih->bth", alpha, h_tilde) + beta * h0[:, None]
''',
    "q3": '''\
def gru_trajectory(gru, x):
    x = x.float()
    W_ih, W_hh = gru.weight_ih_l0.float(), gru.weight_hh_l0.float()
    b_ih, b_hh = gru.bias_ih_l0.float(), gru.bias_hh_l0.float()
    H = gru.hidden_size
    h = torch.zeros(x.shape[0], H)
    keep, candidates, states = [], [], []
    for t in range(x.shape[1]):
        gx, gh = x[:, t] @ W_ih.T + b_ih, h @ W_hh.T + b_hh
        r = torch.sigmoid(gx[:, :H] + gh[:, :H])
        u = torch.sigmoid(gx[:, H:2 * H] + gh[:, H:2 * H])
        n = torch.tanh(gx[:, 2 * H:] + r * gh[:, 2 * H:])
        h = u * h + (1 - u) * n
        keep.append(u), candidates.append(n), states.append(h)
    return torch.stack(keep, 1), torch.stack(candidates, 1), torch.stack(states, 1)
''',
}

G_BUGS_A = {
    "q1": '''\
def implied_weights(u):
    B, T, H = u.shape
    alpha = u.new_zeros(B, T, T, H)
    for t in range(T):
        for i in range(t + 1):
            alpha[:, t, i] = (1 - u[:, i]) * torch.prod(u[:, i + 1:t + 1], dim=1)
    shifted = torch.cat([torch.ones_like(u[:, :1]), u[:, :-1]], dim=1)
    return alpha, torch.cumprod(shifted, dim=1)          # beta one step behind
''',
    "q3": '''\
def gru_trajectory(gru, x):
    H = gru.hidden_size
    gx = x @ gru.weight_ih_l0.T + gru.bias_ih_l0
    h = x.new_zeros(x.shape[0], H)
    keep, candidates, states = [], [], []
    for t in range(x.shape[1]):
        gh = h @ gru.weight_hh_l0.T + gru.bias_hh_l0
        r = torch.sigmoid(gx[:, t, :H] + gh[:, :H])
        z = torch.sigmoid(gx[:, t, H:2 * H] + gh[:, H:2 * H])
        n = torch.tanh(gx[:, t, 2 * H:] + r * gh[:, 2 * H:])
        h = (1 - z) * h + z * n                          # the update gates swapped
        keep.append(z), candidates.append(n), states.append(h)
    return torch.stack(keep, 1), torch.stack(candidates, 1), torch.stack(states, 1)
''',
}

G_BUGS_B = {
    "q2": '''\
def unrolled_states(alpha, beta, h_tilde, h0):
    return (alpha * h_tilde[:, None]).sum(dim=2)         # beta h0 forgotten
''',
    "q4": '''\
def train_running_mean(seed, steps=300):
    torch.manual_seed(seed)
    generator = torch.Generator().manual_seed(seed)
    gru, head = torch.nn.GRU(1, 8, batch_first=True), torch.nn.Linear(8, 1)
    optimizer = torch.optim.Adam([*gru.parameters(), *head.parameters()], lr=1e-2)
    for _ in range(steps):
        x, y = running_mean_task(64, 20, generator)
        loss = ((head(gru(x)[0]) - x) ** 2).mean()   # trained to echo, not to average
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    return {"gru": gru.state_dict(), "head": head.state_dict()}
''',
}

G_REFERENCE = {
    "q1": '''\
from seqlearn.unroll import apply_implied_weights, gru_gates, gru_implied_weights


def implied_weights(u):
    return gru_implied_weights(u)
''',
    "q2": '''\
def unrolled_states(alpha, beta, h_tilde, h0):
    return apply_implied_weights(alpha, beta, h_tilde, h0)
''',
    "q3": '''\
def gru_trajectory(gru, x):
    return gru_gates(gru, x)
''',
}

G_KILL = '''
import os

os._exit(1)                                              # the kernel dies here
'''

GRU_TO_ATTENTION = {
    **COMMON,
    "float32": Variant("solution", {}, answers=G_FLOAT32,
                       why="correct, computed in float32 where no dtype is asked"),
    **bugs(G_BUGS_A, "beta one step behind; the update gates swapped"),
    **bugs(G_BUGS_B, "beta h0 forgotten; trained to echo"),
    **bugs({"q3": None}, "q3's cell ends with os._exit", name="kills its kernel in q3"),
    "hard-coded public outputs": Variant(
        "blank", {}, hardcode=["q1", "q2", "q3"], why="public outputs returned"),
    "calls the reference": Variant(
        "blank", {}, answers=G_REFERENCE, why="seqlearn.unroll"),
}

GALLERY = {"recurrence": RECURRENCE, "gating": GATING, "attention": ATTENTION,
           "transformer": TRANSFORMER, "gru_to_attention": GRU_TO_ATTENTION}


# ----------------------------------------------------------------------------- building


def _source(cell: Any) -> str:
    return cell.source if isinstance(cell.source, str) else "".join(cell.source)


def answer_cells(nb: Any, tag: str) -> dict[str, list[int]]:
    """Question -> the indices of its code answer cells (tagged ``tag``)."""
    found: dict[str, list[int]] = {}
    question = None
    for index, cell in enumerate(nb.cells):
        if cell.cell_type == "markdown":
            match = PROMPT.match(_source(cell).lstrip())
            if match:
                question = f"q{match.group(1)}"
        elif tag in cell.metadata.get("tags", []) and question:
            found.setdefault(question, []).append(index)
    return found


def _literal(value: Any) -> str:
    """Python source that rebuilds ``value`` (arrays, tensors, SymPy, containers)."""
    import numpy as np
    import sympy
    import torch

    if isinstance(value, torch.Tensor):
        return f"torch.tensor({value.tolist()!r}, dtype={value.dtype})"
    if isinstance(value, np.ndarray):
        return f"np.array({value.tolist()!r}, dtype=np.{value.dtype})"
    if isinstance(value, sympy.Basic):
        return f"sympy.sympify({sympy.srepr(value)!r})"
    if isinstance(value, tuple):
        return "(" + "".join(_literal(v) + ", " for v in value) + ")"
    if isinstance(value, list):
        return "[" + ", ".join(_literal(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k!r}: {_literal(v)}" for k, v in value.items()) + "}"
    return repr(value)


def _key(args: tuple) -> str:
    """What a hard-coded answer looks at: the first numbers of its array arguments."""
    import numpy as np

    parts = []
    for a in args:
        try:
            array = np.asarray(a.detach() if hasattr(a, "detach") else a, dtype=float)
            parts.append(f"{array.shape}{np.round(array.ravel()[:4], 6).tolist()}")
        except (TypeError, ValueError):
            parts.append(type(a).__name__)
    return "|".join(parts)


def hard_coded(question: str, tests_source: str, solutions: dict[str, str],
               imports: list[str]) -> str:
    """An answer cell that returns, for the public tests' inputs, the outputs the model
    answer gives them, and the first of those outputs for any other input."""
    from otter.test_files import ExceptionTestFile

    namespace: dict[str, Any] = {}
    for line in imports:
        exec(line, namespace)
    for source in dict.fromkeys(solutions.values()):
        exec(source, namespace)
    recorded: dict[str, dict[str, Any]] = {}
    test_file = ExceptionTestFile.from_string(tests_source, path=f"{question}.py")
    with checks_module(load_checks(ASSIGNMENTS / "checks.py")):
        for case in test_file.test_cases:
            if case.hidden:
                continue
            function = case.body.test_func
            arguments = {}
            for name in function.__code__.co_varnames[:function.__code__.co_argcount]:
                def recorder(*args, _name=name, **kwargs):
                    result = namespace[_name](*args, **kwargs)
                    recorded.setdefault(_name, {}).setdefault(_key(args), result)
                    return result
                arguments[name] = recorder
            function(**arguments)
    cells = [inspect.getsource(_key)]
    for name, table in recorded.items():
        entries = ",\n    ".join(f"{k!r}: {_literal(v)}" for k, v in table.items())
        cells.append(f"_{name.upper()} = {{\n    {entries},\n}}\n\n\n"
                     f"def {name}(*args, **kwargs):\n"
                     f"    return _{name.upper()}.get(_key(args), "
                     f"next(iter(_{name.upper()}.values())))\n")
    return "\n\n".join(cells)


def build(name: str, variant_name: str, folder: str, out: str) -> str:
    """Write the submission ``variant_name`` of assignment ``name`` to ``out``."""
    from seqlearn_grading.notebook import model_answers

    variant = find(name, variant_name)
    folder_path = Path(folder)
    nb = nbformat.read(folder_path / "student" / f"{name}.ipynb", as_version=4)
    solved = nbformat.read(folder_path / "autograder" / f"{name}.ipynb", as_version=4)
    student_cells = answer_cells(nb, "otter_answer_cell")
    solution_cells = answer_cells(solved, "otter_assign_solution_cell")
    solutions = {q: "\n\n".join(_source(solved.cells[i]) for i in cells
                                if solved.cells[i].cell_type == "code")
                 for q, cells in solution_cells.items()}
    code_answers = {q: [i for i in cells if nb.cells[i].cell_type == "code"]
                    for q, cells in student_cells.items()}
    code_answers = {q: cells for q, cells in code_answers.items() if cells}
    imports, definitions = model_answers(solved)
    tests = {}
    zips = list((folder_path / "autograder").glob("*-autograder_*.zip"))
    with zipfile.ZipFile(zips[0]) as archive:
        for item in archive.namelist():
            if item.startswith("tests/") and item.endswith(".py"):
                tests[Path(item).stem] = archive.read(item).decode()
    new_sources: dict[str, str] = {}
    for question in code_answers:
        if variant.base == "solution":
            new_sources[question] = solutions[question]
    for question in variant.hardcode:
        new_sources[question] = hard_coded(question, tests[question], definitions,
                                           imports)
    for question, code in variant.answers.items():
        if code is None:                             # the model answer, then os._exit
            new_sources[question] = solutions[question] + "\n" + G_KILL
        elif callable(code):                         # made from the model answer
            new_sources[question] = code(solutions[question])
        else:
            new_sources[question] = code
    for question, source in new_sources.items():
        first, *others = code_answers[question]
        nb.cells[first].source = source
        for index in others:
            nb.cells[index].source = ""
    for question, source in reversed(variant.cells):
        position = code_answers[question][-1] + 1
        nb.cells.insert(position, nbformat.v4.new_code_cell(source))
    nb = copy.deepcopy(nb)
    nbformat.write(nb, out)
    return out


def find(name: str, variant_name: str) -> Variant:
    """The submission ``variant_name`` of assignment ``name``: from the gallery, or
    from the attacks on the grading (``attacks.ATTACKS``)."""
    import attacks

    return {**GALLERY[name], **attacks.ATTACKS.get(name, {})}[variant_name]


def expected_scores(variant: Variant, points: dict[str, float],
                    written: set[str]) -> dict[str, float]:
    """Every question's expected score: the variant's, else full (solution) or 0
    (blank)."""
    scores = {}
    for question, possible in points.items():
        if question in variant.expected:
            scores[question] = float(variant.expected[question])
        elif question in written:
            scores[question] = 0.0
        else:
            scores[question] = possible if variant.base == "solution" else 0.0
    return scores
