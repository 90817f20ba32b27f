"""nn.RNNCell, nn.GRUCell, nn.LSTMCell, nn.RNN, nn.GRU and nn.LSTM (minigrad/compat/recurrent.py) against torch.nn
from the same weights, in float64: outputs, final states and the gradient of every input and parameter to 1e-10
(module_oracle.check_module); state_dicts both ways; dropout between layers; the refusals. Without PyTorch: a
gradcheck of a small GRU and LSTM, and an LSTM that learns to recall the token two steps back."""

import math
import warnings

import numpy as np
import pytest
from helpers import torch
from module_oracle import check_module, copy_weights

import minigrad as mg
import minigrad.functional as F
from minigrad import nn, optim

H_IN, H, N, L = 3, 4, 2, 5
RNG = np.random.default_rng(0)
KINDS = {  # name: (minigrad's constructor, PyTorch's name, extra arguments)
    "rnn_tanh": ("RNN", {"nonlinearity": "tanh"}),
    "rnn_relu": ("RNN", {"nonlinearity": "relu"}),
    "gru": ("GRU", {}),
    "lstm": ("LSTM", {}),
}


def pair(name: str, *args, **kwargs):
    """The module of that name from both libraries, float64, with the same arguments."""
    return (getattr(nn, name)(*args, dtype=mg.float64, **kwargs),
            getattr(torch.nn, name)(*args, dtype=torch.float64, **kwargs))


def states(kind: str, shape: tuple[int, ...]):
    """An initial state of `shape`: h0, or (h0, c0) for an LSTM."""
    h0 = RNG.standard_normal(shape)
    return (h0, RNG.standard_normal(shape)) if kind == "lstm" else h0


@pytest.mark.torch
@pytest.mark.parametrize("cell", ["RNNCell", "RNNCell-relu", "GRUCell", "LSTMCell"])
@pytest.mark.parametrize("batched", [True, False])
@pytest.mark.parametrize("with_state", [True, False])
def test_cells_match_pytorch(cell, batched, with_state):
    name, _, relu = cell.partition("-")
    ours, theirs = pair(name, H_IN, H, **({"nonlinearity": "relu"} if relu else {}))
    x = RNG.standard_normal((N, H_IN) if batched else (H_IN,))
    inputs = [x]
    if with_state:
        inputs.append(states("lstm" if name == "LSTMCell" else "", (N, H) if batched else (H,)))
    outs, _ = check_module(ours, theirs, inputs)
    assert outs[0].shape == ((N, H) if batched else (H,))


@pytest.mark.torch
def test_a_cell_without_bias_matches_pytorch():
    ours, theirs = pair("GRUCell", H_IN, H, bias=False)
    assert [name for name, _ in ours.named_parameters()] == ["weight_ih", "weight_hh"]
    check_module(ours, theirs, [RNG.standard_normal((N, H_IN)), RNG.standard_normal((N, H))])


@pytest.mark.torch
@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("num_layers", [1, 2])
@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("with_state", [False, True])
def test_layers_match_pytorch(kind, num_layers, batch_first, with_state):
    name, extra = KINDS[kind]
    ours, theirs = pair(name, H_IN, H, num_layers=num_layers, batch_first=batch_first, **extra)
    x = RNG.standard_normal((N, L, H_IN) if batch_first else (L, N, H_IN))
    inputs = [x, states(kind, (num_layers, N, H))] if with_state else [x]
    outs, _ = check_module(ours, theirs, inputs)
    assert outs[0].shape == ((N, L, H) if batch_first else (L, N, H))
    assert all(h.shape == (num_layers, N, H) for h in outs[1:])  # h_n (and c_n) are never batch-first


@pytest.mark.torch
@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("with_state", [False, True])
def test_unbatched_input_matches_pytorch(kind, with_state):
    name, extra = KINDS[kind]
    ours, theirs = pair(name, H_IN, H, num_layers=2, **extra)
    inputs = [RNG.standard_normal((L, H_IN))] + ([states(kind, (2, H))] if with_state else [])
    outs, _ = check_module(ours, theirs, inputs)
    assert outs[0].shape == (L, H) and outs[1].shape == (2, H)


