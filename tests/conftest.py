"""Shared test set-up: hypothesis profiles and the `device` fixture.

Hypothesis profiles: `dev` (random examples, the default on a workstation) and `ci` (derandomized, so
CI never flakes), chosen with MINIGRAD_HYPOTHESIS_PROFILE; CI sets it to `ci`.
A test marked `torch` (PyTorch is its oracle) skips where PyTorch is not installed, as on a new user's machine.
Every op test takes the `device` fixture, so it runs on "cpu", on the strict stand-in device
("strict": CuPy-like arrays that refuse silent host copies) and on "cuda" where a GPU exists.
"""

import importlib.util
import os
import signal
import sys

import pytest
from hypothesis import HealthCheck, settings

import minigrad as mg

# The oracle, pinned: PyTorch's float32 GELU on the CPU is oneDNN's, whose erf is an approximation chosen by the
# CPU's vector width. On an Intel Xeon with AVX-512 it gives gelu(+inf) = nan and gelu(-3) = -0.00405023 (true:
# -0.00404969, an error of 5.3e-7); capped at AVX2 it gives inf, as PyTorch's float64 does, and -0.00404987 (an
# error of 1.7e-7). With the cap (read when oneDNN first runs, so before any test imports torch) PyTorch answers
# the same on every machine the tests have run on.
os.environ.setdefault("ONEDNN_MAX_CPU_ISA", "AVX2")

# A run started in the background of a non-interactive shell (`pytest &`, nohup) begins with Ctrl-C ignored, and
# so would every command it starts: the tests that press Ctrl-C (the check, `minigpt sample`) need Python's own.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)

# The `device` fixture is function-scoped but does not change between examples, so the health check
# that warns about function-scoped fixtures under @given does not apply.
_QUIET = [HealthCheck.too_slow, HealthCheck.function_scoped_fixture]
settings.register_profile("dev", max_examples=30, deadline=None, suppress_health_check=_QUIET)
settings.register_profile(
    "ci", max_examples=15, deadline=None, derandomize=True, print_blob=True, suppress_health_check=_QUIET
)
settings.load_profile(os.environ.get("MINIGRAD_HYPOTHESIS_PROFILE", "dev"))

DEVICES = [
    "cpu",
    "strict",
    pytest.param("cuda", marks=[
        pytest.mark.gpu,
        pytest.mark.skipif(not mg.cuda.is_available(), reason="needs CuPy and an NVIDIA GPU"),
    ]),
]


@pytest.fixture(params=DEVICES)
def device(request):
    return request.param


@pytest.fixture(autouse=True)
def _seed():
    """Every test starts from the same random streams, whatever ran before it: minigrad's, and PyTorch's once a
    test module has imported it (the starting weights PyTorch draws for a comparison), so that a test that passed
    once passes in any order."""
    mg.manual_seed(0)
    torch = sys.modules.get("torch")  # never imported here: a new user's machine has no PyTorch
    if torch is not None:
        torch.manual_seed(0)


@pytest.fixture(autouse=True)
def _course_records(tmp_path_factory, monkeypatch):
    """The course's progress file and yardstick log (tutorials/exercises/progress.py) in a scratch folder, never the
    user's: a test that scores on the yardstick is logged there."""
    folder = tmp_path_factory.mktemp("course-records")
    monkeypatch.setenv("MINIGRAD_COURSE_STATE", str(folder / "progress.json"))
    monkeypatch.setenv("MINIGRAD_COURSE_LOG", str(folder / "yardstick.jsonl"))


def pytest_runtest_setup(item):
    if item.get_closest_marker("torch") is not None and importlib.util.find_spec("torch") is None:
        pytest.skip("needs PyTorch, the tests' optional oracle (pip install torch==2.13.0)")
