"""Messages between the grader and its sandboxes; a safe encoding of what they send.

A message is an 8-byte length followed by that many bytes. The grader sends pickles: it
trusts what it sends. A sandbox runs a student's code, so what it sends back is never
unpickled: :func:`encode` turns a value into JSON plus raw buffers, and :func:`decode`
rebuilds only plain data from them: ``None``, numbers, strings, bytes, lists, tuples,
dicts, NumPy arrays and scalars of numeric dtypes, torch tensors and SymPy expressions.
Anything else arrives as an :class:`Unreadable` that names the type the student's code
returned.
"""

from __future__ import annotations

import json
import math
import pickle
import select
import socket
import struct
import time
from typing import Any

HEADER = struct.Struct(">Q")
MAX_MESSAGE = 1 << 30            # 1 GiB: larger replies are refused, not read
MAX_DEPTH = 64
NUMERIC_KINDS = "biufc"          # bool, signed and unsigned integers, floats, complex


class WireError(Exception):
    """The other side closed the connection, sent too much, or sent something
    malformed."""


class Timeout(Exception):
    """No reply within the time allowed."""


class Unreadable:
    """What a student's function returned when it is not plain data (a module, a
    closure...)."""

    def __init__(self, type_name: str):
        self.type_name = type_name

    def __repr__(self) -> str:
        return f"<a {self.type_name}>"


# ----------------------------------------------------------------------------- framing


def send(sock: socket.socket, payload: bytes) -> None:
    sock.sendall(HEADER.pack(len(payload)) + payload)


def _recv_exactly(sock: socket.socket, n: int, deadline: float | None) -> bytes:
    chunks, got = [], 0
    while got < n:
        if deadline is not None:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([sock], [], [], left)[0]:
                raise Timeout()
        chunk = sock.recv(min(n - got, 1 << 20))
        if not chunk:
            raise WireError("connection closed")
        chunks.append(chunk)
        got += len(chunk)
    return b"".join(chunks)


def receive(sock: socket.socket, timeout: float | None = None) -> bytes:
    """One message; ``Timeout`` when none has arrived completely within ``timeout``
    seconds."""
    deadline = None if timeout is None else time.monotonic() + timeout
    (size,) = HEADER.unpack(_recv_exactly(sock, HEADER.size, deadline))
    if size > MAX_MESSAGE:
        raise WireError(f"a message of {size} bytes is too large")
    return _recv_exactly(sock, size, deadline)


def send_pickle(sock: socket.socket, value: Any) -> None:
    send(sock, pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL))


def receive_pickle(sock: socket.socket) -> Any:
    """Only the sandbox uses this, for what the grader sends it."""
    return pickle.loads(receive(sock))


# ----------------------------------------------------------------------------- encoding


def encode(value: Any) -> bytes:
    """``value`` as a JSON tree and its buffers (runs in the sandbox)."""
    blobs: list[bytes] = []
    tree = _encode(value, blobs, 0)
    header = json.dumps({"tree": tree, "blobs": [len(b) for b in blobs]}).encode()
    return struct.pack(">I", len(header)) + header + b"".join(blobs)


def _blob(data: bytes, blobs: list[bytes]) -> int:
    blobs.append(bytes(data))
    return len(blobs) - 1


def _encode(value: Any, blobs: list[bytes], depth: int) -> Any:
    if depth > MAX_DEPTH:
        return {"$x": "value nested too deeply"}
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, int):
        return {"$i": str(value)}
    if isinstance(value, float):
        return {"$f": repr(value)}
    if isinstance(value, complex):
        return {"$c": [repr(value.real), repr(value.imag)]}
    if isinstance(value, (bytes, bytearray)):
        return {"$b": _blob(value, blobs)}
    if isinstance(value, tuple):
        return {"$t": [_encode(v, blobs, depth + 1) for v in value]}
    if isinstance(value, list):
        return {"$l": [_encode(v, blobs, depth + 1) for v in value]}
    if isinstance(value, dict):
        return {"$d": [[_encode(k, blobs, depth + 1), _encode(v, blobs, depth + 1)]
                       for k, v in value.items()]}
    module = type(value).__module__.split(".")[0]
    if module == "numpy":
        return _encode_numpy(value, blobs)
    if module == "torch":
        return _encode_torch(value, blobs)
    if module == "sympy":
        return _encode_sympy(value, blobs, depth)
    return {"$x": _type_name(value)}


