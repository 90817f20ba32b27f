"""The core: what a learner reads to understand backpropagation, in this order.

1. function.py: `Function`, one differentiable op: its forward and backward side by side, and `apply`, which
   records it in the graph (define-by-run);
2. autograd.py: the backward walk, in two steps (order the graph; apply the chain rule);
3. ../ops/elementwise.py: the primitive ops, one class each, the derivative in the docstring;
4. higher_order.py: double backward, each op's backward run again on tensors;
5. grad_mode.py (the `no_grad` switch), backend.py (NumPy, CuPy and the strict stand-in, strict_device.py),
   dtypes.py (PyTorch's dtype promotion).
The Tensor class itself is ../tensor/tensor.py. Nothing here imports a kernel or a PyTorch compatibility name.
"""
