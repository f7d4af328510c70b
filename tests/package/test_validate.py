import numpy as np
import pytest
import torch

from seqlearn.seeding import seed_all
from seqlearn.validate import check_finite, check_floating, check_same_dtype, check_shape


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


def test_seed_all_is_reproducible():
    g1 = seed_all(3)
    a = torch.randn(4), np.random.rand(), torch.randn(2, generator=g1)
    g2 = seed_all(3)
    b = torch.randn(4), np.random.rand(), torch.randn(2, generator=g2)
    torch.testing.assert_close(a[0], b[0])
    assert a[1] == b[1]
    torch.testing.assert_close(a[2], b[2])
    with pytest.raises(TypeError):
        seed_all(1.5)


def test_seed_all_pins_the_thread_count():
    before = torch.get_num_threads()
    try:
        seed_all(0, threads=1)
        assert torch.get_num_threads() == 1
        seed_all(0, threads=None)
        assert torch.get_num_threads() == 1
        with pytest.raises(ValueError, match="threads"):
            seed_all(0, threads=0)
    finally:
        torch.set_num_threads(before)
