"""Real text for character-level language models: Python's own language reference.

Chapter: *Language models on real text* (``chapters/language_model.ipynb``).

Every Python installation carries the text of its language reference in the standard
library module :mod:`pydoc_data.topics` (the pages ``help("for")`` prints): 79 topics,
some 465,000 characters of English prose with code examples, grammar rules and tables.
Each release edits some topics, so the package ships a frozen copy, the one of CPython
3.11.7 (``seqlearn/corpus/``, with its provenance and the Python Software Foundation
licence): every Python reads the same characters, and :func:`text_fingerprint` of the
joined split is :data:`REFERENCE_FINGERPRINT` everywhere.

* :func:`reference_topics` -- the topics, by name; :func:`split_reference_text` -- a
  deterministic split into training and held-out text by whole topics.
* :class:`CharVocab` -- characters to ids and back, no special tokens.
* :func:`random_windows` -- teacher-forcing batches ``(x, y)``, ``y`` being ``x``
  shifted by one character; :func:`consecutive_windows` -- the same over a whole text,
  for evaluation.
* :func:`line_position`, :func:`inside_quotes`, :func:`indentation` -- per-character
  features of the text, for looking at what a model's units track.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import zlib
from importlib import resources
from collections.abc import Mapping
from typing import NamedTuple

import numpy as np
import torch
from torch import Tensor

from seqlearn.validate import check_int, check_shape, check_tensor

__all__ = ["REFERENCE_FINGERPRINT", "reference_topics", "split_reference_text", "TextSplit", "text_fingerprint",
           "CharVocab", "random_windows", "consecutive_windows", "line_position",
           "inside_quotes", "indentation"]


#: ``text_fingerprint(split.train + split.held_out)`` of the default split of the frozen
#: topics: the same on every Python.
REFERENCE_FINGERPRINT = "219be7960ea7"
_CORPUS = "python_reference_topics.json.gz"


def reference_topics() -> dict[str, str]:
    """The topics of Python's language reference, by name: the frozen copy of CPython
    3.11.7's :mod:`pydoc_data.topics` that ships in ``seqlearn/corpus/``.

    Each value is the plain text ``help(name)`` shows, ending in a newline. The running
    Python's own module is not read: its text differs from release to release.
    """
    raw = resources.files("seqlearn").joinpath("corpus", _CORPUS).read_bytes()
    topics = json.loads(gzip.decompress(raw).decode("utf-8"))
    return {name: topics[name] for name in sorted(topics)}


class TextSplit(NamedTuple):
    """Training and held-out text, and the names of the topics in each."""

    train: str
    held_out: str
    train_topics: tuple[str, ...]
    held_out_topics: tuple[str, ...]


def _check_topics(topics: object) -> dict[str, str]:
    if not isinstance(topics, Mapping):
        raise TypeError(f"topics must be a mapping name -> text, got "
                        f"{type(topics).__name__}")
    for name, text in topics.items():
        if not isinstance(name, str) or not isinstance(text, str):
            raise TypeError(f"topics must map strings to strings, got {name!r}: "
                            f"{type(text).__name__}")
    return dict(topics)


def split_reference_text(topics: Mapping[str, str] | None = None, *, every: int = 10
                         ) -> TextSplit:
    r"""A deterministic split of the topics into training and held-out text.

    A topic is held out when the CRC-32 of its name is divisible by ``every``:
    :math:`\mathrm{crc32}(\text{name}) \bmod \text{every} = 0` (about one topic in
    ``every``; which topics does not depend on the order of the others, nor on topics
    that another Python release adds or removes). The texts of each part are joined in
    name order with one ``"\n"`` between topics, so a blank line separates them.
    ``topics`` defaults to :func:`reference_topics`.
    """
    topics = reference_topics() if topics is None else _check_topics(topics)
    check_int(every, "every", minimum=2)
    held = [n for n in sorted(topics) if zlib.crc32(n.encode("utf-8")) % every == 0]
    train = [n for n in sorted(topics) if n not in held]
    if not held or not train:
        raise ValueError(f"the split must leave text on both sides, got {len(train)} "
                         f"training and {len(held)} held-out topics of {len(topics)}")
    return TextSplit("\n".join(topics[n] for n in train),
                     "\n".join(topics[n] for n in held), tuple(train), tuple(held))


def text_fingerprint(text: str) -> str:
    """The first 12 hex digits of the SHA-256 of ``text`` (UTF-8): which text."""
    if not isinstance(text, str):
        raise TypeError(f"text must be a str, got {type(text).__name__}")
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:12]


class CharVocab:
    """A bijection between the characters of a text and the ids ``0 .. len(v) - 1``.

    Ids follow the sorted order of the characters (so ``"\\n"`` and ``" "`` come first).
    Unlike :class:`seqlearn.data.Vocab` there are no special tokens: a language model of
    running text needs no padding and no sequence markers. Build it from all the text
    the model will read (training and held-out), so that every character has an id.
    """

    def __init__(self, text: str) -> None:
        if not isinstance(text, str):
            raise TypeError(f"text must be a str, got {type(text).__name__}")
        if not text:
            raise ValueError("text must hold at least one character, got ''")
        self.itos: tuple[str, ...] = tuple(sorted(set(text)))
        self.stoi: dict[str, int] = {c: i for i, c in enumerate(self.itos)}

    def __len__(self) -> int:
        return len(self.itos)

    def __repr__(self) -> str:
        return f"CharVocab({len(self.itos)} characters)"

    def __contains__(self, char: object) -> bool:
        return char in self.stoi

    def encode(self, text: str) -> Tensor:
        """The ids of the characters of ``text``: a LongTensor ``(len(text),)``."""
        if not isinstance(text, str):
            raise TypeError(f"text must be a str, got {type(text).__name__}")
        missing = sorted(set(text) - set(self.stoi))
        if missing:
            raise ValueError(f"text holds characters that are not in the vocabulary: "
                             f"{missing}")
        return torch.tensor([self.stoi[c] for c in text], dtype=torch.long)

    def decode(self, ids: Tensor | np.ndarray | list[int]) -> str:
        """The string of the ids ``ids``, one-dimensional, each in
        ``[0, len(self))``."""
        if not isinstance(ids, (Tensor, np.ndarray, list, tuple)):
            raise TypeError(f"ids must be a tensor, array or list of ids, got "
                            f"{type(ids).__name__}")
        try:
            ids = torch.as_tensor(np.asarray(ids) if isinstance(ids, (list, tuple))
                                  else ids)
        except (TypeError, ValueError, RuntimeError) as error:
            raise TypeError(f"ids must hold integers ({error})") from None
        if ids.dtype in (torch.uint16, torch.uint32, torch.uint64):  # 2**63 and up
            raise TypeError(f"ids must be int64 (or a smaller integer type), got dtype "
                            f"{ids.dtype}")
        if ids.is_floating_point() or ids.dtype == torch.bool or ids.is_complex():
            raise TypeError(f"ids must hold integers, got dtype {ids.dtype}")
        if ids.dim() != 1:
            raise ValueError(f"ids must be one-dimensional, got shape "
                             f"{tuple(ids.shape)}")
        if ids.numel() and (int(ids.min()) < 0 or int(ids.max()) >= len(self.itos)):
            raise ValueError(f"ids must lie in [0, {len(self.itos)}), got min "
                             f"{int(ids.min())} and max {int(ids.max())}")
        return "".join(self.itos[i] for i in ids.tolist())


def _check_ids(ids: object, name: str = "ids") -> int:
    """A one-dimensional LongTensor of character ids; returns its length."""
    check_tensor(ids, name, floating=False)
    if ids.dtype != torch.long:
        raise TypeError(f"{name} must be a LongTensor of character ids, got dtype "
                        f"{ids.dtype}")
    N = check_shape(ids, name, "N")["N"]
    if N and int(ids.min()) < 0:
        raise ValueError(f"{name} must hold ids >= 0, got {int(ids.min())}")
    return N


def random_windows(ids: Tensor, batch_size: int, length: int,
                   generator: torch.Generator | None = None) -> tuple[Tensor, Tensor]:
    """A teacher-forcing batch: ``batch_size`` random windows of ``length + 1`` chars.

    Window ``b`` starts at ``s_b``, drawn uniformly from ``0 .. N - length - 1``;
    returns ``x (B, length)`` = ``ids[s_b : s_b + length]`` and ``y (B, length)`` =
    ``ids[s_b + 1 : s_b + length + 1]``: ``y[b, t]`` is the character after ``x[b, t]``.
    """
    N = _check_ids(ids)
    check_int(batch_size, "batch_size")
    check_int(length, "length")
    if N < length + 1:
        raise ValueError(f"ids must hold at least length + 1 = {length + 1} "
                         f"characters, got {N}")
    if generator is not None and not isinstance(generator, torch.Generator):
        raise TypeError(f"generator must be a torch.Generator or None, got "
                        f"{type(generator).__name__}")
    starts = torch.randint(0, N - length, (batch_size,), generator=generator)  # (B,)
    index = starts[:, None] + torch.arange(length + 1)  # (B, length + 1)
    window = ids[index]
    return window[:, :-1], window[:, 1:]


def consecutive_windows(ids: Tensor, length: int) -> tuple[Tensor, Tensor]:
    """The whole text cut into consecutive windows: every character after the first is a
    target exactly once.

    With ``N`` characters, ``W = ceil((N - 1) / length)`` windows; window ``w`` reads
    ``x[w] = ids[w L : w L + L]`` and predicts ``y[w] = ids[w L + 1 : w L + L + 1]``
    (``L = length``). The last window is shorter; its missing places hold ``-1`` in
    ``y`` (the ``ignore_index`` of :func:`seqlearn.language_model.bits_per_character`)
    and ``0`` in ``x``. Returns ``x, y``, each ``(W, length)``.
    """
    N = _check_ids(ids)
    check_int(length, "length")
    if N < 2:
        raise ValueError(f"ids must hold at least 2 characters, got {N}")
    W = -(-(N - 1) // length)  # ceil((N - 1) / L)
    x = torch.zeros(W * length, dtype=torch.long)
    y = torch.full((W * length,), -1, dtype=torch.long)
    x[: N - 1] = ids[:-1]
    y[: N - 1] = ids[1:]
    return x.view(W, length), y.view(W, length)  # (W, L) each


def _check_text(text: object) -> str:
    if not isinstance(text, str):
        raise TypeError(f"text must be a str, got {type(text).__name__}")
    return text


def line_position(text: str) -> np.ndarray:
    """For each character, how many characters precede it on its line (0 for the first).

    A newline ends its line: it gets the length of the line it ends.
    """
    out = np.zeros(len(_check_text(text)), dtype=np.int64)
    column = 0
    for t, char in enumerate(text):
        out[t] = column
        column = 0 if char == "\n" else column + 1
    return out


def inside_quotes(text: str) -> np.ndarray:
    """For each character, whether the reader is inside double quotes *after* reading
    it.

    An opening ``"`` gets 1, the characters up to the closing ``"`` get 1, the closing
    quote gets 0 (a model reading left to right knows a span has ended only when it
    reads the closing quote). Quotes pair up within a paragraph: a blank line closes an
    unclosed quote.
    """
    out = np.zeros(len(_check_text(text)), dtype=np.int64)
    inside = False
    for t, char in enumerate(text):
        if char == '"':
            inside = not inside
        elif char == "\n" and t > 0 and text[t - 1] == "\n":
            inside = False
        out[t] = int(inside)
    return out


def indentation(text: str) -> np.ndarray:
    """For each character, the number of spaces that begin its line (0 on a blank line).

    A newline belongs to the line it ends.
    """
    out = np.zeros(len(_check_text(text)), dtype=np.int64)
    start = 0
    for line in text.split("\n"):
        width = len(line) - len(line.lstrip(" ")) if line.strip(" ") else 0
        out[start: start + len(line) + 1] = width  # the line and its newline
        start += len(line) + 1
    return out
