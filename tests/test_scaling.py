"""The scaling arithmetic (tutorials/scaling.py) and the shipped scaling records (tutorials/records/scaling.json).

The fit must recover a power law it is given, the crossing must invert it, the FLOPs formula must count what it
says, and the records that lecture 07 §5 draws must have the schema that tutorials/builders/scaling_runs.py
writes.
Read next: test_crossing.py.
"""

import math

import numpy as np
import pytest

from minigpt import GPT, GPTConfig
from tutorials import scaling


def test_fit_recovers_a_known_power_law():
    compute = np.geomspace(1e11, 1e14, 20)
    truth = scaling.PowerLaw(floor=1.35, scale=40.0, alpha=0.12, rmse=0.0)
    noise = np.random.default_rng(0).normal(0, 0.002, compute.shape)
    law = scaling.fit_power_law(compute, truth(compute) + noise)
    assert law.floor == pytest.approx(1.35, abs=0.06)
    assert law.alpha == pytest.approx(0.12, rel=0.2)
    assert law.rmse < 0.004
    far = 1e16  # extrapolated two decades past the data: still close to the truth
    assert float(law(far)) == pytest.approx(float(truth(far)), abs=0.03)


def test_fit_rejects_a_loss_that_does_not_fall():
    with pytest.raises(ValueError, match="does not fall"):
        scaling.fit_power_law([1.0, 2.0, 3.0], [1.0, 1.5, 2.0])
    with pytest.raises(ValueError, match="at least 3"):
        scaling.fit_power_law([1.0, 2.0], [2.0, 1.0])


def test_crossing_inverts_the_law_and_is_none_below_the_floor():
    law = scaling.PowerLaw(floor=1.3, scale=50.0, alpha=0.15, rmse=0.0)
    c = scaling.crossing(law, 1.5)
    assert float(law(c)) == pytest.approx(1.5, rel=1e-9)
    assert scaling.crossing(law, 1.3) is None and scaling.crossing(law, 1.2) is None


def test_the_joint_fit_recovers_a_known_law_and_each_sizes_curve():
    truth = scaling.JointLaw(E=1.2, A=40.0, alpha=0.35, B=300.0, beta=0.45, rmse=0.0)
    sizes = [1e5, 3e5, 8e5, 1.8e6]
    n = np.repeat(sizes, 12)
    d = np.tile(np.geomspace(4e5, 4e6, 12), len(sizes))
    loss = truth(n, d) + np.random.default_rng(1).normal(0, 0.002, n.shape)
    law = scaling.fit_joint(n, d, loss)
    assert law.rmse < 0.004
    assert law.E == pytest.approx(1.2, abs=0.1)
    assert law.beta == pytest.approx(0.45, abs=0.1)
    # a size it never saw, far past the data: its predicted curve is close to the truth
    per_token = 6 * 5e6
    fitted, true = law.for_size(5e6, per_token), truth.for_size(5e6, per_token)
    for c in (per_token * 1e7, per_token * 1e8):
        assert float(fitted(c)) == pytest.approx(float(true(c)), abs=0.03)
    assert float(true(per_token * 1e7)) == pytest.approx(float(truth(5e6, 1e7)))


def test_the_cheapest_crossing_is_the_minimum_over_widths():
    law = scaling.JointLaw(E=1.2, A=40.0, alpha=0.35, B=300.0, beta=0.45, rmse=0.0)
    widths = [64, 128, 256, 512]
    compute, width = scaling.cheapest_crossing(law, 1.5, 4, widths, 64, 75)
    each = {w: scaling.crossing(law.for_size(scaling.matmul_weights(4, w, 75), scaling.flops_per_token(4, w, 64, 75)),
                                1.5) for w in widths}
    assert compute == min(c for c in each.values() if c is not None) == each[width]
    assert scaling.cheapest_crossing(law, 1.1, 4, widths, 64, 75) is None  # below E: no size gets there


def test_matmul_weights_count_the_models_matrices():
    """N = 12 L d^2 + d V: every 2-D weight of the model but the two embedding tables."""
    config = GPTConfig(vocab_size=75, block_size=64, n_layer=3, n_head=3, n_embd=96)
    model = GPT(config)
    matrices = sum(p.numel() for name, p in model.named_parameters()
                   if p.ndim == 2 and "wte" not in name and "wpe" not in name)
    if config.tie_weights:  # the output layer reads the token table: its d x V product still happens
        matrices += 75 * 96
    assert scaling.matmul_weights(3, 96, 75) == matrices
    assert scaling.flops_per_token(3, 96, 64, 75) == 6 * matrices + 6 * 3 * 64 * 96


@pytest.mark.skipif(not scaling.SCALING.exists(), reason="no scaling records shipped")
def test_scaling_records_have_their_schema_and_fall():
    record = scaling.load_records()
    assert {"command", "cpu", "data", "flops", "target", "runs"} <= set(record)
    assert 1.0 < record["target"]["kneser_ney_dev"] < 2.0
    assert len(record["runs"]) >= 3
    for run in record["runs"]:
        s = run["settings"]
        per_token = scaling.flops_per_token(s["n_layer"], s["n_embd"], s["block_size"], 75)
        assert run["flops_per_token"] == pytest.approx(per_token)
        points = run["points"]
        assert len(points) >= 5
        for p in points:
            assert p["tokens"] == p["iter"] * s["batch_size"] * s["block_size"]
            assert p["flops"] == pytest.approx(p["tokens"] * per_token)
            assert math.isfinite(p["val_loss"])
        assert points[-1]["val_loss"] < points[0]["val_loss"] - 0.3
        law = scaling.fit_run(run, skip_tokens=4e5)
        assert law.rmse < 0.03, run["name"]
