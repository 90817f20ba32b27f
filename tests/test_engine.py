"""The engine itself: the backward pass, gradient accumulation, graph release, no_grad, memory, dtypes,
devices and gradcheck. Each test is one promise of API.md, kept permanently.

Read next: test_errors.py.
"""

import gc
import threading
import weakref

import numpy as np
import pytest

import minigrad as mg
import minigrad.functional as F


# The backward pass -------------------------------------------------------------------------------------------------
def test_a_100_000_op_chain_backpropagates_without_recursion():
    x = mg.tensor([1.0], dtype="float64", requires_grad=True)
    y = x
    for _ in range(100_000):  # far past Python's recursion limit (1000)
        y = y * 1.0000001
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [1.0000001**100_000], rtol=1e-9)


def test_a_node_used_twice_gets_both_gradients(device):
    a = mg.tensor([1.0, 2.0], requires_grad=True, device=device)
    b = a + a
    c = b + b  # c = 4a
    c.sum().backward()
    assert a.grad.numpy().tolist() == [4.0, 4.0]


def test_gradients_accumulate_across_backward_calls_until_zeroed(device):
    a = mg.tensor([1.0, 2.0], requires_grad=True, device=device)
    (a * 3).sum().backward()
    (a * 3).sum().backward()
    assert a.grad.numpy().tolist() == [6.0, 6.0]
    a.zero_grad()
    assert a.grad is None


def test_gradients_of_two_leaves_never_share_memory(device):
    a = mg.tensor([1.0, 2.0], requires_grad=True, device=device)
    b = mg.tensor([3.0, 4.0], requires_grad=True, device=device)
    (a + b).sum().backward()  # add hands the same upstream gradient to both inputs
    a.grad.array += 1
    assert b.grad.numpy().tolist() == [1.0, 1.0]


def test_backward_takes_an_explicit_gradient_as_a_tensor_or_an_array(device):
    for grad in (mg.tensor([1.0, 10.0], device=device), np.array([1.0, 10.0]), [1.0, 10.0]):
        a = mg.tensor([1.0, 2.0], requires_grad=True, device=device)
        (a * a).backward(grad)
        assert a.grad.numpy().tolist() == [2.0, 40.0]


def test_the_graph_keeps_its_structure_after_backward_but_not_its_buffers():
    a = mg.tensor([1.0, 2.0], requires_grad=True)
    loss = (a.exp() * 2).sum()
    loss.backward()
    assert loss.grad_fn.name == "Sum" and loss.grad_fn.parents[0].grad_fn.name == "Mul"  # still drawable
    assert loss.grad_fn.parents[0].grad_fn.released


def test_a_second_backward_needs_retain_graph(device):
    a = mg.tensor([1.0, 2.0], requires_grad=True, device=device)
    loss = (a * a).sum()
    loss.backward(retain_graph=True)
    loss.backward()  # allowed: the first call kept the buffers
    assert a.grad.numpy().tolist() == [4.0, 8.0]
    with pytest.raises(RuntimeError, match="second time.*retain_graph=True"):
        loss.backward()  # the second call released them



def test_grad_sums_the_seeds_of_an_output_given_twice(device):
    """`mg.grad([y, y], x)` counts y twice, as torch.autograd.grad does: both seeds add up."""
    torch = pytest.importorskip("torch")
    x = mg.tensor([1.0, 2.0, 3.0], requires_grad=True, device=device)
    y = x * x
    seeds = [np.array([1.0, 10.0, 100.0]), np.array([2.0, 20.0, 200.0])]
    (gx,) = mg.grad([y, y], x, grad_outputs=seeds, retain_graph=True)
    xt = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    yt = xt * xt
    (expected,) = torch.autograd.grad([yt, yt], xt, grad_outputs=[torch.tensor(g, dtype=torch.float32) for g in seeds])
    np.testing.assert_allclose(gx.numpy(), expected.numpy())  # [6, 120, 1800]: a version keeping one seed fails
    (gs,) = mg.grad([y.sum(), y.sum()], x)  # default seeds (ones), two distinct outputs
    np.testing.assert_allclose(gs.numpy(), [4.0, 8.0, 12.0])