def _type_name(value: Any) -> str:
    kind = type(value)
    return kind.__name__ if kind.__module__ == "builtins" else \
        f"{kind.__module__}.{kind.__qualname__}"


def _encode_numpy(value: Any, blobs: list[bytes]) -> Any:
    import numpy as np

    if isinstance(value, np.ndarray) and value.dtype.kind in NUMERIC_KINDS \
            and value.dtype.fields is None:
        array = np.ascontiguousarray(value)
        data = _blob(array.tobytes(), blobs)
        return {"$a": [array.dtype.str, list(array.shape), data]}
    if isinstance(value, np.generic) and value.dtype.kind in NUMERIC_KINDS:
        return {"$s": [value.dtype.str, _blob(value.tobytes(), blobs)]}
    return {"$x": _type_name(value)}


def _encode_torch(value: Any, blobs: list[bytes]) -> Any:
    import torch

    if not isinstance(value, torch.Tensor):
        if isinstance(value, torch.dtype):
            return {"$dt": str(value).removeprefix("torch.")}
        return {"$x": _type_name(value)}
    tensor = value.detach().cpu()
    if tensor.layout != torch.strided:
        tensor = tensor.to_dense()
    dtype = str(tensor.dtype).removeprefix("torch.")
    if tensor.dtype in (torch.bfloat16,):
        tensor = tensor.float()
    try:
        array = tensor.contiguous().numpy()
    except (TypeError, RuntimeError):
        return {"$x": f"torch tensor of dtype {dtype}"}
    data = _blob(array.tobytes(), blobs)
    return {"$tt": [dtype, array.dtype.str, list(array.shape), data]}


def _encode_sympy(value: Any, blobs: list[bytes], depth: int) -> Any:
    import sympy

    if not isinstance(value, sympy.Basic):
        return {"$x": _type_name(value)}
    if isinstance(value, sympy.Symbol):
        assumptions = {k: v for k, v in value.assumptions0.items()
                       if isinstance(v, bool)}
        return {"$sym": ["Symbol", value.name, assumptions]}
    if isinstance(value, sympy.Integer):
        return {"$sym": ["Integer", str(int(value))]}
    if isinstance(value, sympy.Rational):
        return {"$sym": ["Rational", str(value.p), str(value.q)]}
    if isinstance(value, sympy.Float):
        return {"$sym": ["Float", str(value), int(value._prec)]}
    name = type(value).__name__
    if getattr(sympy.S, name, None) is value:
        return {"$sym": ["S", name]}
    if not value.args:
        return {"$x": f"sympy {name}"}
    return {"$sym": ["F", name, [_encode(a, blobs, depth + 1) for a in value.args]]}


# ----------------------------------------------------------------------------- decoding


def decode(payload: bytes) -> Any:
    """Rebuild what :func:`encode` wrote; ``WireError`` if it is malformed (runs in the
    grader)."""
    try:
        (size,) = struct.unpack(">I", payload[:4])
        header = json.loads(payload[4:4 + size])
        lengths = header["blobs"]
        if not isinstance(lengths, list) or not all(isinstance(n, int) and n >= 0
                                                    for n in lengths):
            raise WireError("bad buffer lengths")
        blobs, offset = [], 4 + size
        for n in lengths:
            blobs.append(payload[offset:offset + n])
            offset += n
        if offset != len(payload):
            raise WireError("buffers do not match their lengths")
        return _decode(header["tree"], blobs, 0)
    except WireError:
        raise
    except (ValueError, KeyError, TypeError, IndexError, struct.error, RecursionError,
            OverflowError, AttributeError) as error:
        raise WireError(f"malformed reply ({type(error).__name__}: {error})") from None


def _get_blob(blobs: list[bytes], index: Any) -> bytes:
    if not isinstance(index, int) or not 0 <= index < len(blobs):
        raise WireError("bad buffer index")
    return blobs[index]


