"""The shape of seqlearn, read from its source with ``ast`` (without importing it).

- Every module has a place in the book's order (:data:`PARTS`): the foundation (checks,
  data, masks, losses, metrics), Parts I-V in the order of the book, then the training
  loops and the book's presentation helpers.
- A module imports only modules of its own place or of earlier ones (an import inside a
  function counts too), and the imports between modules form no circle.
- No model trains itself: outside the training loops (``seqlearn.train``,
  ``seqlearn.warmup``), no module imports them, builds an optimizer or takes one of its
  steps; and no module below the presentation helpers imports a plotting or widget
  library.

Plus the public API contract of the design (:data:`CONTRACT`): code outside the project
calls those names, so each stays importable where the contract says, with its
parameters (these tests import the modules).
"""

from __future__ import annotations

import ast
import importlib
import inspect
from pathlib import Path

import pytest

import seqlearn

ROOT = Path(seqlearn.__file__).parent

FOUNDATION, TRAINING, PRESENTATION = 0, 6, 7
PLACES = {0: "the foundation", 1: "Part I (Recurrence)", 2: "Part II (Gating)",
          3: "Part III (Attention)", 4: "Part IV (Transformers)", 5: "Part V (Memory)",
          6: "the training loops", 7: "the presentation helpers"}

# The place of every top-level module or package of seqlearn. A module sits in the
# earliest part whose chapters need it (an import from an earlier part pulls it down).
PARTS: dict[str, int] = {
    # the foundation: anything may use it
    "validate": FOUNDATION, "seeding": FOUNDATION,
    "data": FOUNDATION, "char_text": FOUNDATION,  # synthetic data; text by character
    "masks": FOUNDATION,  # who may attend to whom
    "losses": FOUNDATION,  # seq2seq's and the Transformer's loss and exact match
    "metrics": FOUNDATION,  # BLEU, edit distance, character error rate
    # Part I: Recurrence (the scan too: recurrent runs its linear recurrences with it)
    "conv": 1, "scan": 1, "recurrent": 1, "bptt": 1,
    # Part II: Gating (unroll: the GRU's own update unrolled into weights; the chapter
    # that reads them as attention is in Part III, but the algebra needs no attention)
    "multiplicative": 2, "gated": 2, "unroll": 2,
    # Part III: Attention (online_softmax: seqlearn.attention re-exports
    # memory_efficient_attention, a name of the contract; positional: the
    # GRU-to-attention steps add positions)
    "scores": 3, "attention": 3, "online_softmax": 3, "positional": 3,
    "seq2seq": 3, "conv_encoder": 3, "decoding": 3,
    "causal": 3, "linear_attention": 3, "mingru": 3,
    # Part IV: Transformers
    "local_attention": 4, "complexity": 4, "table1": 4, "long_range": 4,
    "saturation": 4,
    "layernorm": 4, "transformer_layers": 4, "transformer": 4,
    "language_model": 4, "ngram": 4, "sampling": 4,
    # Part V: Memory
    "associative": 5, "memory": 5, "ntm": 5, "copy_task": 5,
    # the training loops: they import the models, no model imports them
    "train": TRAINING, "warmup": TRAINING,
    # the book's figures and sliders (matplotlib, ipywidgets)
    "plots": PRESENTATION, "widgets": PRESENTATION, "diagrams": PRESENTATION,
}
DISPLAY_LIBRARIES = ("matplotlib", "ipywidgets", "PIL")


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


SOURCES = {module_name(path): path for path in sorted(ROOT.rglob("*.py"))}
TREES = {name: ast.parse(path.read_text(), str(path)) for name, path in SOURCES.items()}


def place(module: str) -> int:
    """The place of ``seqlearn.x`` or ``seqlearn.x.y`` (that of ``x``)."""
    top = module.split(".")[1] if "." in module else None
    return FOUNDATION if top is None else PARTS[top]


def imported(module: str, tree: ast.Module) -> dict[str, int]:
    """Every module ``module`` imports, anywhere in its source, with the line."""
    is_package = SOURCES[module].name == "__init__.py"
    package = module if is_package else module.rpartition(".")[0]
    found: dict[str, int] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                found.setdefault(alias.name, node.lineno)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:  # a relative import
                anchor = (package.rsplit(".", node.level - 1)[0] if node.level > 1
                          else package)
                base = f"{anchor}.{base}" if base else anchor
            found.setdefault(base, node.lineno)
            for alias in node.names:  # "from seqlearn import gated" imports a module
                if f"{base}.{alias.name}" in SOURCES:
                    found.setdefault(f"{base}.{alias.name}", node.lineno)
    return found


