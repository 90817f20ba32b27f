"""The ops, one class each, grouped by kind: elementwise, activations, reduce, shape, indexing, linalg, the fused
neural-network ops (nn) and losses; special.py holds erf, which NumPy lacks.

Read elementwise.py first: its ops are the chain rule at its simplest.
"""

from minigrad.ops import activations, elementwise, indexing, linalg, losses, nn, reduce, shape, special

__all__ = ["activations", "elementwise", "indexing", "linalg", "losses", "nn", "reduce", "shape", "special"]
