"""minigrad.utils.tensorboard.SummaryWriter, as PyTorch programs use it: the event files it writes are read back
here record by record (TFRecord framing, TensorBoard's Event protocol buffers), and without tensorboardX the import
fails in one line naming the extra."""

import importlib
import struct
import sys

import numpy as np
import pytest

import minigrad as mg

tensorboardX = pytest.importorskip("tensorboardX")
from tensorboardX.proto import event_pb2  # noqa: E402


def read_events(folder):
    """Every Event in the event files under `folder` (TFRecords: length, its CRC, the bytes, their CRC)."""
    events = []
    for path in sorted(folder.rglob("events.out.tfevents.*")):
        data = path.read_bytes()
        at = 0
        while at < len(data):
            (length,) = struct.unpack("<Q", data[at:at + 8])
            events.append(event_pb2.Event.FromString(data[at + 12:at + 12 + length]))
            at += 12 + length + 4
    return events


def values(events, tag):
    return [(e.step, v.simple_value) for e in events for v in e.summary.value if v.tag == tag]


def test_scalars_histograms_and_text_are_written_and_read_back(tmp_path):
    from minigrad.utils.tensorboard import SummaryWriter

    weights = mg.randn(100)
    with SummaryWriter(tmp_path / "run") as writer:
        for step, loss in enumerate([2.5, 1.75, 1.25]):
            writer.add_scalar("loss/train", mg.tensor(loss), step)  # a one-element tensor, as loss.item() would be
        writer.add_scalars("loss", {"train": 1.0, "val": mg.tensor(1.5)}, 7)
        writer.add_histogram("weights", weights, 3)
        writer.add_text("note", "minigrad run", 0)
        writer.flush()
        assert writer.get_logdir() == str(tmp_path / "run")
    events = read_events(tmp_path / "run")
    assert values(events, "loss/train") == [(0, 2.5), (1, 1.75), (2, 1.25)]
    both = read_events(tmp_path / "run" / "loss_train") + read_events(tmp_path / "run" / "loss_val")
    assert sorted(values(both, "loss")) == [(7, 1.0), (7, 1.5)]  # each curve of add_scalars in its own run
    (histogram,) = [v.histo for e in events for v in e.summary.value if v.tag == "weights"]
    assert histogram.num == 100 and histogram.min == pytest.approx(weights.min().item())
    assert histogram.sum == pytest.approx(weights.sum().item(), abs=1e-4)
    assert any(v.tag.startswith("note") for e in events for v in e.summary.value)


def test_what_it_does_not_write_is_refused_in_one_line(tmp_path):
    from minigrad.utils.tensorboard import SummaryWriter

    writer = SummaryWriter(tmp_path)
    with pytest.raises(AttributeError) as error:
        writer.add_graph  # noqa: B018
    assert "minigrad has no add_graph" in str(error.value) and "\n" not in str(error.value)
    writer.close()


@pytest.mark.parametrize("statement", ["from minigrad.utils.tensorboard import SummaryWriter",
                                       "import minigrad.utils.tensorboard"])
def test_without_tensorboardx_the_import_says_which_extra_to_install(monkeypatch, statement):
    monkeypatch.setitem(sys.modules, "tensorboardX", None)  # what Python does for a package that is not installed
    monkeypatch.delitem(sys.modules, "minigrad.utils.tensorboard", raising=False)
    with pytest.raises(ImportError) as error:
        exec(statement, {})
    message = str(error.value)
    assert "pip install -e '.[tensorboard]'" in message and "\n" not in message
    monkeypatch.undo()
    assert importlib.import_module("minigrad.utils.tensorboard").SummaryWriter
    assert np.isfinite(mg.ones(1).item())  # minigrad itself never needed it
