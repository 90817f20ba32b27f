"""The backend module: device names, copies across the bus, and the host allocator setting."""

import sys

import numpy as np
import pytest

import minigrad as mg
from minigrad import backend, memory


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