# no_grad ---------------------------------------------------------------------------------------------------------
def test_no_grad_records_no_graph():
    a = mg.tensor([1.0], requires_grad=True)
    with mg.no_grad():
        y = a * 2
    assert not y.requires_grad and y.grad_fn is None
    assert mg.is_grad_enabled()
    with pytest.raises(RuntimeError, match="no_grad"):
        y.backward()


def test_no_grad_as_a_decorator():
    @mg.no_grad()
    def evaluate(x):
        assert not mg.is_grad_enabled()
        return x * 2

    assert evaluate.__name__ == "evaluate"
    assert evaluate(mg.tensor([1.0], requires_grad=True)).grad_fn is None
    assert mg.is_grad_enabled()


def test_grad_mode_is_per_thread():
    """Defect: grad mode was one switch for the whole process, so while one thread evaluated under no_grad,
    another thread's graphs went unrecorded. (PyTorch's grad mode is per thread.)"""
    x = mg.ones(2, requires_grad=True)
    worker_inside, main_done = threading.Event(), threading.Event()
    seen = {}

    def evaluate():
        with mg.no_grad():
            worker_inside.set()
            main_done.wait(10)
            seen["worker"] = mg.is_grad_enabled()

    worker = threading.Thread(target=evaluate)
    worker.start()
    assert worker_inside.wait(10)
    y = x * 2  # in this thread, while the worker is inside no_grad
    seen["main"] = mg.is_grad_enabled()
    main_done.set()
    worker.join()
    assert y.requires_grad and y.grad_fn is not None
    assert seen == {"main": True, "worker": False}


def test_a_new_thread_starts_with_grad_enabled():
    seen = []
    with mg.no_grad():
        thread = threading.Thread(target=lambda: seen.append(mg.is_grad_enabled()))
        thread.start()
        thread.join()
    assert seen == [True]


def test_enable_grad_and_set_grad_enabled():
    x = mg.ones(1, requires_grad=True)
    with mg.no_grad():
        with mg.enable_grad():
            assert (x * 2).requires_grad
        assert not (x * 2).requires_grad
    with mg.set_grad_enabled(False):
        assert not mg.is_grad_enabled()
    assert mg.is_grad_enabled()
    mg.set_grad_enabled(False)  # a plain call switches at once, as torch.set_grad_enabled
    try:
        assert not (x * 2).requires_grad
    finally:
        mg.set_grad_enabled(True)

    @mg.set_grad_enabled(False)
    def evaluate():
        return mg.is_grad_enabled()

    assert mg.is_grad_enabled() and evaluate() is False and mg.is_grad_enabled()


def test_no_grad_is_restored_after_an_exception():
    with pytest.raises(KeyError), mg.no_grad():
        raise KeyError("an error inside the block")
    assert mg.is_grad_enabled()


# Memory ----------------------------------------------------------------------------------------------------------
def test_intermediates_are_freed_by_reference_counting_alone():
    """No reference cycles: with the garbage collector off, an intermediate dies with its graph."""
    gc.disable()
    try:
        x = mg.randn(3, requires_grad=True)
        hidden = x.tanh()
        alive = weakref.ref(hidden)
        loss = (hidden * 2).sum()
        del hidden
        loss.backward()
        assert alive() is not None  # the graph (kept for drawing) still holds it
        del loss
        assert alive() is None
        assert x.grad is not None
    finally:
        gc.enable()


