"""The core: what a learner reads to understand backpropagation (README.md gives the one reading order).

- function.py: `Function`, one differentiable op: its forward and backward side by side, and `apply`, which
  records it in the graph (define-by-run);
- autograd.py: the backward walk, in two steps (order the graph; apply the chain rule); at its edges,
  gradients.py (adding gradients up without aliasing) and observers.py (tensor hooks, anomaly detection, drawing);
- higher_order.py: double backward, by the route each op declares;
- grad_mode.py (the `no_grad` switch), backend.py (NumPy, CuPy and the strict stand-in, strict_device.py),
  dtypes.py (PyTorch's dtype promotion).
The Tensor class itself is ../tensor/tensor.py. Nothing here imports a kernel or a PyTorch compatibility name.
"""
