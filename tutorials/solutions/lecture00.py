"""第 00 讲练习的参考答案（题目在 tutorials/exercises/lecture00.py）。先自己做，再来对照。"""

import numpy as np

import minigrad as mg


def central_difference(f, x: float, h: float = 1e-5) -> float:
    return (f(x + h) - f(x - h)) / (2 * h)  # x + h and x - h are 2h apart


class Mul(mg.Function):
    """z = a * b; dz/da = b, dz/db = a."""

    def forward(self, a, b):
        self.a, self.b = a, b
        return a * b

    def backward(self, gy):
        return gy * self.b, gy * self.a  # each input gets the upstream gradient times the *other* input


class Tanh(mg.Function):
    """y = tanh(x); dy/dx = 1 - y**2."""

    def forward(self, x):
        self.y = np.tanh(x)
        return self.y

    def backward(self, gy):
        return gy * (1 - self.y**2)


class Div(mg.Function):
    """z = a / b; dz/da = 1 / b, dz/db = -a / b**2."""

    def forward(self, a, b):
        self.a, self.b = a, b
        return a / b

    def backward(self, gy):
        return gy / self.b, -gy * self.a / self.b**2


def nth_derivative(f, x: mg.Tensor, n: int) -> mg.Tensor:
    y = f(x)
    for _ in range(n):
        # f acts elementwise, so the derivative of the sum with respect to x_i is the derivative at x_i; with
        # create_graph the result keeps a graph, and the next round can differentiate it again.
        (y,) = mg.grad(y.sum(), x, create_graph=True)
    return y


def fastest_learning_rate(steps_with) -> float:
    lr = 1e-4
    while steps_with(lr) is None:  # too small: 3000 steps are not enough; double until it arrives
        lr *= 2
    while steps_with(lr * 2) is not None:  # double until descent diverges: the edge is between lr and 2 lr
        lr *= 2
    candidates = [lr * (1 + k / 24) for k in range(25)]  # then look closely just below the edge
    runs = {c: steps_with(c) for c in candidates}
    return min((c for c in runs if runs[c] is not None), key=runs.get)