# dtypes ----------------------------------------------------------------------------------------------------------
def test_default_dtypes():
    assert mg.tensor(1.0).dtype == np.float32
    assert mg.tensor(np.zeros(2)).dtype == np.float32  # float arrays become float32 too...
    assert mg.tensor(np.zeros(2), dtype="float64").dtype == np.float64  # ...unless dtype says otherwise
    assert mg.tensor([1, 2]).dtype == np.int64  # integers stay integers (token ids, indices)
    assert mg.tensor([True]).dtype == np.bool_
    assert mg.zeros(2).dtype == mg.ones(2).dtype == mg.randn(2).dtype == np.float32
    assert mg.arange(3).dtype == np.int64


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_every_op_keeps_the_float_dtype(device, dtype):
    """float32 stays float32 (speed) and float64 stays float64 (gradient checks), through every op."""
    x = mg.randn(2, 3, 4, dtype=dtype, device=device, requires_grad=True)
    w = mg.randn(4, dtype=dtype, device=device, requires_grad=True)
    results = [
        x + 1, 2 - x, x * w, x / 3, x**2, 2.0**x, -x, x @ x.swapaxes(-1, -2), x @ w,
        x.exp(), x.abs(), x.abs().sqrt(), x.abs().log(), x.tanh(), x.sigmoid(), x.relu(), x.gelu(),
        x.sum(axis=1), x.mean(), x.amax(dim=-1, keepdim=True), x.max(-1).values, x.var(axis=(0, 2)),
        x.min(), x.amin(1), x.std(1), x.prod(1), x.cumsum(2), x.logsumexp(2), x.norm(dim=2), x.clamp(-1, 1),
        x.maximum(w), x.minimum(0.5), x.sign(), x.square(), x.abs().rsqrt(), x.sin(), x.cos(), x.erf(),
        F.gelu(x, approximate="tanh"), F.silu(x), F.softplus(x), F.leaky_relu(x), F.elu(x), F.mse_loss(x, w),
        F.binary_cross_entropy(x.sigmoid(), np.full(x.shape, 0.5)), F.binary_cross_entropy_with_logits(x, x.sigmoid()),
        F.nll_loss(x.log_softmax(1), np.zeros((2, 4), dtype=np.int64)), F.normalize(x, dim=2),
        x.reshape(-1), x.permute(2, 0, 1), x.transpose(0, 2), x.mT, x[0, :, None], x[np.array([1, 1])],
        x[0, :, [1, 1]], x.unsqueeze(1).squeeze(), x.flatten(1), x.expand(2, 2, 3, 4), x.repeat(1, 2, 1),
        x.flip(0), x.tril(), x.gather(2, np.zeros((2, 3, 1), dtype=np.int64)), x.clone(), x.split(1)[0],
        x.softmax(), x.log_softmax(axis=0), x.masked_fill(np.eye(3, 4, dtype=bool), -1.0),
        mg.concat([x, x], axis=1), mg.stack([x, x]), mg.where(x > 0, x, 0.0),
        F.cross_entropy(x, np.zeros((2, 4), dtype=np.int64)), F.embedding(np.array([0, 2]), x[0]),
        F.layer_norm(x, 4, w, w), F.dropout(x, 0.5), F.gelu(x),
        F.scaled_dot_product_attention(x, x, x, attn_mask=np.zeros((3, 3))),
    ]
    for i, y in enumerate(results):
        assert y.dtype == dtype, f"result {i} is {y.dtype}"
    sum(y.sum() for y in results[1:]).backward()  # (results[0] would not change anything)
    assert x.grad.dtype == w.grad.dtype == dtype


# Devices ---------------------------------------------------------------------------------------------------------
def test_mixing_devices_raises():
    with pytest.raises(RuntimeError, match=r"different devices \(cpu, strict\)"):
        mg.ones(2) + mg.ones(2, device="strict")


def test_to_round_trips_and_is_differentiable():
    x = mg.tensor([1.0, 2.0], requires_grad=True)
    assert x.to("cpu") is x
    on_device = x.to("strict")
    assert on_device.device == "strict" and on_device.to("cpu").numpy().tolist() == [1.0, 2.0]
    (on_device * 3).sum().backward()
    assert x.grad.device == "cpu" and x.grad.numpy().tolist() == [3.0, 3.0]


