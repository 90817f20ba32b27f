"""mg.save / mg.load as torch.save / torch.load for what a training script saves: state dicts and plain
containers of tensors, numbers and strings, round-tripped exactly; anything else refused in one line."""

import numpy as np
import pytest

import minigrad as mg
from minigrad import nn, optim


def test_a_checkpoint_dict_round_trips(tmp_path):
    model = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 2))
    opt = optim.AdamW(model.parameters(), lr=1e-3)
    model(mg.ones(2, 3)).sum().backward()
    opt.step()
    checkpoint = {"model": model.state_dict(), "optimizer": opt.state_dict(), "step": 7, "loss": 0.25,
                  "name": "run-1", "best": None, "flags": [True, False], "shape": (2, 3),
                  "ids": mg.tensor([1, 2, 3])}
    mg.save(checkpoint, tmp_path / "ckpt.safetensors")
    loaded = mg.load(tmp_path / "ckpt.safetensors")
    assert list(loaded) == list(checkpoint)
    assert loaded["step"] == 7 and loaded["loss"] == 0.25 and loaded["name"] == "run-1" and loaded["best"] is None
    assert loaded["flags"] == [True, False] and loaded["shape"] == (2, 3)
    assert loaded["ids"].dtype == mg.int64 and loaded["ids"].tolist() == [1, 2, 3]
    assert list(loaded["model"]) == list(checkpoint["model"])
    for name, value in checkpoint["model"].items():
        np.testing.assert_array_equal(loaded["model"][name].numpy(), value.numpy())
    state = loaded["optimizer"]
    assert list(state["state"]) == [0, 1, 2, 3]  # int keys stay ints
    assert state["param_groups"][0]["betas"] == (0.9, 0.999)
    fresh = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 2))
    fresh.load_state_dict(loaded["model"])
    fresh_opt = optim.AdamW(fresh.parameters(), lr=1e-3)
    fresh_opt.load_state_dict(state)
    np.testing.assert_array_equal(fresh_opt.state_dict()["state"][0]["exp_avg"].numpy(),
                                  opt.state_dict()["state"][0]["exp_avg"].numpy())


def test_a_state_dict_is_still_plain_safetensors(tmp_path):
    sd = nn.Linear(2, 2).state_dict()
    mg.save(sd, tmp_path / "w.safetensors", metadata={"note": "x"})
    import safetensors.numpy

    assert set(safetensors.numpy.load_file(tmp_path / "w.safetensors")) == {"weight", "bias"}
    assert mg.load_metadata(tmp_path / "w.safetensors") == {"note": "x"}
    loaded = mg.load(tmp_path / "w.safetensors", map_location="cpu", weights_only=True)
    np.testing.assert_array_equal(loaded["weight"].numpy(), sd["weight"].numpy())


@pytest.mark.parametrize("obj", [[mg.ones(2), 3], (1.5, "a"), [], {"a": {"b": [mg.zeros(1, dtype=mg.float64)]}},
                                 {0: mg.ones(1), 1: 2}, {"nan": float("nan"), "inf": float("inf")}])
def test_plain_containers_round_trip(tmp_path, obj):
    mg.save(obj, tmp_path / "c.safetensors")
    loaded = mg.load(tmp_path / "c.safetensors")

    def plain(x):
        if isinstance(x, mg.Tensor):
            return ("tensor", str(x.dtype), x.tolist())
        if isinstance(x, dict):
            return ("dict", [(k, plain(v)) for k, v in x.items()])
        if isinstance(x, (list, tuple)):
            return (type(x).__name__, [plain(v) for v in x])
        return repr(x)

    assert plain(loaded) == plain(obj)


@pytest.mark.parametrize("obj", [nn.Linear(2, 2), {"f": print}, [object()], {(1, 2): 3}, {"s": {1, 2}}])
def test_other_objects_are_refused_in_one_line(tmp_path, obj):
    with pytest.raises(TypeError) as info:
        mg.save(obj, tmp_path / "x.safetensors")
    assert "\n" not in str(info.value) and "cannot save" in str(info.value) or "keys" in str(info.value)
    assert not (tmp_path / "x.safetensors").exists()


def test_a_malformed_structure_is_a_checkpoint_error(tmp_path):
    from minigrad.tools.serialization import CONTAINER_KEY

    mg.save({"w": mg.ones(1)}, tmp_path / "bad.safetensors", metadata={CONTAINER_KEY: '{"tensor": "9"}'})
    with pytest.raises(mg.CheckpointError, match="malformed"):
        mg.load(tmp_path / "bad.safetensors")
    with pytest.raises(TypeError):
        mg.load(tmp_path / "bad.safetensors", map_location=object())
    for structure in ['{"list": [' * 100_000, '{"list": ' * 100_000 + "[]" + "}" * 100_000, "not json"]:
        mg.save({"w": mg.ones(1)}, tmp_path / "deep.safetensors", metadata={CONTAINER_KEY: structure})
        with pytest.raises(mg.CheckpointError, match="malformed"):
            mg.load(tmp_path / "deep.safetensors")
