"""The backend module: device names, copies across the bus, and the host allocator setting."""

import sys

import numpy as np
import pytest

import minigrad as mg
from minigrad.core import backend
from minigrad.kernels import blas, memory


def test_device_names_are_canonical():
    assert backend.canonical_device(None) == "cpu"
    assert backend.canonical_device("cuda:0") == "cuda"
    assert backend.canonical_device("cuda:1") == "cuda:1"
    for bad in ("tpu", "cuda:x", "cpu:1"):
        with pytest.raises(ValueError, match=f"unknown device '{bad}'"):
            backend.canonical_device(bad)


def test_copies_to_the_stand_in_device_and_back_are_explicit():
    host = np.arange(6.0).reshape(2, 3)
    device_array = backend.to_device(host, "strict")
    assert backend.device_of(device_array) == "strict"
    with pytest.raises(TypeError, match="implicit conversion"):
        np.asarray(device_array)
    np.testing.assert_array_equal(backend.as_numpy(device_array), host)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="mallopt is glibc's")
def test_freed_host_memory_is_kept_for_reuse(monkeypatch):
    assert memory.keep_freed_host_memory()
    monkeypatch.setenv("MINIGRAD_MALLOC_TUNING", "0")
    assert not memory.keep_freed_host_memory()


def test_cuda_without_a_gpu_says_what_to_install():
    if mg.cuda.is_available():
        pytest.skip("a GPU is present")
    with pytest.raises(RuntimeError, match=r"pip install -e '\.\[cuda12\]'"):
        mg.zeros(2, device="cuda")


# Shapes on both sides of blas.BLAS_SUM_FROM_ROWS (64 rows): NumPy's sum below, a BLAS product from there up.
@pytest.mark.parametrize("shape", [(5,), (3, 7), (2, 3, 64), (4, 0), (0, 4), (2, 1, 1), (70, 5), (3, 30, 17)])
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16])
def test_row_sum_and_row_mean_are_the_last_axis_kept(shape, dtype):
    rng = np.random.default_rng(0)
    a = rng.standard_normal(shape).astype(dtype)
    for name, ours, theirs in (("row_sum", blas.row_sum(a), a.sum(axis=-1, keepdims=True)),
                               ("row_mean", blas.row_mean(a), a.mean(axis=-1, keepdims=True))):
        assert ours.shape == theirs.shape and ours.dtype == theirs.dtype, name
        np.testing.assert_allclose(ours, theirs, rtol=1e-3 if dtype == np.float16 else 1e-5, atol=1e-6, err_msg=name)


def test_row_sum_of_a_strided_view_and_of_infinities():
    a = np.arange(24 * 70, dtype=np.float32).reshape(4, 6 * 70)
    np.testing.assert_array_equal(blas.row_sum(a.T), a.T.sum(axis=-1, keepdims=True))  # not contiguous
    b = np.array([[np.inf, 1.0], [np.inf, -np.inf], [np.nan, 0.0]] * 30, dtype=np.float32)
    np.testing.assert_array_equal(blas.row_sum(b), b.sum(axis=-1, keepdims=True))  # inf, nan, nan
    assert blas.BLAS_SUM_FROM_ROWS <= len(b) and blas.BLAS_SUM_FROM_ROWS <= a.shape[1]  # BLAS's path


@pytest.mark.parametrize("shape", [(5, 3), (768, 128), (1, 7), (0, 4), (4, 0), (64, 3)])
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16])
def test_column_sum_is_the_sum_of_the_rows(shape, dtype):
    rows = np.random.default_rng(1).standard_normal(shape).astype(dtype)
    ours, theirs = blas.column_sum(rows), rows.sum(axis=0)
    assert ours.shape == theirs.shape and ours.dtype == theirs.dtype
    # Added in another order: both are within a few roundings of the exact sum, per unit of sum |x|.
    exact, scale = rows.astype(np.float64).sum(axis=0), np.abs(rows).astype(np.float64).sum(axis=0) + 1
    for name, total in (("column_sum", ours), ("sum", theirs)):
        error = np.max(np.abs(total - exact) / scale, initial=0.0)
        assert error < 10 * np.finfo(dtype).eps, (name, error)


def test_column_sum_of_a_strided_view_and_of_infinities():
    a = np.arange(24 * 70, dtype=np.float64).reshape(4, 6 * 70)
    np.testing.assert_array_equal(blas.column_sum(a.T), a.T.sum(axis=0))  # not contiguous
    b = np.array([[np.inf, 1.0, np.nan], [np.inf, -np.inf, 0.0]] * 40, dtype=np.float32)
    np.testing.assert_array_equal(blas.column_sum(b), b.sum(axis=0))  # inf, nan, nan
