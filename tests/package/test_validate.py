"""seqlearn.validate: each check returns what it promises and names the argument,
expected and actual in its error; properties at random sizes."""

import numpy as np
import pytest
import torch
from hypothesis import given, strategies as st

from properties import covers, not_bools, not_reals, numpy_of, randn, refuses, seeds
from seqlearn import validate as v
from seqlearn.validate import (check_finite, check_floating, check_same_dtype,
                               check_shape)


def test_check_shape_returns_named_sizes():
    assert check_shape(torch.zeros(2, 3, 4), "x", "B T D") == {"B": 2, "T": 3, "D": 4}


def test_check_shape_names_expected_and_actual():
    with pytest.raises(ValueError, match=r"x must have shape \(B, T, D=4\), got \(2, 3, 5\)"):
        check_shape(torch.zeros(2, 3, 5), "x", "B T D", sizes={"D": 4})
    with pytest.raises(ValueError, match=r"got \(2, 3\)"):
        check_shape(np.zeros((2, 3)), "x", "B T D")


def test_check_shape_binds_sizes_across_arguments():
    bound: dict[str, int] = {}
    check_shape(torch.zeros(2, 3, 4), "x", "B T D", bound=bound)
    check_shape(torch.zeros(2, 7), "h0", "B H", bound=bound)
    with pytest.raises(ValueError, match=r"h0 must have shape \(B=2, H=7\), got \(5, 7\)"):
        check_shape(torch.zeros(5, 7), "h0", "B H", bound=bound)


def test_check_shape_binds_leading_dimensions():
    lead: dict = {}
    check_shape(torch.zeros(2, 3, 4, 5), "q", "... T d", bound=lead)
    check_shape(torch.zeros(2, 3, 7, 5), "k", "... T2 d", bound=lead)
    with pytest.raises(ValueError, match=r"k must have the leading \(batch\) dimensions \(2, 3\)"):
        check_shape(torch.zeros(2, 4, 7, 5), "k", "... T2 d", bound=lead)
    with pytest.raises(ValueError, match=r"d=5"):
        check_shape(torch.zeros(2, 3, 7, 6), "k", "... T2 d", bound=lead)


def test_check_shape_variadic_batch():
    found = check_shape(torch.zeros(2, 3, 4, 5), "a", "... T H")
    assert found == {"T": 4, "H": 5, "...": (2, 3)}
    assert check_shape(torch.zeros(4, 5), "a", "... T H")["..."] == ()
    with pytest.raises(ValueError):
        check_shape(torch.zeros(5), "a", "... T H")


def test_check_shape_rejects_non_arrays():
    with pytest.raises(TypeError, match="x must be a tensor or array, got list"):
        check_shape([1, 2], "x", "T")


def test_dtype_checks():
    check_floating(torch.zeros(2), "x")
    check_floating(np.zeros(2), "x")
    with pytest.raises(TypeError, match="floating-point tensor, got dtype torch.int64"):
        check_floating(torch.zeros(2, dtype=torch.long), "x")
    with pytest.raises(TypeError, match="floating-point array"):
        check_floating(np.zeros(2, dtype=int), "x")
    with pytest.raises(TypeError):
        check_floating([0.0], "x")
    with pytest.raises(TypeError, match="same dtype"):
        check_same_dtype("a", torch.zeros(1), "b", torch.zeros(1, dtype=torch.float64))


def test_check_finite():
    check_finite(torch.ones(3), "x")
    with pytest.raises(ValueError, match="NaN or infinity"):
        check_finite(torch.tensor([1.0, float("nan")]), "x")
    with pytest.raises(ValueError):
        check_finite(np.array([np.inf]), "x")


# ---------------------------------------------- properties at random sizes (hypothesis)


shapes = st.lists(st.integers(0, 4), min_size=1, max_size=4)


