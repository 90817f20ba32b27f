"""The ops, one class each, grouped by kind: elementwise, reduce, shape, indexing, linalg and fused nn ops.

Read elementwise.py first: its ops are the chain rule at its simplest.
"""

from minigrad.ops import elementwise, indexing, linalg, nn, reduce, shape

__all__ = ["elementwise", "indexing", "linalg", "nn", "reduce", "shape"]
