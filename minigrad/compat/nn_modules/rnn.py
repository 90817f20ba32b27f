"""`torch.nn.modules.rnn`'s path: the recurrent layers and cells (../../compat/recurrent.py)."""

from minigrad.compat.recurrent import GRU, LSTM, RNN, GRUCell, LSTMCell, RNNCell

__all__ = ["GRU", "GRUCell", "LSTM", "LSTMCell", "RNN", "RNNCell"]
