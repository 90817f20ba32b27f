"""The examples run, and do what they say."""

import importlib.util
from pathlib import Path

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


def load_example(name):
    """Import an example script by path (examples/ is a folder of scripts, not a package)."""
    spec = importlib.util.spec_from_file_location(name, EXAMPLES / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_mlp_two_moons_reaches_full_training_accuracy():
    assert load_example("mlp_two_moons").main(verbose=False) == 1.0


def test_mlp_two_moons_on_the_strict_device():
    """The whole loop (nn, AdamW, schedule) runs on a CuPy-like device without a host copy."""
    assert load_example("mlp_two_moons").main(device="strict", verbose=False) == 1.0
