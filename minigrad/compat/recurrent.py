"""Recurrent layers as in `torch.nn`: the cells `RNNCell`, `GRUCell`, `LSTMCell` (one time step) and the layers
`RNN`, `GRU`, `LSTM` (a whole sequence, `num_layers` deep, in one direction or both).

Composed from ops minigrad has (F.linear, sigmoid, tanh, stack, cat, dropout): backpropagation through time is
the engine's ordinary walk over the unrolled loop. The gate math is lecture 02's (tutorials/02_rnn_attention.py
writes the RNN step and a GRU cell by hand); what this file adds is PyTorch's conventions, so that a PyTorch program
and its state_dict run unchanged:
- the gates stacked in one weight in PyTorch's order, GRU [r | z | n] and LSTM [i | f | g | o], a block of
  hidden_size rows each: weight_ih is (gates * hidden_size, input_size), weight_hh (gates * hidden_size, hidden_size);
- two biases, bias_ih and bias_hh (cuDNN's layout). Their sum is the textbook's one bias, except in GRU's candidate,
  where the reset gate multiplies (W_hn h + b_hn) and so b_hn with it;
- the names weight_ih_l{k}, weight_hh_l{k}, bias_ih_l{k}, bias_hh_l{k}, with `_reverse` for the backward direction;
- every weight and bias drawn from U(-1/sqrt(hidden_size), 1/sqrt(hidden_size));
- shapes: input (L, N, H_in), (N, L, H_in) with batch_first, or unbatched (L, H_in); output (L, N, D * H) (D = 2
  when bidirectional); h_n (num_layers * D, N, H) whatever batch_first says.
Not covered (refused in one line): LSTM's proj_size.
Read next: ../nn/layers.py (Linear: every gate is one F.linear call).
"""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np

import minigrad.functional as F
from minigrad.nn import init
from minigrad.nn.module import Module, Parameter
from minigrad.tensor import Tensor


# The steps: `gi` is the input's share of the gates, x W_ih^T + b_ih, which a layer computes for all time steps in
# one matmul before its loop; the step adds the hidden state's share h W_hh^T + b_hh. -------------------------------
def rnn_cell(gi: Tensor, h: Tensor, w_hh: Tensor, b_hh: Tensor | None, nonlinearity: str = "tanh") -> Tensor:
    """One Elman step: h' = tanh(W_ih x + b_ih + W_hh h + b_hh) (relu instead of tanh when asked)."""
    a = gi + F.linear(h, w_hh, b_hh)
    return a.tanh() if nonlinearity == "tanh" else a.relu()


def gru_cell(gi: Tensor, h: Tensor, w_hh: Tensor, b_hh: Tensor | None) -> Tensor:
    """One GRU step, the gates in PyTorch's order [r | z | n]:

        r = sigmoid(W_ir x + b_ir + W_hr h + b_hr)        the reset gate: how much of h the candidate sees
        z = sigmoid(W_iz x + b_iz + W_hz h + b_hz)        the update gate: how much of h to keep
        n = tanh(W_in x + b_in + r * (W_hn h + b_hn))     the candidate
        h' = (1 - z) * n + z * h
    """
    i_r, i_z, i_n = gi.chunk(3, -1)
    h_r, h_z, h_n = F.linear(h, w_hh, b_hh).chunk(3, -1)
    r = (i_r + h_r).sigmoid()
    z = (i_z + h_z).sigmoid()
    n = (i_n + r * h_n).tanh()
    return (1 - z) * n + z * h


def lstm_cell(gi: Tensor, h: Tensor, c: Tensor, w_hh: Tensor, b_hh: Tensor | None) -> tuple[Tensor, Tensor]:
    """One LSTM step, the gates in PyTorch's order [i | f | g | o]:

        i = sigmoid(W_ii x + b_ii + W_hi h + b_hi)     the input gate: how much of g to write
        f = sigmoid(W_if x + b_if + W_hf h + b_hf)     the forget gate: how much of c to keep
        g = tanh(W_ig x + b_ig + W_hg h + b_hg)        the candidate content
        o = sigmoid(W_io x + b_io + W_ho h + b_ho)     the output gate
        c' = f * c + i * g,    h' = o * tanh(c')
    """
    a_i, a_f, a_g, a_o = (gi + F.linear(h, w_hh, b_hh)).chunk(4, -1)
    c = a_f.sigmoid() * c + a_i.sigmoid() * a_g.tanh()
    return a_o.sigmoid() * c.tanh(), c


def _reset_uniform(module: Module, hidden_size: int) -> None:
    """PyTorch's reset_parameters for recurrent modules: every weight and bias from U(-1/sqrt(H), 1/sqrt(H))."""
    bound = 1 / math.sqrt(hidden_size)
    for param in module.parameters():
        init.uniform_(param, -bound, bound)