# gradcheck -------------------------------------------------------------------------------------------------------
class WrongSquare(mg.Function):
    """y = x**2 with a deliberately wrong backward: dy/dx = x instead of 2x."""

    def forward(self, x):
        self.x = x
        return x * x

    def backward(self, gy):
        return gy * self.x


def test_gradcheck_names_the_input_the_element_and_both_values():
    a = mg.tensor([0.5, 1.0], dtype="float64", requires_grad=True)
    b = mg.tensor([1.0, -2.0, 3.0], dtype="float64", requires_grad=True)
    assert mg.gradcheck(lambda a, b: a.sum() * b * b, [a, b])
    with pytest.raises(mg.GradcheckError, match=r"input 1 \(shape \(3,\)\) is wrong at element \(2,\): "
                                                r"analytic -?[\d.]+, numeric -?[\d.]+"):
        mg.gradcheck(lambda a, b: a.sum() * WrongSquare.apply(b), [a, b])


def test_gradcheck_insists_on_float64():
    with pytest.raises(TypeError, match="float64"):
        mg.gradcheck(lambda x: x * 2, [mg.tensor([1.0], requires_grad=True)])


# Construction -----------------------------------------------------------------------------------------------------
def test_a_tensor_copies_the_array_it_is_made_from(device):
    array = np.array([1.0, 2.0], dtype=np.float32)
    x = mg.tensor(array, device=device)
    x.array += 1  # as an optimizer step does
    assert array.tolist() == [1.0, 2.0]
    w = mg.tensor([3.0], requires_grad=True, device=device)
    y = w * array  # Mul saves the array for backward (dy/dw = array)...
    array[:] = 0  # ...so changing the caller's array afterwards must not change the gradient
    y.sum().backward()
    assert w.grad.numpy().tolist() == [3.0]


def test_one_no_grad_object_can_be_entered_twice_nested():
    switch = mg.no_grad()
    with switch:
        with switch:
            assert not mg.is_grad_enabled()
        assert not mg.is_grad_enabled()
    assert mg.is_grad_enabled()


def test_integer_tensors_meeting_floats_become_float32_not_float64():
    """As in PyTorch: positions from `arange` must not turn a float32 model into float64."""
    assert (mg.arange(4) / 4).dtype == np.float32
    assert (mg.tensor([1, 2]) * 0.5).dtype == np.float32
    assert (mg.arange(4) + mg.ones(4)).dtype == np.float32
    assert (mg.arange(4) / mg.tensor([1, 2, 3, 4])).dtype == np.float32
    assert (mg.arange(4) + 1).dtype == np.int64
    assert (mg.ones(2, dtype=np.float64) * mg.arange(2)).dtype == np.float64


def test_a_tensor_made_from_a_tensor_is_a_copy():
    original = mg.tensor([1.0, 2.0])
    copy = mg.tensor(original)
    copy.array[0] = 5.0
    assert original.numpy().tolist() == [1.0, 2.0]


def test_comparisons_across_devices_name_them():
    with pytest.raises(RuntimeError, match=r"less: inputs are on different devices \(cpu, strict\)"):
        _ = mg.tensor([1.0]) < mg.tensor([1.0], device="strict")


def test_a_fresh_gradient_becomes_the_leaf_grad_and_a_shared_one_is_copied():
    """Fresh arrays an op returns need no copy; gy handed to two inputs (a + b) must not be shared."""
    a = mg.randn(3, requires_grad=True)
    b = mg.randn(3, requires_grad=True)
    (a + b).sum().backward()
    assert a.grad.array is not b.grad.array
    a.grad.array += 1  # an in-place change to one gradient (clip_grad_norm_ does this) ...
    np.testing.assert_array_equal(b.grad.numpy(), np.ones(3))  # ... never reaches the other
