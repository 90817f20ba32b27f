"""The primitive ops, one class each, grouped by kind: elementwise, activations, reduce, shape, indexing,
scatter, linalg (erf on arrays, which NumPy lacks, is ../kernels/special.py). Each op's backward is the chain
rule for one step.

The hand-derived ops that stand for a whole function (softmax, the losses, layer norm, GELU, embedding, dropout,
attention) are in ../fused/, beside their composed twins.
Read elementwise.py first: its ops are the chain rule at its simplest.
"""

from minigrad.ops import activations, elementwise, indexing, linalg, reduce, scatter, shape

__all__ = ["activations", "elementwise", "indexing", "linalg", "reduce", "scatter", "shape"]