@covers("seqlearn.validate.check_shape", "seqlearn.validate.check_nonempty")
@given(shape=shapes, extra=st.integers(1, 3))
def test_check_shape_binds_names_and_repeated_sizes(shape, extra):
    x = torch.zeros(*shape)
    spec = " ".join(f"d{i}" for i in range(len(shape)))
    assert v.check_shape(x, "x", spec) == {f"d{i}": s for i, s in enumerate(shape)}
    assert v.check_shape(x, "x", "... " + spec)["..."] == ()
    refuses(v.check_shape, x, "x", spec + " extra")
    refuses(v.check_shape, x.tolist(), "x", spec)
    square = torch.zeros(shape[0], shape[0] + extra)
    refuses(v.check_shape, square, "x", "H H")
    assert v.check_shape(torch.zeros(shape[0], shape[0]), "x", "H H") == {"H": shape[0]}
    if 0 in shape:
        refuses(v.check_nonempty, x, "x", spec, spec)
    else:
        assert v.check_nonempty(x, "x", spec, spec)


@covers("seqlearn.validate.check_floating", "seqlearn.validate.check_tensor",
        "seqlearn.validate.check_same_dtype", "seqlearn.validate.check_finite")
@given(seed=seeds, bad=st.sampled_from([float("nan"), float("inf")]))
def test_dtype_type_and_finiteness_checks(seed, bad):
    x = randn(seed, 3)
    v.check_floating(x, "x")
    v.check_floating(numpy_of(x), "x")
    assert v.check_tensor(x, "x") is x
    refuses(v.check_tensor, numpy_of(x), "x")
    refuses(v.check_tensor, x.long(), "x")
    refuses(v.check_floating, x.long(), "x")
    v.check_same_dtype("a", x, "b", x)
    refuses(v.check_same_dtype, "a", x, "b", x.float())
    v.check_finite(x, "x")
    y = x.clone()
    y[0] = bad
    refuses(v.check_finite, y, "y")
    refuses(v.check_finite, [1.0], "y")


@covers("seqlearn.validate.check_int", "seqlearn.validate.check_bool",
        "seqlearn.validate.check_real", "seqlearn.validate.check_rng")
@given(n=st.integers(-5, 5), flag=not_bools, real=not_reals, r=st.floats(allow_nan=True))
def test_scalar_checks(n, flag, real, r):
    if n >= 1:
        assert v.check_int(n, "n") == n
    else:
        refuses(v.check_int, n, "n")
    refuses(v.check_int, True, "n")
    refuses(v.check_int, 3, "n", 1, 2)
    assert v.check_bool(True, "f") is True and v.check_bool(np.bool_(False), "f") is False
    refuses(v.check_bool, flag, "f")
    refuses(v.check_real, real, "r")
    if np.isfinite(r):
        assert v.check_real(r, "r") == r
        if r <= 0:
            refuses(v.check_real, r, "r", positive=True)
    else:
        refuses(v.check_real, r, "r")
    assert isinstance(v.check_rng(np.random.default_rng(n + 5)), np.random.Generator)
    refuses(v.check_rng, n)


@covers("seqlearn.validate.check_tokens")
@given(shape=st.lists(st.integers(1, 4), min_size=1, max_size=3), vocab=st.integers(1, 9),
       seed=seeds)
def test_check_tokens_accepts_ids_below_the_vocabulary_size_only(shape, vocab, seed):
    gen = torch.Generator().manual_seed(seed)
    ids = torch.randint(0, vocab, shape, generator=gen)
    spec = " ".join(f"d{i}" for i in range(len(shape)))
    assert v.check_tokens(ids, "ids", spec, vocab) == {f"d{i}": s for i, s in enumerate(shape)}
    too_big, negative = ids.clone(), ids.clone()
    too_big.view(-1)[seed % ids.numel()] = vocab
    negative.view(-1)[seed % ids.numel()] = -1
    for bad in (too_big, negative, ids[..., :0], ids.unsqueeze(0)):
        assert "ids" in str(refuses(v.check_tokens, bad, "ids", spec, vocab))
    for wrong in (ids.int(), ids.double(), ids.tolist()):
        refuses(v.check_tokens, wrong, "ids", spec, vocab)