def _decode(tree: Any, blobs: list[bytes], depth: int) -> Any:
    if depth > MAX_DEPTH + 2:
        raise WireError("nested too deeply")
    if tree is None or isinstance(tree, (bool, str)):
        return tree
    if not isinstance(tree, dict) or len(tree) != 1:
        raise WireError("bad node")
    (tag, body), = tree.items()
    if tag == "$i":
        return _integer(body)
    if tag == "$f":
        return float(body)
    if tag == "$c":
        return complex(float(body[0]), float(body[1]))
    if tag == "$b":
        return _get_blob(blobs, body)
    if tag in ("$t", "$l"):
        if not isinstance(body, list):
            raise WireError("bad sequence")
        items = [_decode(v, blobs, depth + 1) for v in body]
        return tuple(items) if tag == "$t" else items
    if tag == "$d":
        result = {}
        for pair in body:
            key, value = (_decode(v, blobs, depth + 1) for v in pair)
            if not _hashable(key):
                raise WireError("bad dict key")
            result[key] = value
        return result
    if tag == "$a":
        return _array(body[0], body[1], _get_blob(blobs, body[2]))
    if tag == "$s":
        return _array(body[0], [], _get_blob(blobs, body[1]))[()]
    if tag == "$tt":
        return _tensor(body, blobs)
    if tag == "$dt":
        return _torch_dtype(body)
    if tag == "$sym":
        return _sympy(body, blobs, depth)
    if tag == "$x":
        return Unreadable(str(body)[:200])
    raise WireError(f"unknown node {tag!r}")


def _integer(text: Any) -> int:
    if not isinstance(text, str) or len(text) > 5000:
        raise WireError("bad integer")
    return int(text)


def _hashable(key: Any) -> bool:
    if key is None or isinstance(key, (bool, int, float, complex, str, bytes)):
        return True
    return isinstance(key, tuple) and all(_hashable(k) for k in key)


def _array(dtype: Any, shape: Any, data: bytes) -> Any:
    import numpy as np

    if not isinstance(dtype, str) or len(dtype) > 8:
        raise WireError("bad dtype")
    kind = np.dtype(dtype)
    if kind.kind not in NUMERIC_KINDS or kind.fields is not None or \
            kind.subdtype is not None:
        raise WireError(f"dtype {dtype} is not numeric")
    if not isinstance(shape, list) or len(shape) > 32 or \
            not all(isinstance(n, int) and n >= 0 for n in shape):
        raise WireError("bad shape")
    if math.prod(shape) * kind.itemsize != len(data):
        raise WireError("the data do not fill the shape")
    return np.frombuffer(data, dtype=kind).reshape(shape).copy()


def _torch_dtype(name: Any) -> Any:
    import torch

    known = isinstance(name, str) and name.isidentifier()
    dtype = getattr(torch, name, None) if known else None
    if not isinstance(dtype, torch.dtype):
        raise WireError(f"unknown torch dtype {name!r}")
    return dtype


def _tensor(body: Any, blobs: list[bytes]) -> Any:
    import torch

    dtype, array_dtype, shape, index = body
    array = _array(array_dtype, shape, _get_blob(blobs, index))
    return torch.from_numpy(array).to(_torch_dtype(dtype))


SYMPY_SINGLETONS = {"Pi", "Exp1", "ImaginaryUnit", "Infinity", "NegativeInfinity",
                    "ComplexInfinity", "NaN", "Zero", "One", "NegativeOne", "Half",
                    "EulerGamma", "GoldenRatio", "Catalan", "true", "false", "EmptySet"}


def _sympy(body: Any, blobs: list[bytes], depth: int) -> Any:
    import sympy

    kind = body[0]
    if kind == "Symbol":
        name, assumptions = body[1], body[2]
        if not isinstance(name, str) or not isinstance(assumptions, dict) or \
                not all(isinstance(k, str) and k.isidentifier() and isinstance(v, bool)
                        for k, v in assumptions.items()):
            raise WireError("bad symbol")
        return sympy.Symbol(name, **assumptions)
    if kind == "Integer":
        return sympy.Integer(_integer(body[1]))
    if kind == "Rational":
        return sympy.Rational(_integer(body[1]), _integer(body[2]))
    if kind == "Float":
        return sympy.Float(str(body[1]), precision=int(body[2]))
    if kind == "S":
        if body[1] not in SYMPY_SINGLETONS:
            raise WireError(f"unknown constant {body[1]!r}")
        return getattr(sympy.S, body[1])
    if kind == "F":
        name = body[1]
        known = isinstance(name, str) and name.isidentifier()
        cls = getattr(sympy, name, None) if known else None
        if not (isinstance(cls, type) and issubclass(cls, sympy.Basic)):
            return Unreadable(f"sympy {name}")
        args = [_decode(a, blobs, depth + 1) for a in body[2]]
        if not all(isinstance(a, sympy.Basic) for a in args):
            raise WireError("bad sympy arguments")
        try:                           # unevaluated: 10**(10**9) is not computed here
            return cls(*args, evaluate=False)
        except TypeError:
            return cls(*args)
    raise WireError(f"unknown sympy node {kind!r}")
