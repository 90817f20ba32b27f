"""mg.save / mg.load: safetensors round trips, metadata, atomic writes, and clear errors for bad files
(nothing is ever unpickled)."""

import os
import pickle

import numpy as np
import pytest

import minigrad as mg
from minigrad.tools import serialization
from minigrad.tools.serialization import CheckpointError


def arrays():
    rng = np.random.default_rng(0)
    return {
        "transformer.wte.weight": rng.standard_normal((5, 3)).astype(np.float32),
        "h.0.ln_1.bias": rng.standard_normal(3),  # float64 stays float64
        "half": rng.standard_normal((2, 2)).astype(np.float16),
        "ids": np.arange(6, dtype=np.int64).reshape(2, 3),
        "small_ints": np.array([1, -2], dtype=np.int32),
        "bytes": np.array([0, 255], dtype=np.uint8),
        "mask": np.array([[True, False]]),
        "scalar": np.array(3.5, dtype=np.float32),
        "empty": np.zeros((0, 4), dtype=np.float32),
    }


def test_round_trip_keeps_names_dtypes_shapes_and_values(device, tmp_path):
    path = tmp_path / "model.safetensors"
    source = arrays()
    mg.save({name: mg.tensor(a, dtype=a.dtype, device=device) for name, a in source.items()}, path)
    loaded = mg.load(path, device=device)
    assert set(loaded) == set(source)
    for name, a in source.items():
        t = loaded[name]
        assert isinstance(t, mg.Tensor) and t.device == device and t.dtype == a.dtype and t.shape == a.shape
        np.testing.assert_array_equal(t.numpy(), a)


def test_arrays_and_non_contiguous_values(tmp_path):
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    mg.save({"a": a.T, "b": mg.tensor(a)[:, ::2]}, tmp_path / "x.safetensors")
    loaded = mg.load(str(tmp_path / "x.safetensors"))
    np.testing.assert_array_equal(loaded["a"].numpy(), a.T)
    np.testing.assert_array_equal(loaded["b"].numpy(), a[:, ::2])


def test_loaded_tensors_are_writable_and_default_to_cpu(tmp_path):
    mg.save({"w": np.ones(3, dtype=np.float32)}, tmp_path / "w.safetensors")
    w = mg.load(tmp_path / "w.safetensors")["w"]
    w.data += 1  # an optimizer updates loaded state in place
    assert w.device == "cpu" and w.numpy().tolist() == [2, 2, 2]


def test_metadata(tmp_path):
    path = tmp_path / "m.safetensors"
    mg.save({"x": np.zeros(2)}, path, metadata={"step": "100", "config": '{"n_layer": 2}'})
    assert mg.load_metadata(path) == {"step": "100", "config": '{"n_layer": 2}'}
    mg.save({"x": np.zeros(2)}, path)
    assert mg.load_metadata(path) == {}
    with pytest.raises(TypeError, match="metadata"):
        mg.save({"x": np.zeros(2)}, path, metadata={"step": 100})
    with pytest.raises(TypeError, match="names"):  # with metadata, only a state dict (without, see test_torch_save)
        mg.save({1: np.zeros(2)}, path, metadata={})


def test_a_model_state_dict_round_trip(device, tmp_path):
    model = mg.nn.Sequential(mg.nn.Linear(3, 4), mg.nn.GELU(), mg.nn.LayerNorm(4)).to(device)
    mg.save(model.state_dict(), tmp_path / "model.safetensors")
    mg.manual_seed(123)
    other = mg.nn.Sequential(mg.nn.Linear(3, 4), mg.nn.GELU(), mg.nn.LayerNorm(4)).to(device)
    other.load_state_dict(mg.load(tmp_path / "model.safetensors", device=device))
    x = mg.randn(2, 3, device=device)
    np.testing.assert_array_equal(model(x).numpy(), other(x).numpy())


# ------------------------------------------------------------------------------------------------------
# Atomic writes
def leftovers(directory):
    return sorted(name for name in os.listdir(directory) if name.endswith(".tmp"))