@covers("seqlearn.validate.check_float_dtype")
@given(dtype=st.sampled_from([torch.float16, torch.bfloat16, torch.float32, torch.float64]),
       bad=st.sampled_from([torch.int64, torch.bool, torch.uint8, None, "float64", float,
                            np.float64]))
def test_check_float_dtype_accepts_floating_torch_dtypes_only(dtype, bad):
    assert v.check_float_dtype(dtype, "dtype") is dtype
    error = refuses(v.check_float_dtype, bad, "dtype")
    assert isinstance(error, TypeError) and str(error).startswith("dtype must be a floating")


# ------------------------------ edge cases: helpers called wrongly (issue 31)

def test_check_real_refuses_a_huge_int_by_name():
    """``float(10**400)`` raised OverflowError inside check_real."""
    with pytest.raises(
            ValueError, match=r"^value must be a finite number, got an int too "
                              r"large for a float \(401 digits\)$"):
        v.check_real(10**400, "value")
    with pytest.raises(ValueError, match="got an int too large"):
        v.check_real(-(10**400), "value", minimum=0.0)
    assert v.check_real(10**400, "value", finite=False) == float("inf")
    assert v.check_real(-(10**400), "value", finite=False) == float("-inf")
    with pytest.raises(ValueError, match="value must be positive, got -inf"):
        v.check_real(-(10**400), "value", finite=False, positive=True)


def test_check_nonempty_refuses_dims_outside_spec():
    """``check_nonempty(x, 'x', 'B T', 'Q')`` raised KeyError."""
    with pytest.raises(
            ValueError, match=r"dims must name dimensions of spec 'B T', got 'Q'"):
        v.check_nonempty(torch.ones(2, 3), "x", "B T", "Q")
    with pytest.raises(ValueError, match=r"got '\.\.\.'"):
        v.check_nonempty(torch.ones(2, 3), "x", "... T", "...")


def test_check_dtypes_agree_names_every_argument():
    a, b = torch.ones(2), torch.ones(2, dtype=torch.float64)
    v.check_dtypes_agree(("a", a), ("b", None), ("c", a))  # None: an omitted argument
    with pytest.raises(TypeError, match=r"^a and b must have the same dtype, got "
                                        r"torch\.float32 and torch\.float64$"):
        v.check_dtypes_agree(("a", a), ("b", b))
    with pytest.raises(TypeError, match=r"^a, c and b must have the same dtype, got "
                                        r"a torch\.float32, c torch\.float32, b "
                                        r"torch\.float64$"):
        v.check_dtypes_agree(("a", a), ("c", a), ("b", b))
    with pytest.raises(TypeError, match="b must be a tensor or array, got list"):
        v.check_dtypes_agree(("a", a), ("b", [1.0]))
    assert v.first_weight(torch.nn.Linear(2, 2).double()).dtype == torch.float64
    assert v.first_weight(torch.nn.ReLU()) is None and v.first_weight(3) is None


@covers("seqlearn.validate.check_dtypes_agree", "seqlearn.validate.first_weight")
@given(seed=seeds, n=st.integers(1, 4), odd=st.integers(0, 3))
def test_dtype_agreement_of_several_arguments_and_a_module(seed, n, odd):
    xs = [(f"x{i}", randn(seed + i, 2)) for i in range(n)]
    v.check_dtypes_agree(*xs, ("omitted", None))
    module = torch.nn.Linear(2, 2).double()
    assert v.first_weight(module) is module.weight
    v.check_dtypes_agree(*xs, ("the module's parameters", v.first_weight(module)))
    if odd < n:
        xs[odd] = (xs[odd][0], xs[odd][1].float())
        if n > 1:
            refuses(v.check_dtypes_agree, *xs)
        refuses(v.check_dtypes_agree, xs[odd], ("w", v.first_weight(module)))
    assert v.first_weight(torch.nn.Identity()) is None