# The cells: one step, on (N, H_in) or unbatched (H_in,). ----------------------------------------------------------
class RNNCellBase(Module):
    """A cell's parameters, as PyTorch's: weight_ih (gates * H, H_in), weight_hh (gates * H, H), bias_ih and
    bias_hh (gates * H) when `bias`."""

    def __init__(self, input_size: int, hidden_size: int, bias: bool, num_chunks: int, device: Any = None,
                 dtype: Any = None) -> None:
        super().__init__()
        self.input_size, self.hidden_size, self.bias = input_size, hidden_size, bias
        rows = num_chunks * hidden_size
        self.weight_ih = Parameter(np.zeros((rows, input_size)), dtype=dtype, device=device)
        self.weight_hh = Parameter(np.zeros((rows, hidden_size)), dtype=dtype, device=device)
        self.bias_ih = Parameter(np.zeros(rows), dtype=dtype, device=device) if bias else None
        self.bias_hh = Parameter(np.zeros(rows), dtype=dtype, device=device) if bias else None
        self.reset_parameters()

    def reset_parameters(self) -> None:
        _reset_uniform(self, self.hidden_size)

    def _batched(self, input: Tensor, states: Any, count: int) -> tuple[Tensor, list[Tensor], bool]:
        """(x (N, H_in), the states each (N, H), whether the input was batched): an unbatched input becomes a
        batch of one, and missing states are zeros."""
        name = type(self).__name__
        if input.ndim not in (1, 2):
            raise ValueError(f"{name}: Expected input to be 1D or 2D, got {input.ndim}D instead")
        batched = input.ndim == 2
        x = input if batched else input.unsqueeze(0)
        if states is None:
            return x, [_zeros((x.shape[0], self.hidden_size), x)] * count, batched
        states = list(states)
        for i, state in enumerate(states):
            if state.ndim not in (1, 2):
                raise ValueError(f"{name}: Expected hx[{i}] to be 1D or 2D, got {state.ndim}D instead")
            states[i] = state if batched else state.unsqueeze(0)
            if states[i].shape != (x.shape[0], self.hidden_size):  # else (1, H) would broadcast silently
                raise RuntimeError(f"{name}: hx[{i}] has shape {tuple(state.shape)}; expected "
                                   f"{(x.shape[0], self.hidden_size) if batched else (self.hidden_size,)}")
        return x, states, batched

    def extra_repr(self) -> str:
        return f"{self.input_size}, {self.hidden_size}" + ("" if self.bias else ", bias=False")


class RNNCell(RNNCellBase):
    """h' = tanh(W_ih x + b_ih + W_hh h + b_hh) (or relu): forward(input, hx=None) -> h'."""

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True, nonlinearity: str = "tanh",
                 device: Any = None, dtype: Any = None) -> None:
        super().__init__(input_size, hidden_size, bias, num_chunks=1, device=device, dtype=dtype)
        self.nonlinearity = _check_nonlinearity(nonlinearity)

    def forward(self, input: Tensor, hx: Tensor | None = None) -> Tensor:
        x, (h,), batched = self._batched(input, None if hx is None else [hx], 1)
        h = rnn_cell(F.linear(x, self.weight_ih, self.bias_ih), h, self.weight_hh, self.bias_hh, self.nonlinearity)
        return h if batched else h.squeeze(0)


class GRUCell(RNNCellBase):
    """One GRU step (gru_cell above): forward(input, hx=None) -> h'."""

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True, device: Any = None,
                 dtype: Any = None) -> None:
        super().__init__(input_size, hidden_size, bias, num_chunks=3, device=device, dtype=dtype)

    def forward(self, input: Tensor, hx: Tensor | None = None) -> Tensor:
        x, (h,), batched = self._batched(input, None if hx is None else [hx], 1)
        h = gru_cell(F.linear(x, self.weight_ih, self.bias_ih), h, self.weight_hh, self.bias_hh)
        return h if batched else h.squeeze(0)


class LSTMCell(RNNCellBase):
    """One LSTM step (lstm_cell above): forward(input, hx=None) -> (h', c'), hx being (h, c)."""

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True, device: Any = None,
                 dtype: Any = None) -> None:
        super().__init__(input_size, hidden_size, bias, num_chunks=4, device=device, dtype=dtype)

    def forward(self, input: Tensor, hx: tuple[Tensor, Tensor] | None = None) -> tuple[Tensor, Tensor]:
        x, (h, c), batched = self._batched(input, hx, 2)
        h, c = lstm_cell(F.linear(x, self.weight_ih, self.bias_ih), h, c, self.weight_hh, self.bias_hh)
        return (h, c) if batched else (h.squeeze(0), c.squeeze(0))