IMPORTS = {name: imported(name, tree) for name, tree in TREES.items()}


def internal(module: str) -> dict[str, int]:
    """The seqlearn modules ``module`` imports (not the package ``seqlearn`` itself)."""
    return {name: line for name, line in IMPORTS[module].items()
            if name in SOURCES and name != "seqlearn"}


def test_every_module_has_a_place_in_the_book():
    tops = {name.split(".")[1] for name in SOURCES if "." in name}
    assert not sorted(tops - set(PARTS)), (
        f"modules of seqlearn without a place in the book's order: "
        f"{sorted(tops - set(PARTS))}; add each to PARTS in {Path(__file__).name} (the "
        f"earliest part whose chapters need it)")
    assert not sorted(set(PARTS) - tops), (
        f"PARTS names modules that do not exist: {sorted(set(PARTS) - tops)}")


def test_no_module_imports_a_later_part():
    later = [f"{SOURCES[a].relative_to(ROOT.parent)}:{line} ({PLACES[place(a)]}) "
             f"imports {b} ({PLACES[place(b)]})"
             for a in SOURCES for b, line in internal(a).items() if place(b) > place(a)]
    assert not later, "imports from a later part:\n" + "\n".join(later)


def cycles() -> list[list[str]]:
    """The circles of the import graph: its strongly connected components of more than
    one module, and modules that import themselves (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for nxt in internal(node):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                component.append(member)
                if member == node:
                    break
            if len(component) > 1 or node in internal(node):
                found.append(sorted(component))

    for node in sorted(SOURCES):
        if node not in index:
            visit(node)
    return found


def test_no_import_circle():
    assert not cycles(), f"modules that import each other: {cycles()}"


def test_cycle_finder_finds_a_planted_circle(monkeypatch):
    """The circle test can fail: plant attention -> seq2seq next to seq2seq ->
    attention."""
    planted = {**IMPORTS["seqlearn.attention"], "seqlearn.seq2seq": 1}
    monkeypatch.setitem(IMPORTS, "seqlearn.attention", planted)
    assert ["seqlearn.attention", "seqlearn.seq2seq"] in cycles()


def training_steps(tree: ast.Module) -> list[str]:
    """What in ``tree`` trains: ``torch.optim`` (imported or named), an optimizer's
    ``step()`` (no argument) or ``zero_grad()``."""
    found = []
    for node in ast.walk(tree):
        line = getattr(node, "lineno", 0)
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            names = [node.module or ""] if isinstance(node, ast.ImportFrom) else []
            names += [alias.name for alias in node.names]
            if any(n == "torch.optim" or n.startswith("torch.optim.") or n == "optim"
                   for n in names):
                found.append(f"line {line}: imports torch.optim")
        elif isinstance(node, ast.Attribute) and node.attr == "optim":
            found.append(f"line {line}: uses torch.optim")
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
              and (node.func.attr == "zero_grad"
                   or (node.func.attr == "step" and not node.args
                       and not node.keywords))):
            found.append(f"line {line}: calls .{node.func.attr}()")
    return found


def test_no_model_trains_itself():
    trainers = [name for name in SOURCES if place(name) == TRAINING]
    assert "seqlearn.train" in trainers
    wrong = []
    for name in SOURCES:
        if place(name) == TRAINING:
            continue
        wrong += [f"{name}: imports {b} (line {line})"
                  for b, line in internal(name).items() if b in trainers]
        wrong += [f"{name}: {what}" for what in training_steps(TREES[name])]
    assert not wrong, ("training belongs in seqlearn.train (a model module defines its "
                       "loss; the loop lives there):\n" + "\n".join(wrong))


def test_training_finder_sees_the_loop_of_fit():
    found = training_steps(TREES["seqlearn.train"])
    assert any("torch.optim" in f for f in found)
    assert any(".step()" in f for f in found)
    assert any(".zero_grad()" in f for f in found)


def test_models_never_import_display_libraries():
    wrong = [f"{name}: imports {b} (line {line})"
             for name in SOURCES if place(name) < PRESENTATION
             for b, line in IMPORTS[name].items()
             if b.split(".")[0] in DISPLAY_LIBRARIES]
    assert not wrong, ("plots and sliders live in seqlearn.plots, widgets, diagrams:\n"
                       + "\n".join(wrong))


# ----------------------------------------------------------------- public API contract

# (module, name, parameters) as the design's contract writes them. A parameter named
# "_..." is positional with any name; "=ANY" a default of any value. A callable may add
# parameters after these, each with a default.
CONTRACT = [
    ("seqlearn.recurrent", "ElmanRNN", "input_size, hidden_size, num_layers=1, "
     "nonlinearity='tanh', bias=True, bidirectional=False"),
    ("seqlearn.recurrent", "ElmanRNN.forward", "self, x, h0=None"),
    ("seqlearn.recurrent", "ElmanRNN.from_torch", "m"),
    ("seqlearn.gated", "GRU", "input_size, hidden_size, num_layers=1, bias=True, "
     "bidirectional=False, reset='after'"),
    ("seqlearn.gated", "GRU.from_torch", "m"),
    ("seqlearn.gated", "LSTM", "input_size, hidden_size, num_layers=1, bias=True, "
     "bidirectional=False, peephole=False"),
    ("seqlearn.gated", "LSTM.forward", "self, x, _state=None"),
    ("seqlearn.gated", "LSTM.from_torch", "m"),
    ("seqlearn.bptt", "rnn_forward", "x, h0, params"),
    ("seqlearn.bptt", "rnn_backward", "dy, cache"),
    ("seqlearn.bptt", "lstm_forward", "x, h0, c0, params"),
    ("seqlearn.bptt", "lstm_backward", "dh, cache"),
    ("seqlearn.attention", "attention",
     "q, k, v, *, mask=None, causal=False, scale=None"),
    ("seqlearn.attention", "MultiHeadAttention", "d_model, num_heads, bias=True"),
    ("seqlearn.attention", "MultiHeadAttention.forward",
     "self, query, key, value, *, mask=None, causal=False"),
    ("seqlearn.attention", "MultiHeadAttention.from_torch", "m"),
    ("seqlearn.attention", "memory_efficient_attention",
     "q, k, v, *, mask=None, causal=False, scale=None, block_size=128"),
    ("seqlearn.transformer", "sinusoidal_positional_encoding", "T, d"),
    ("seqlearn.unroll", "gru_implied_weights", "u"),
    ("seqlearn.scan", "linear_scan", "a, b, h0=None, method='sequential'"),
    ("seqlearn.data", "Vocab", "tokens, *, specials=('<pad>', '<bos>', '<eos>')"),
    ("seqlearn.data", "Vocab.encode", "self, _tokens"),
    ("seqlearn.data", "Vocab.decode", "self, ids"),
    ("seqlearn.data", "date_pairs", "n, rng"),
    ("seqlearn.data", "stories", "n, rng, *, task=ANY"),
    ("seqlearn.seq2seq", "Seq2Seq",
     "src_vocab, tgt_vocab, hidden, *, score=None, bidirectional=True"),
    ("seqlearn.seq2seq", "Seq2Seq.forward", "self, src, src_lengths, tgt_in"),
    ("seqlearn.seq2seq", "Seq2Seq.greedy_decode", "self, src, src_lengths, max_len"),
    ("seqlearn.transformer", "LayerNorm", "d, eps=1e-5"),
    ("seqlearn.transformer", "EncoderLayer",
     "d_model, num_heads, d_ff, *, norm_first=False"),
    ("seqlearn.transformer", "EncoderLayer.from_torch", "m"),
    ("seqlearn.transformer", "EncoderLayer.forward", "self, x, *, mask=None"),
    ("seqlearn.transformer", "DecoderLayer",
     "d_model, num_heads, d_ff, *, norm_first=False"),
    ("seqlearn.transformer", "DecoderLayer.from_torch", "m"),
    ("seqlearn.transformer", "DecoderLayer.forward",
     "self, y, memory, *, memory_mask=None"),
    ("seqlearn.transformer", "Transformer", "src_vocab, tgt_vocab, d_model, num_heads, "
     "num_layers, d_ff, *, norm_first=False, max_len=512"),
    ("seqlearn.transformer", "Transformer.forward",
     "self, src, tgt_in, *, src_mask=None"),
    ("seqlearn.transformer", "Transformer.greedy_decode",
     "self, src, max_len, bos, eos, *, src_mask=None"),
    ("seqlearn.transformer", "Transformer.attention_maps", "self"),
    ("seqlearn.memory", "MemN2N",
     "vocab_size, d, hops, *, max_sentences=50, max_words=12"),
    ("seqlearn.memory", "MemN2N.forward", "self, story, query"),
]
ANY = object()


def contract_parameters(spec: str) -> list[tuple[str, inspect._ParameterKind, object]]:
    """``(name, kind, default)`` of each parameter of ``spec``
    (:data:`inspect.Parameter.empty` when it has none)."""
    args = ast.parse(f"def f({spec}): pass").body[0].args
    positional = args.posonlyargs + args.args
    defaults = [inspect.Parameter.empty] * (len(positional) - len(args.defaults))
    defaults += args.defaults
    value = (lambda d: d if d is inspect.Parameter.empty else
             ANY if isinstance(d, ast.Name) and d.id == "ANY" else ast.literal_eval(d))
    out = [(a.arg, inspect.Parameter.POSITIONAL_OR_KEYWORD, value(d))
           for a, d in zip(positional, defaults)]
    out += [(a.arg, inspect.Parameter.KEYWORD_ONLY,
             inspect.Parameter.empty if d is None else value(d))
            for a, d in zip(args.kwonlyargs, args.kw_defaults)]
    return out


def mismatches(actual: inspect.Signature, spec: str) -> list[str]:
    params = list(actual.parameters.values())
    wanted = contract_parameters(spec)
    problems = []
    for i, (name, kind, default) in enumerate(wanted):
        if i >= len(params):
            problems.append(f"no parameter {name}")
            continue
        p = params[i]
        if not name.startswith("_") and p.name != name:
            problems.append(f"parameter {i} is {p.name}, the contract says {name}")
        positional = (inspect.Parameter.POSITIONAL_ONLY,
                      inspect.Parameter.POSITIONAL_OR_KEYWORD)
        if (p.kind in positional) != (kind in positional):
            problems.append(f"{p.name} is {p.kind.description}, the contract says "
                            f"{kind.description}")
        if default is not ANY and p.default != default:
            problems.append(f"{p.name} defaults to {p.default!r}, the contract says "
                            f"{default!r}")
    for p in params[len(wanted):]:
        if (p.default is inspect.Parameter.empty
                and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)):
            problems.append(f"{p.name} is added without a default")
    return problems


@pytest.mark.parametrize("module, name, spec", CONTRACT,
                         ids=[f"{m}.{n}" for m, n, _ in CONTRACT])
def test_contract_name_is_importable_with_its_parameters(module, name, spec):
    obj = importlib.import_module(module)
    for attribute in name.split("."):
        assert hasattr(obj, attribute), f"{module}.{name} is not importable"
        obj = getattr(obj, attribute)
    assert callable(obj)
    assert not mismatches(inspect.signature(obj), spec), mismatches(
        inspect.signature(obj), spec)


def test_contract_checker_sees_a_changed_signature():
    def changed(self, x, h0=0, *, other): ...  # noqa: E704
    def renamed(self, inputs, h0=None, extra=1): ...  # noqa: E704
    assert mismatches(inspect.signature(changed), "self, x, h0=None") == [
        "h0 defaults to 0, the contract says None", "other is added without a default"]
    assert mismatches(inspect.signature(renamed), "self, x, h0=None") == [
        "parameter 1 is inputs, the contract says x"]
    assert mismatches(inspect.signature(renamed), "self, _x, *, h0=None") == [
        "h0 is positional or keyword, the contract says keyword-only"]


def test_contract_vocab_has_its_special_ids():
    from seqlearn.data import Vocab

    vocab = Vocab(["a", "b"])
    assert len(vocab) == 5 and (vocab.pad, vocab.bos, vocab.eos) == (0, 1, 2)
    assert vocab.decode(vocab.encode("ab")) == "ab"
