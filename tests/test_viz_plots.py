"""minigrad.viz.plots: each plot returns a matplotlib Figure and writes a non-empty PNG."""

import json
import warnings

import numpy as np
import pytest

pytest.importorskip("matplotlib")

import minigrad as mg  # noqa: E402
from minigpt.model import sinusoidal_table  # noqa: E402
from minigrad import nn  # noqa: E402
from minigrad.viz import plots  # noqa: E402

PNG = b"\x89PNG\r\n\x1a\n"


def is_png(path):
    data = path.read_bytes()
    return data[:8] == PNG and len(data) > 1000


def causal_attention(layers, heads, T, seed=0):
    """Random attention probabilities: rows sum to 1, zero above the diagonal; a list of (1, nh, T, T)."""
    rng = np.random.default_rng(seed)
    maps = []
    for _ in range(layers):
        scores = np.where(np.tril(np.ones((T, T))) > 0, rng.normal(size=(1, heads, T, T)), -np.inf)
        e = np.exp(scores - scores.max(axis=-1, keepdims=True))
        maps.append(e / e.sum(axis=-1, keepdims=True))
    return maps


def test_attention_heatmaps_with_chinese_tokens(tmp_path):
    from matplotlib.figure import Figure

    tokens = "床前明月光"
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        figure = plots.plot_attention(causal_attention(2, 3, 5), tokens, path=tmp_path / "att.png", title="注意力")
    assert isinstance(figure, Figure) and is_png(tmp_path / "att.png")
    assert len(figure.axes) == 2 * 3 + 1  # the heatmaps and the colour bar
    assert [t.get_text() for t in figure.axes[0].get_xticklabels()] == list(tokens)
    glyph_warnings = [w for w in caught if "Glyph" in str(w.message) or "CJK" in str(w.message)]
    if plots.find_cjk_font() is not None:
        assert not glyph_warnings  # every character had a glyph
    else:
        assert any("fonts-noto-cjk" in str(w.message) for w in caught)


def test_attention_accepts_arrays_and_tensors(tmp_path):
    maps = causal_attention(2, 2, 4)
    stacked = np.stack([m[0] for m in maps])  # (layers, heads, T, T)
    figure = plots.plot_attention(mg.tensor(stacked), ["a", " ", "\n", "b"], layers=[1], heads=[0])
    assert len(figure.axes) == 2
    assert [t.get_text() for t in figure.axes[0].get_yticklabels()] == ["a", "␣", "\\n", "b"]
    plots.plot_attention(stacked[0, 0], path=tmp_path / "one.png")  # one (T, T) map
    assert is_png(tmp_path / "one.png")
    with pytest.raises(ValueError, match="3 tokens"):
        plots.plot_attention(stacked, "abc")


def test_grad_norm_plots(tmp_path):
    plots.plot_grad_norms({f"h.{i}": 10.0 ** -i for i in range(5)}, path=tmp_path / "bars.png")
    plots.plot_grad_norms([0.9 ** k for k in range(30)], path=tmp_path / "line.png")
    figure = plots.plot_grad_norms({"tanh RNN": [0.5 ** k for k in range(20)], "LSTM": [0.95 ** k for k in range(20)]},
                                   path=tmp_path / "lines.png")
    assert figure.axes[0].get_yscale() == "log"
    assert all(is_png(tmp_path / name) for name in ("bars.png", "line.png", "lines.png"))


def test_parameter_grad_norms_by_layer():
    model = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 2))
    (model(mg.ones(2, 3)) ** 2).sum().backward()
    by_param = plots.parameter_grad_norms(model, by="parameter")
    assert list(by_param) == ["0.weight", "0.bias", "2.weight", "2.bias"]
    by_layer = plots.parameter_grad_norms(model)
    assert list(by_layer) == ["0", "2"]
    np.testing.assert_allclose(by_layer["0"], np.hypot(by_param["0.weight"], by_param["0.bias"]))


def test_loss_curves_from_a_lenient_metrics_log(tmp_path):
    log = tmp_path / "metrics.jsonl"
    lines = [json.dumps({"iter": i, "loss": 3.0 / (i + 1), "lr": 1e-3}) for i in range(0, 100, 10)]
    lines += [json.dumps({"iter": 50, "train_loss": 0.1, "val_loss": 0.2}), "", "not json", '{"iter": 9']
    log.write_text("\n".join(lines))
    with pytest.warns(UserWarning, match="skipped 2 line"):
        figure = plots.plot_loss_curves(tmp_path, path=tmp_path / "loss.png")  # a folder holding metrics.jsonl
    assert is_png(tmp_path / "loss.png")
    labels = sorted(line.get_label() for line in figure.axes[0].get_lines())
    assert labels == ["train (evaluated)", "training batch", "validation"]
    assert len(figure.axes) == 2  # the learning rate below
    figure = plots.plot_loss_curves([{"step": 1, "val_loss": 2.0}, {"step": 2, "val_loss": 1.5}])
    assert len(figure.axes) == 1


def test_positional_encoding(tmp_path):
    table = sinusoidal_table(32, 16)
    assert table.shape == (32, 16) and np.allclose(table[0, 1::2], 1.0)
    plots.plot_positional_encoding(table, path=tmp_path / "pe.png")
    assert is_png(tmp_path / "pe.png")
    with pytest.raises(ValueError, match="positions, channels"):
        plots.plot_positional_encoding(np.zeros(4))


def test_use_cjk_font_sets_matplotlib_to_the_font_it_finds():
    import matplotlib.pyplot as plt

    family = mg.viz.plots.find_cjk_font()
    assert mg.viz.use_cjk_font() is (family is not None)
    if family is not None:
        assert plt.rcParams["font.sans-serif"][0] == family
