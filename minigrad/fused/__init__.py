"""Fused ops: the functions a network spends its time in, each with a hand-derived backward, its composed
twin, and the kernels that implement it faster.

An op in ops/ is a primitive: its backward is the chain rule for one step. A fused op is a whole function
(softmax, a loss, layer norm, attention) computed in one node: its backward is derived on paper, written out
in NumPy, and numerically stable where the composition is not (softmax subtracts the row maximum; the losses
never take log(0)). Each has a twin in twins.py, the same function composed from primitive ops, which
tests/test_fused.py holds it to and which double backward differentiates (higher_order.py). kernels/ holds
the faster implementations of their array steps, each selected once and tested equal to the NumPy code.

The files (README.md's reading order takes them in this order, then minigpt/model.py):
- softmax.py: softmax and log-softmax (the row maximum subtracted; the Jacobian applied without forming it);
- cross_entropy.py: cross-entropy, NLL and binary cross-entropy, with PyTorch's layouts and reductions;
- layer_norm.py, gelu.py (the exact GELU and GPT-2's tanh form), embedding.py, dropout.py;
- attention.py: scaled dot-product attention, the formula;
- twins.py: every one of them composed from primitive ops.
Read next: softmax.py.
"""

from minigrad.fused import attention, cross_entropy, dropout, embedding, gelu, layer_norm, softmax

__all__ = ["attention", "cross_entropy", "dropout", "embedding", "gelu", "layer_norm", "softmax"]