# The layers: a whole sequence, layer after layer. ------------------------------------------------------------------
class RecurrentBase(Module):
    """What RNN, GRU and LSTM share: the parameters of every layer and direction, and the loop over time.

    Layer k reads the sequence of layer k - 1's outputs (both directions side by side), with dropout between layers
    in training mode (not after the last). Each subclass says how many gate blocks its weights stack
    (`num_chunks`), how many states it carries (`num_states`: h, or h and c) and what one step is (`_step`).
    """

    num_chunks, num_states = 1, 1

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1, bias: bool = True,
                 batch_first: bool = False, dropout: float = 0.0, bidirectional: bool = False, proj_size: int = 0,
                 device: Any = None, dtype: Any = None) -> None:
        super().__init__()
        name = type(self).__name__
        if proj_size:
            raise NotImplementedError(f"{name}: minigrad has no proj_size; apply an nn.Linear to the output instead")
        if isinstance(dropout, bool) or not 0 <= dropout <= 1:
            raise ValueError(f"{name}: dropout should be a number in range [0, 1], got {dropout}")
        if hidden_size <= 0 or num_layers <= 0:
            raise ValueError(f"{name}: hidden_size and num_layers must be greater than zero")
        if dropout > 0 and num_layers == 1:  # PyTorch's warning: dropout acts only between layers
            warnings.warn(f"dropout option adds dropout after all but last recurrent layer, so non-zero dropout "
                          f"expects num_layers greater than 1, but got dropout={dropout} and num_layers=1",
                          stacklevel=2)
        self.input_size, self.hidden_size, self.num_layers, self.bias = input_size, hidden_size, num_layers, bias
        self.batch_first, self.dropout, self.bidirectional = batch_first, float(dropout), bidirectional
        self.proj_size, directions = 0, 2 if bidirectional else 1
        rows = self.num_chunks * hidden_size
        for layer in range(num_layers):
            columns = input_size if layer == 0 else directions * hidden_size
            for suffix in ("", "_reverse")[:directions]:
                shapes = {"weight_ih": (rows, columns), "weight_hh": (rows, hidden_size)}
                shapes.update({"bias_ih": (rows,), "bias_hh": (rows,)} if bias else {})
                for kind, shape in shapes.items():  # PyTorch's order: w_ih, w_hh, b_ih, b_hh per layer and direction
                    setattr(self, f"{kind}_l{layer}{suffix}", Parameter(np.zeros(shape), dtype=dtype, device=device))
        self.reset_parameters()

    def reset_parameters(self) -> None:
        _reset_uniform(self, self.hidden_size)

    def flatten_parameters(self) -> None:
        """Nothing to do: PyTorch packs the weights into one block for cuDNN here."""

    def forward(self, input: Tensor, hx: Any = None) -> tuple[Tensor, Any]:
        """(output, h_n), or (output, (h_n, c_n)) for LSTM; see the file's docstring for the shapes."""
        if input.ndim not in (2, 3):
            raise ValueError(f"{type(self).__name__}: Expected input to be 2D or 3D, got {input.ndim}D tensor instead")
        batched = input.ndim == 3
        x = input if batched else input.unsqueeze(1)  # unbatched: a batch of one
        if batched and self.batch_first:
            x = x.transpose(0, 1)  # (L, N, H_in): time first, the order the loop runs in
        states = self._initial_states(x, hx, batched)  # each (num_layers * D, N, H)
        directions = 2 if self.bidirectional else 1
        finals = []  # the last states, per layer and direction
        for layer in range(self.num_layers):
            outputs = []
            for direction in range(directions):
                k = layer * directions + direction
                output, last = self._scan(x, [state[k] for state in states], layer, direction)
                outputs.append(output)
                finals.append(last)
            x = outputs[0] if directions == 1 else F.concat(outputs, dim=2)  # (L, N, D * H)
            if layer < self.num_layers - 1:
                x = F.dropout(x, self.dropout, self.training)
        h_n = [F.stack([last[i] for last in finals]) for i in range(self.num_states)]  # (num_layers * D, N, H)
        if not batched:
            x, h_n = x.squeeze(1), [h.squeeze(1) for h in h_n]
        elif self.batch_first:
            x = x.transpose(0, 1)  # (N, L, D * H)
        return x, (h_n[0] if self.num_states == 1 else tuple(h_n))

    def _initial_states(self, x: Tensor, hx: Any, batched: bool) -> list[Tensor]:
        """hx checked against the input, as a list of (num_layers * D, N, H) tensors; zeros when not given."""
        if x.shape[-1] != self.input_size:
            raise RuntimeError(f"input.size(-1) must be equal to input_size. Expected {self.input_size}, "
                               f"got {x.shape[-1]}")
        if x.dtype != self.weight_ih_l0.dtype:
            raise ValueError(f"RNN input dtype ({x.dtype}) does not match weight dtype ({self.weight_ih_l0.dtype})")
        shape = ((2 if self.bidirectional else 1) * self.num_layers, x.shape[1], self.hidden_size)
        if hx is None:
            return [_zeros(shape, x)] * self.num_states
        states = [hx] if self.num_states == 1 else list(hx)
        ndim = 3 if batched else 2
        for i, state in enumerate(states):
            if state.ndim != ndim:
                raise RuntimeError(f"For {'batched 3-D' if batched else 'unbatched 2-D'} input, hx should also be "
                                   f"{ndim}-D but got {state.ndim}-D tensor")
            states[i] = state if batched else state.unsqueeze(1)
            if states[i].shape != shape:
                raise RuntimeError(f"Expected hidden size {shape}, got {list(states[i].shape)}")
        return states

    def _scan(self, x: Tensor, state: list[Tensor], layer: int, direction: int) -> tuple[Tensor, list[Tensor]]:
        """One layer in one direction over the sequence x (L, N, H_in): the outputs h_t (L, N, H), and the last
        states. The backward direction reads x from the end; its output at t is the state after reading x_t."""
        suffix = "_reverse" if direction else ""
        w_ih, w_hh, b_ih, b_hh = (self._parameters.get(f"{kind}_l{layer}{suffix}")
                                  for kind in ("weight_ih", "weight_hh", "bias_ih", "bias_hh"))
        gi = F.linear(x, w_ih, b_ih)  # (L, N, gates * H): the input's share of every gate, all steps in one matmul
        outputs: list[Any] = [None] * x.shape[0]
        for t in (reversed(range(x.shape[0])) if direction else range(x.shape[0])):
            state = self._step(gi[t], state, w_hh, b_hh)
            outputs[t] = state[0]
        return F.stack(outputs), state

    def _step(self, gi: Tensor, state: list[Tensor], w_hh: Tensor, b_hh: Tensor | None) -> list[Tensor]:
        raise NotImplementedError

    def extra_repr(self) -> str:
        options = {"num_layers": 1, "bias": True, "batch_first": False, "dropout": 0.0, "bidirectional": False}
        changed = "".join(f", {key}={getattr(self, key)}" for key, default in options.items()
                          if getattr(self, key) != default)
        return f"{self.input_size}, {self.hidden_size}{changed}"