@pytest.mark.parametrize("failing", ["replace", "fsync", "interrupt"])
def test_a_crash_mid_write_keeps_the_old_file(tmp_path, monkeypatch, failing):
    path = tmp_path / "ckpt.safetensors"
    mg.save({"w": np.ones(4, dtype=np.float32)}, path)
    old_bytes = path.read_bytes()

    def crash(*args, **kwargs):
        raise KeyboardInterrupt if failing == "interrupt" else OSError("disk unplugged")

    monkeypatch.setattr(serialization.os, "fsync" if failing == "fsync" else "replace", crash)
    with pytest.raises(KeyboardInterrupt if failing == "interrupt" else OSError):
        mg.save({"w": np.zeros(1000, dtype=np.float32)}, path)
    monkeypatch.undo()
    assert path.read_bytes() == old_bytes
    assert leftovers(tmp_path) == []
    np.testing.assert_array_equal(mg.load(path)["w"].numpy(), np.ones(4))


def test_a_crash_on_a_first_save_leaves_nothing(tmp_path, monkeypatch):
    def crash(*args, **kwargs):
        raise OSError("disk full")

    monkeypatch.setattr(serialization.os, "replace", crash)
    with pytest.raises(OSError, match="disk full"):
        mg.save({"w": np.ones(4)}, tmp_path / "new.safetensors")
    assert os.listdir(tmp_path) == []


def test_the_temporary_file_is_in_the_same_directory(tmp_path, monkeypatch):
    """os.replace is atomic only within one file system, hence a temporary file beside the target."""
    seen = []
    real_replace = os.replace

    def spy(source, target):
        seen.append((os.path.dirname(source), os.path.dirname(target)))
        real_replace(source, target)

    monkeypatch.setattr(serialization.os, "replace", spy)
    mg.save({"w": np.ones(4)}, tmp_path / "a.safetensors")
    assert seen == [(str(tmp_path), str(tmp_path))]


# ------------------------------------------------------------------------------------------------------
# Bad files: a clear error that names the path; nothing unpickled
class Bomb:
    """Unpickling this object would create a marker file (what a malicious pickle would do, harmlessly)."""

    def __init__(self, marker):
        self.marker = marker

    def __reduce__(self):
        return (open, (self.marker, "w"))


def valid_bytes(tmp_path):
    path = tmp_path / "valid.safetensors"
    mg.save({"a": np.arange(10, dtype=np.float32), "b": np.ones((3, 3))}, path)
    return path.read_bytes()