@pytest.mark.torch
@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("batch_first", [False, True])
def test_bidirectional_layers_match_pytorch(kind, batch_first):
    name, extra = KINDS[kind]
    ours, theirs = pair(name, H_IN, H, num_layers=2, bidirectional=True, batch_first=batch_first, **extra)
    assert [n for n, _ in ours.named_parameters()] == [n for n, _ in theirs.named_parameters()]
    x = RNG.standard_normal((N, L, H_IN) if batch_first else (L, N, H_IN))
    outs, _ = check_module(ours, theirs, [x, states(kind, (4, N, H))])
    assert outs[0].shape[-1] == 2 * H


@pytest.mark.torch
def test_layers_without_bias_match_pytorch():
    ours, theirs = pair("LSTM", H_IN, H, num_layers=2, bias=False)
    assert not any("bias" in name for name, _ in ours.named_parameters())
    check_module(ours, theirs, [RNG.standard_normal((L, N, H_IN))])


@pytest.mark.torch
@pytest.mark.parametrize("name", ["RNN", "GRU", "LSTM", "RNNCell", "GRUCell", "LSTMCell"])
def test_state_dicts_load_both_ways_and_init_is_pytorchs(name):
    layers = {} if name.endswith("Cell") else {"num_layers": 2, "bidirectional": True}
    ours, theirs = pair(name, H_IN, 16, **layers)
    ours_sd, theirs_sd = ours.state_dict(), theirs.state_dict()
    assert list(ours_sd) == list(theirs_sd)
    assert all(ours_sd[key].shape == tuple(theirs_sd[key].shape) for key in theirs_sd)
    theirs.load_state_dict({key: torch.tensor(value.numpy()) for key, value in ours_sd.items()}, strict=True)
    assert all(np.array_equal(theirs_sd[key].numpy(), ours_sd[key].numpy()) for key in ours_sd)
    values = np.concatenate([value.numpy().ravel() for value in ours_sd.values()])
    bound = 1 / math.sqrt(16)  # U(-1/sqrt(H), 1/sqrt(H)), every weight and bias
    assert np.abs(values).max() <= bound and np.abs(values).max() > 0.95 * bound and abs(values.mean()) < 0.02


