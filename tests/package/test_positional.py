"""seqlearn.positional.sinusoidal_positional_encoding: formula, properties,
validation."""

from __future__ import annotations

import math

import pytest
import torch
from hypothesis import given, settings, strategies as st

from properties import covers, refuses
from seqlearn import positional
from seqlearn.positional import sinusoidal_positional_encoding


TIGHT = dict(rtol=1e-12, atol=1e-12)


def pe_loop(T, d, base=10000.0):
    """PE[t, 2k] = sin(t / base^(2k/d)), PE[t, 2k+1] = cos(t / base^(2k/d)), one entry at a time."""
    pe = torch.zeros(T, d, dtype=torch.float64)
    for t in range(T):
        for col in range(d):
            k = col // 2
            angle = t / base ** (2 * k / d)
            pe[t, col] = math.sin(angle) if col % 2 == 0 else math.cos(angle)
    return pe


@settings(max_examples=25, deadline=None)
@given(T=st.integers(1, 20), d=st.integers(1, 16), base=st.sampled_from([10000.0, 100.0, 2.0]))
def test_formula_equals_loop_for_even_and_odd_d(T, d, base):
    pe = sinusoidal_positional_encoding(T, d, base=base, dtype=torch.float64)
    torch.testing.assert_close(pe, pe_loop(T, d, base), **TIGHT)


def test_matches_the_annotated_transformer_recipe():
    T, d = 50, 16  # exp(-log(10000) 2k / d) is how many implementations write omega_k
    omega = torch.exp(torch.arange(0, d, 2, dtype=torch.float64) * -(math.log(10000.0) / d))
    t = torch.arange(T, dtype=torch.float64)[:, None]
    ref = torch.stack([torch.sin(t * omega), torch.cos(t * omega)], dim=-1).reshape(T, d)
    torch.testing.assert_close(sinusoidal_positional_encoding(T, d, dtype=torch.float64), ref, **TIGHT)


def test_first_row_and_range():
    pe = sinusoidal_positional_encoding(100, 10, dtype=torch.float64)
    torch.testing.assert_close(pe[0], torch.tensor([0.0, 1.0] * 5, dtype=torch.float64), **TIGHT)
    assert bool((pe.abs() <= 1).all())
    # every pair (sin, cos) lies on the unit circle
    torch.testing.assert_close(pe[:, 0::2] ** 2 + pe[:, 1::2] ** 2, torch.ones(100, 5, dtype=torch.float64), **TIGHT)


@pytest.mark.parametrize("shift", [1, 3, 17])
def test_shift_is_a_rotation_of_each_frequency_pair(shift):
    T, d = 60, 12
    pe = sinusoidal_positional_encoding(T, d, dtype=torch.float64)
    omega = 10000.0 ** (-torch.arange(0, d, 2, dtype=torch.float64) / d)  # (d/2,)
    c, s = torch.cos(omega * shift), torch.sin(omega * shift)
    # [sin(w(t+s)), cos(w(t+s))] = [[cos ws, sin ws], [-sin ws, cos ws]] [sin wt, cos wt]
    M = torch.zeros(d, d, dtype=torch.float64)  # block diagonal, the same for every t
    M[0::2, 0::2] = torch.diag(c)
    M[0::2, 1::2] = torch.diag(s)
    M[1::2, 0::2] = torch.diag(-s)
    M[1::2, 1::2] = torch.diag(c)
    torch.testing.assert_close(pe[shift:], pe[:-shift] @ M.T, **TIGHT)
    torch.testing.assert_close(M @ M.T, torch.eye(d, dtype=torch.float64), **TIGHT)  # orthogonal


def test_dot_product_depends_only_on_the_offset():
    pe = sinusoidal_positional_encoding(40, 8, dtype=torch.float64)
    gram = pe @ pe.T  # (T, T): PE_t . PE_u = sum_k cos(omega_k (t - u))
    for offset in range(-5, 6):
        diagonal = torch.diagonal(gram, offset)
        torch.testing.assert_close(diagonal, diagonal[:1].expand_as(diagonal), **TIGHT)


def test_dtype_and_device():
    assert sinusoidal_positional_encoding(3, 4).dtype == torch.get_default_dtype()
    assert sinusoidal_positional_encoding(3, 4, dtype=torch.float64).dtype == torch.float64
    assert sinusoidal_positional_encoding(3, 5).shape == (3, 5)


@pytest.mark.parametrize("args, kwargs, error, match", [
    ((0, 4), {}, ValueError, "T must be positive"),
    ((3, 0), {}, ValueError, "d must be positive"),
    ((3.0, 4), {}, TypeError, "T must be an int"),
    ((3, True), {}, TypeError, "d must be an int"),
    ((3, 4), {"base": 1.0}, ValueError, "base must be a number > 1"),
])
def test_validation(args, kwargs, error, match):
    with pytest.raises(error, match=match):
        sinusoidal_positional_encoding(*args, **kwargs)


# ------------------ defaults, boundaries and the exact wording of each validation error


# Py (the pre-norm / post-norm structure is checked there, against torch layers).


F64 = torch.float64


@pytest.mark.parametrize("kwargs, error, match", [
    (dict(base=1.0), ValueError, r"^base must be a number > 1, got 1\.0$"),
    (dict(base="10"), TypeError, r"^base must be a real number"),
    (dict(dtype=torch.long), TypeError,
     r"^dtype must be a floating torch\.dtype or None, got torch\.int64$"),
    (dict(dtype="float64"), TypeError, r"^dtype must be a floating torch\.dtype or None"),
])
def test_positional_encoding_error_messages(kwargs, error, match):
    with pytest.raises(error, match=match):
        sinusoidal_positional_encoding(3, 4, **kwargs)


def test_positional_encoding_defaults_and_device():
    pe = sinusoidal_positional_encoding(5, 6)
    assert pe.dtype == torch.get_default_dtype()
    torch.testing.assert_close(pe, sinusoidal_positional_encoding(5, 6, base=10000.0,
                                                                  dtype=torch.float32))
    assert sinusoidal_positional_encoding(5, 6, device="meta").device.type == "meta"
    assert math.isclose(sinusoidal_positional_encoding(5, 6, dtype=F64)[1, 2],
                        math.sin(10000.0 ** (-2 / 6)), rel_tol=1e-14)


# ---------------------------------------------- properties at random sizes (hypothesis)


@covers("seqlearn.positional.sinusoidal_positional_encoding")
@given(T=st.integers(1, 6), d=st.integers(1, 7), base=st.floats(1.5, 1e5))
def test_encoding_is_the_formula_entry_by_entry(T, d, base):
    pe = positional.sinusoidal_positional_encoding(T, d, base=base, dtype=F64)
    for t in range(T):
        for j in range(d):
            angle = t * base ** (-2 * (j // 2) / d)  # omega_k t with k = j // 2
            want = math.sin(angle) if j % 2 == 0 else math.cos(angle)
            assert math.isclose(float(pe[t, j]), want, rel_tol=1e-12, abs_tol=1e-12)
    refuses(positional.sinusoidal_positional_encoding, T, d, base=1.0)
    refuses(positional.sinusoidal_positional_encoding, T, d, base=math.nan)
    refuses(positional.sinusoidal_positional_encoding, T, d, dtype=torch.int64)
    refuses(positional.sinusoidal_positional_encoding, float(T), d)
