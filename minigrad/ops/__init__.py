"""The ops, one class each, grouped by kind: elementwise, reduce, shape, linalg and fused nn ops.

Read elementwise.py first: its ops are the chain rule at its simplest.
"""

from minigrad.ops import elementwise, linalg, nn, reduce, shape

__all__ = ["elementwise", "linalg", "nn", "reduce", "shape"]