def bad_files(tmp_path):
    data = valid_bytes(tmp_path)
    header_length = int.from_bytes(data[:8], "little")
    return {
        "empty": b"",
        "four bytes": data[:4],
        "header only half": data[: 8 + header_length // 2],
        "data cut short": data[:-7],
        "random bytes": np.random.default_rng(0).bytes(256),
        "zeros": bytes(256),
        "text": b"hello, I am not a checkpoint at all\n" * 4,
        "garbled header": data[:8] + b"#" * header_length + data[8 + header_length:],
        "header too long": (10**6).to_bytes(8, "little") + data[8:],
    }


BAD_CASES = ["empty", "four bytes", "header only half", "data cut short", "random bytes", "zeros", "text",
             "garbled header", "header too long"]


@pytest.mark.parametrize("case", BAD_CASES)
def test_bad_files_raise_a_clear_error(tmp_path, case):
    path = tmp_path / f"{case.replace(' ', '_')}.safetensors"
    path.write_bytes(bad_files(tmp_path)[case])
    with pytest.raises(CheckpointError, match="safetensors") as info:
        mg.load(path)
    assert str(path) in str(info.value)
    assert isinstance(info.value, ValueError)


def test_a_pickle_is_refused_and_never_unpickled(tmp_path, monkeypatch):
    marker = tmp_path / "pwned"
    path = tmp_path / "model.pt"
    path.write_bytes(pickle.dumps({"weight": Bomb(str(marker))}))

    def no_unpickling(*args, **kwargs):
        raise AssertionError("minigrad tried to unpickle a file")

    monkeypatch.setattr(pickle, "load", no_unpickling)
    monkeypatch.setattr(pickle, "loads", no_unpickling)
    monkeypatch.setattr(pickle, "Unpickler", no_unpickling)
    for read in (mg.load, mg.load_metadata):
        with pytest.raises(CheckpointError, match="pickle") as info:
            read(path)
        assert str(path) in str(info.value)
    assert not marker.exists()


@pytest.mark.torch
def test_a_torch_save_file_is_refused(tmp_path):
    torch = pytest.importorskip("torch")
    path = tmp_path / "model.pt"
    torch.save({"weight": torch.ones(3)}, path)
    with pytest.raises(CheckpointError, match="pickle"):
        mg.load(path)


def test_a_missing_file(tmp_path):
    with pytest.raises(FileNotFoundError, match="nope.safetensors"):
        mg.load(tmp_path / "nope.safetensors")


def test_a_corrupt_file_never_replaces_what_loads(tmp_path):
    """Loading a bad file raises before anything is returned: no half-filled dict."""
    path = tmp_path / "bad.safetensors"
    path.write_bytes(valid_bytes(tmp_path)[:-7])
    with pytest.raises(CheckpointError):
        mg.load(path)


def test_clear_errors_when_saving(tmp_path):
    with pytest.raises(FileNotFoundError, match="does not exist"):
        mg.save({"w": np.ones(2)}, tmp_path / "no" / "such" / "dir.safetensors")
    with pytest.raises(TypeError, match="'w' is a list"):
        mg.save({"w": [1.0, 2.0]}, tmp_path / "x.safetensors", metadata={})
    with pytest.raises(TypeError, match="cannot save a set"):
        mg.save({"w": {1.0, 2.0}}, tmp_path / "x.safetensors")
    with pytest.raises(CheckpointError, match="a directory, not a regular file"):
        mg.load(tmp_path)


def test_a_saved_file_gets_the_usual_permissions(tmp_path):
    """The umask decides, as for any new file (a temporary file from mkstemp would be private, 0o600)."""
    mg.save({"w": np.ones(2)}, tmp_path / "a.safetensors")
    (tmp_path / "b.txt").write_bytes(b"")
    assert (tmp_path / "a.safetensors").stat().st_mode == (tmp_path / "b.txt").stat().st_mode


# ------------------------------------------------------------------------------------------------------
# What is not a regular file, or is larger than allowed, is refused before a byte of it is read
@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_a_fifo_is_refused_at_once(tmp_path):
    """Opening a FIFO for reading waits for a writer: without O_NONBLOCK this test would never end."""
    fifo = tmp_path / "model.safetensors"
    os.mkfifo(fifo)
    for read in (mg.load, mg.load_metadata, lambda path: serialization.read_bytes(path, 100)):
        with pytest.raises(CheckpointError, match="model.safetensors: a FIFO \\(named pipe\\), not a regular file"):
            read(fifo)


@pytest.mark.skipif(not os.path.exists("/dev/zero"), reason="no /dev/zero here")
def test_a_device_is_refused_unread(tmp_path):
    (tmp_path / "zero.safetensors").symlink_to("/dev/zero")
    with pytest.raises(CheckpointError, match="zero.safetensors: a device, not a regular file"):
        mg.load(tmp_path / "zero.safetensors")


def test_a_file_over_its_limit_is_refused_unread(tmp_path):
    path = tmp_path / "big.json"
    path.write_bytes(b"{}" + b" " * 100)
    assert serialization.read_bytes(path, 102) == b"{}" + b" " * 100
    with pytest.raises(CheckpointError, match="big.json: 102 bytes, more than the 101 it may have"):
        serialization.read_bytes(path, 101)
    mg.save({"w": np.ones(100, dtype=np.float32)}, tmp_path / "w.safetensors")
    with pytest.raises(CheckpointError, match="more than the 400 it may have"):
        mg.load(tmp_path / "w.safetensors", max_bytes=400)


def test_a_sparse_file_is_refused_from_its_header_without_reading_its_data(tmp_path):
    """1.5 GB of zeros (a sparse file: no disk space) claims a header of 0 bytes, which cannot describe them."""
    path = tmp_path / "sparse.safetensors"
    path.touch()
    os.truncate(path, 3 * 2**29)
    with pytest.raises(CheckpointError, match="not a valid safetensors file"):
        mg.load(path)
    # and a valid header on a file with more (or fewer) bytes than it describes
    data = valid_bytes(tmp_path)
    path.write_bytes(data + bytes(10))
    with pytest.raises(CheckpointError, match="its header describes 112 bytes of tensors, the file holds 122"):
        mg.load(path)


def test_a_header_nested_past_the_recursion_limit_is_one_clear_error(tmp_path):
    header = ('{"__metadata__": {"a": ' + "[" * 100_000 + "]" * 100_000 + "}}").encode()
    path = tmp_path / "nested.safetensors"
    path.write_bytes(len(header).to_bytes(8, "little") + header)
    with pytest.raises(mg.CheckpointError, match="nested too deeply"):
        mg.load(path)