class RNN(RecurrentBase):
    """Elman RNN: h_t = tanh(W_ih x_t + b_ih + W_hh h_(t-1) + b_hh), or relu; forward(input, hx=None) ->
    (output, h_n)."""

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1, nonlinearity: str = "tanh",
                 bias: bool = True, batch_first: bool = False, dropout: float = 0.0, bidirectional: bool = False,
                 device: Any = None, dtype: Any = None) -> None:
        _check_nonlinearity(nonlinearity)
        super().__init__(input_size, hidden_size, num_layers, bias, batch_first, dropout, bidirectional,
                         device=device, dtype=dtype)
        self.nonlinearity = nonlinearity

    def _step(self, gi: Tensor, state: list[Tensor], w_hh: Tensor, b_hh: Tensor | None) -> list[Tensor]:
        return [rnn_cell(gi, state[0], w_hh, b_hh, self.nonlinearity)]


class GRU(RecurrentBase):
    """GRU layers (gru_cell above at each step): forward(input, hx=None) -> (output, h_n)."""

    num_chunks = 3

    def _step(self, gi: Tensor, state: list[Tensor], w_hh: Tensor, b_hh: Tensor | None) -> list[Tensor]:
        return [gru_cell(gi, state[0], w_hh, b_hh)]


class LSTM(RecurrentBase):
    """LSTM layers (lstm_cell above at each step): forward(input, hx=None) -> (output, (h_n, c_n)), hx being
    (h_0, c_0)."""

    num_chunks, num_states = 4, 2

    def _step(self, gi: Tensor, state: list[Tensor], w_hh: Tensor, b_hh: Tensor | None) -> list[Tensor]:
        return list(lstm_cell(gi, state[0], state[1], w_hh, b_hh))


def _check_nonlinearity(nonlinearity: str) -> str:
    if nonlinearity not in ("tanh", "relu"):
        raise ValueError(f"Unknown nonlinearity '{nonlinearity}'. Select from 'tanh' or 'relu'.")
    return nonlinearity


def _zeros(shape: tuple[int, ...], like: Tensor) -> Tensor:
    """Zeros of `shape` with the dtype and device of `like` (a state nobody passed)."""
    return Tensor(np.zeros(shape), dtype=like.dtype, device=like.device)