@pytest.mark.torch
def test_a_state_dict_loaded_from_pytorch_gives_pytorchs_output():
    ours, theirs = pair("GRU", H_IN, H, num_layers=2)
    copy_weights(ours, theirs)
    x = RNG.standard_normal((L, N, H_IN))
    ours_output, theirs_output = ours(mg.tensor(x, dtype=mg.float64))[0], theirs(torch.tensor(x))[0]
    np.testing.assert_allclose(ours_output.numpy(), theirs_output.detach().numpy(), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("name", ["RNN", "GRU", "LSTM", "LSTMCell"])
def test_the_layers_run_on_every_device(device, name):
    """On the strict stand-in device a host array slipped into the loop (a zero state, a mask) fails loudly."""
    layers = {} if name.endswith("Cell") else {"num_layers": 2, "bidirectional": True, "dropout": 0.2}
    module = getattr(nn, name)(H_IN, H, device=device, dtype=mg.float64, **layers)
    x = mg.tensor(RNG.standard_normal((N, H_IN) if name.endswith("Cell") else (L, N, H_IN)), dtype=mg.float64,
                  device=device, requires_grad=True)
    out = module(x)[0]
    assert out.device == x.device
    out.sum().backward()
    assert x.grad.device == x.device and all(p.grad is not None for p in module.parameters())


def test_dropout_acts_between_layers_in_training_only():
    mg.manual_seed(1)
    lstm = nn.LSTM(H_IN, 8, num_layers=2, dropout=0.5, dtype=mg.float64)
    x = mg.tensor(RNG.standard_normal((L, N, H_IN)), dtype=mg.float64)
    first, second = lstm(x)[0].numpy(), lstm(x)[0].numpy()
    assert not np.allclose(first, second)  # a new mask each call
    lstm.eval()
    evaluated = lstm(x)[0].numpy()
    assert not np.allclose(first, evaluated) and np.array_equal(evaluated, lstm(x)[0].numpy())


def test_dropout_does_not_follow_the_last_layer():
    with pytest.warns(UserWarning, match="non-zero dropout expects num_layers greater than 1"):
        gru = nn.GRU(H_IN, H, num_layers=1, dropout=0.5, dtype=mg.float64)
    x = mg.tensor(RNG.standard_normal((L, N, H_IN)), dtype=mg.float64)
    trained = gru(x)[0].numpy()
    gru.eval()
    np.testing.assert_array_equal(trained, gru(x)[0].numpy())


@pytest.mark.torch
@pytest.mark.parametrize("build, call", [
    (lambda lib: lib.nn.RNN(3, 4, nonlinearity="gelu"), None),
    (lambda lib: lib.nn.GRU(3, 4, dropout=1.5), None),
    (lambda lib: lib.nn.GRU(3, 4), lambda lib, m: m(lib.zeros(5, 2, 7))),  # input_size 3, given 7
    (lambda lib: lib.nn.GRU(3, 4), lambda lib, m: m(lib.zeros(5, 2, 3), lib.zeros(2, 2, 4))),  # 1 layer: h0 (1, 2, 4)
    (lambda lib: lib.nn.GRU(3, 4), lambda lib, m: m(lib.zeros(5, 3), lib.zeros(1, 2, 4))),  # unbatched: h0 2-D
    (lambda lib: lib.nn.LSTM(3, 4), lambda lib, m: m(lib.zeros(1, 5, 2, 3))),
    (lambda lib: lib.nn.GRUCell(3, 4), lambda lib, m: m(lib.zeros(1, 2, 3))),
    (lambda lib: lib.nn.GRUCell(3, 4), lambda lib, m: m(lib.zeros(2, 3), lib.zeros(1, 4))),  # would broadcast
    (lambda lib: lib.nn.LSTMCell(3, 4), lambda lib, m: m(lib.zeros(2, 3), (lib.zeros(2, 4), lib.zeros(2, 5)))),
])
def test_bad_arguments_are_refused_in_one_line_where_pytorch_refuses(build, call):
    for lib in (mg, torch):
        with pytest.raises((ValueError, RuntimeError, NotImplementedError)) as error:
            module = build(lib)
            if call is not None:
                call(lib, module)
        assert "\n" not in str(error.value)


def test_proj_size_is_refused_saying_what_to_do():
    with pytest.raises(NotImplementedError, match="LSTM: minigrad has no proj_size; apply an nn.Linear"):
        nn.LSTM(3, 4, proj_size=2)


@pytest.mark.parametrize("name", ["GRU", "LSTM"])
def test_gradcheck_through_time(name):
    mg.manual_seed(2)
    module = getattr(nn, name)(2, 3, num_layers=2, bidirectional=True, dtype=mg.float64)
    x = mg.tensor(RNG.standard_normal((4, 2, 2)), dtype=mg.float64, requires_grad=True)
    h0 = mg.tensor(RNG.standard_normal((4, 2, 3)), dtype=mg.float64, requires_grad=True)
    c0 = mg.tensor(RNG.standard_normal((4, 2, 3)), dtype=mg.float64, requires_grad=True)

    def run(x, h0, c0, *params):  # params are the module's own Parameters: gradcheck perturbs them in place
        out, last = module(x, (h0, c0) if name == "LSTM" else h0)
        h_n = last[0] + 2 * last[1] if name == "LSTM" else last
        return mg.cat([out.reshape(-1), h_n.reshape(-1)])

    assert mg.gradcheck(run, [x, h0, c0, *module.parameters()], atol=1e-7, rtol=1e-5)


def test_an_lstm_learns_to_recall_the_token_two_steps_back():
    """Untrained, the loss is chance (log 6 = 1.79); the answer is in the input two steps back, so an LSTM that
    learns to keep it gets the loss below 0.45 in 60 Adam steps (0.20 when measured)."""
    mg.manual_seed(0)
    vocab, lag = 6, 2
    embed, lstm, head = nn.Embedding(vocab, 8), nn.LSTM(8, 32, batch_first=True), nn.Linear(32, vocab)
    params = [*embed.parameters(), *lstm.parameters(), *head.parameters()]
    optimizer = optim.Adam(params, lr=0.02)
    rng = np.random.default_rng(0)
    losses = []
    for _ in range(60):
        ids = rng.integers(0, vocab, (32, 12))
        # forward
        out, _ = lstm(embed(ids))  # (B, T, 32)
        logits = head(out)[:, lag:]  # (B, T - lag, vocab): position t predicts the token at t - lag
        loss = F.cross_entropy(logits.reshape(-1, vocab), ids[:, :-lag].reshape(-1))
        # backward
        optimizer.zero_grad()
        loss.backward()
        # update
        optimizer.step()
        losses.append(loss.item())
    assert losses[0] > 1.6
    assert np.mean(losses[-5:]) < 0.45


def test_the_recurrent_names_are_no_longer_refused():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        from minigrad.nn import GRU, LSTM, RNN, GRUCell, LSTMCell, RNNCell  # noqa: F401
