"""Each compiled CPU kernel (minigrad/kernels/numba_*.py) equals the NumPy op it implements, forward and
backward, within float32 rounding: over hypothesis-drawn shapes with -inf masks, fully masked rows, NaN, empty
and 1-element arrays and strided (non-contiguous) inputs. The NumPy ops are the specification.

Skipped when numba (the optional extra `fast`) is not installed. Read next: test_fused.py.
"""

import os
import subprocess
import sys
import time
import warnings

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from minigrad import kernels, optim
from minigrad.fused.cross_entropy import CrossEntropy, reduce_losses, row_scale
from minigrad.fused.embedding import Embedding
from minigrad.fused.gelu import GELU
from minigrad.fused.layer_norm import LayerNorm
from minigrad.fused.softmax import LogSoftmax, Softmax
from minigrad.kernels.softmax_rows import stable_softmax
from minigrad.tensor import Tensor

numba = pytest.importorskip("numba", reason="the compiled kernels need numba: pip install -e '.[fast]'")
# The drawn inputs hold NaN and inf on purpose (they must pass through a kernel as through the NumPy op), and the
# NumPy op warns on them as NumPy does: that warning is expected here, not a finding.
pytestmark = pytest.mark.filterwarnings("ignore:invalid value encountered:RuntimeWarning")

from minigrad.kernels import (  # noqa: E402 (after the skip: these compile only with numba)
    causal_rows,
    numba_adamw,
    numba_cross_entropy,
    numba_embedding,
    numba_gelu,
    numba_layernorm,
    numba_setup,
    numba_softmax,
)
from minigrad.kernels.numba_math import exp32  # noqa: E402

RTOL, ATOL = 2e-5, 2e-6  # float32 rounding: a few ulp of each value, and of values near 0


@pytest.fixture(autouse=True)
def _reference_ops():
    """The ops (GELU, Softmax, AdamW, ...) run their NumPy code here, since numba is installed and each op would
    otherwise call the very kernel it is the reference for; the tests call the kernels directly."""
    with kernels.using("numpy"):
        yield


def assert_close(actual, expected, name, rtol=RTOL, atol=ATOL):
    """Equal within float32 rounding, with NaN where the reference has NaN (and only there), and equal infs."""
    assert actual.shape == expected.shape, f"{name}: shape {actual.shape} != {expected.shape}"
    assert actual.dtype == expected.dtype, f"{name}: dtype {actual.dtype} != {expected.dtype}"
    np.testing.assert_allclose(actual, expected, rtol=rtol, atol=atol, equal_nan=True, err_msg=name)


@st.composite
def arrays(draw, shape, special=True):
    """A float32 array of `shape`: normal values, some -inf, a NaN, or whole -inf rows; maybe a strided view."""
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    x = np.asarray(rng.standard_normal(shape) * draw(st.sampled_from([1.0, 4.0])), dtype=np.float32)
    if special and x.size:
        kind = draw(st.sampled_from(["plain", "-inf mask", "masked rows", "nan"]))
        if kind == "-inf mask":
            x[np.asarray(rng.random(shape) < 0.3)] = -np.inf
        elif kind == "masked rows" and x.ndim:
            x[rng.random(shape[:-1]) < 0.5] = -np.inf
        elif kind == "nan":
            x.reshape(-1)[rng.integers(x.size)] = np.nan
    if draw(st.booleans()):  # the same values, as a non-contiguous view
        wide = np.zeros(shape[:-1] + (2 * shape[-1],) if shape else (2,), np.float32)
        wide[..., ::2] = x
        x = wide[..., ::2] if shape else wide[::2].reshape(())
    return x


shapes = st.lists(st.integers(0, 7), min_size=0, max_size=3).map(tuple)
row_shapes = st.lists(st.integers(0, 5), min_size=0, max_size=2).map(tuple).flatmap(
    lambda lead: st.integers(1, 40).map(lambda n: lead + (n,)))  # at least 1-d, the last axis non-empty
one_element = st.sampled_from([(), (1,), (1, 1)])


def test_exp32_within_a_few_ulp_inside_a_fast_math_kernel():
    loop = numba.njit(fastmath=numba_setup.FASTMATH, error_model="numpy")(_exp_loop)
    x = np.concatenate([np.linspace(-87, 88.7, 400_001, dtype=np.float32),
                        np.array([-np.inf, np.inf, np.nan, 0.0, -100.0, 89.0], np.float32)])
    y = np.empty_like(x)
    loop(x, y)
    true = np.exp(x.astype(np.float64))
    normal = (true > 2e-38) & (true < 3.4e38)
    ulp = np.abs(y[normal] - true[normal]) / np.spacing(true[normal].astype(np.float32))
    assert ulp.max() < 5 and ulp.mean() < 2, (ulp.max(), ulp.mean())
    np.testing.assert_array_equal(y[-6:], np.array([0.0, np.inf, np.nan, 1.0, 0.0, np.inf], np.float32))


def _exp_loop(x, y):
    for i in range(x.size):
        y[i] = exp32(x[i])


@settings(max_examples=40)
@given(x=st.one_of(shapes, one_element).flatmap(arrays), seed=st.integers(0, 99))
def test_gelu(x, seed):
    op = GELU()
    y_ref = op.forward(x)
    y, slope = numba_gelu.gelu_forward(x)
    assert_close(y, y_ref, "y")
    assert_close(slope, op.slope, "slope")
    gy = np.random.default_rng(seed).standard_normal(x.shape).astype(np.float32)
    assert_close(numba_gelu.gelu_backward(gy, slope), op.backward(gy), "gx")


@given(x=st.one_of(row_shapes, one_element.filter(bool)).flatmap(arrays), affine=st.sampled_from(["wb", "w", "-"]))
def test_layer_norm(x, affine):
    n, rng = x.shape[-1], np.random.default_rng(0)
    weight = rng.standard_normal(n).astype(np.float32) if affine != "-" else None
    bias = rng.standard_normal(n).astype(np.float32) if affine == "wb" else None
    op = LayerNorm(eps=1e-5)
    y_ref = op.forward(x, weight, bias)
    y, xhat, rstd = numba_layernorm.layer_norm_forward(x, weight, bias, 1e-5)
    assert_close(y, y_ref, "y", rtol=1e-4, atol=1e-5)
    assert_close(xhat, op.xhat, "xhat", rtol=1e-4, atol=1e-5)
    assert_close(rstd, op.rstd, "rstd", rtol=1e-4)
    gy = rng.standard_normal(x.shape).astype(np.float32)
    expected = op.backward(gy)
    gx, gw, gb = numba_layernorm.layer_norm_backward(gy, xhat, rstd, weight, bias is not None)
    got = [g for g in (gx, gw, gb) if g is not None]
    assert len(got) == len(expected)
    for name, g, g_ref in zip(["gx", "gw", "gb"], got, expected):
        assert_close(g, g_ref, name, rtol=1e-4, atol=1e-4)


@given(x=st.one_of(row_shapes, shapes.filter(bool), one_element.filter(bool)).flatmap(arrays), data=st.data())
def test_softmax_and_log_softmax(x, data):
    """(At least 1-d: the NumPy functions themselves take no 0-d array; the Tensor methods reshape one first.)"""
    axis = data.draw(st.integers(-x.ndim, x.ndim - 1))
    gy = np.random.default_rng(1).standard_normal(x.shape).astype(np.float32)
    with np.errstate(invalid="ignore"):  # the references' -inf - -inf on fully masked rows
        for safe in (False, True):
            assert_close(numba_softmax.softmax_forward(x, axis, safe=safe),
                         stable_softmax(x.copy(), axis, safe=safe), f"softmax safe={safe}")
        for op_class, forward, backward in [
            (Softmax, numba_softmax.softmax_forward, numba_softmax.softmax_backward),
            (LogSoftmax, numba_softmax.log_softmax_forward, numba_softmax.log_softmax_backward),
        ]:
            op = op_class(axis=axis)
            y_ref = op.forward(x)
            y = forward(x, axis)
            assert_close(y, y_ref, f"{op_class.__name__} y")
            assert_close(backward(gy, y, axis), op.backward(gy), f"{op_class.__name__} gx")


@given(x=st.tuples(st.integers(0, 9), st.integers(1, 30)).flatmap(arrays), data=st.data(),
       reduction=st.sampled_from(["mean", "sum", "none"]), weighted=st.booleans(),
       smoothing=st.sampled_from([0.0, 0.1]))
def test_cross_entropy(x, data, reduction, weighted, smoothing):
    n, c = x.shape
    targets = np.array(data.draw(st.lists(st.integers(-1, c - 1), min_size=n, max_size=n)), dtype=np.int64)
    weight = np.linspace(0.5, 2.0, c).astype(np.float32) if weighted else None
    op = CrossEntropy(targets=targets, weight=weight, ignore_index=-1, reduction=reduction, label_smoothing=smoothing)
    with np.errstate(invalid="ignore", divide="ignore"):
        loss_ref = op.forward(x)
        gy = np.asarray(np.random.default_rng(2).standard_normal(np.shape(loss_ref)), np.float32)
        gz_ref = op.backward(gy)
        losses, probs = numba_cross_entropy.cross_entropy_forward(x, op.t, op.w_t, op.counted, op.cast_weight,
                                                                  smoothing)
        loss = reduce_losses(losses, op.total_weight, reduction, targets.shape)
        scale = row_scale(gy, op.total_weight, reduction, op.counted)
        gz = numba_cross_entropy.cross_entropy_backward(probs, op.t, op.w_t, op.counted, op.cast_weight, smoothing,
                                                        scale)
    assert_close(probs, op.probs, "probs")
    assert_close(np.asarray(loss), np.asarray(loss_ref), "loss", rtol=1e-4, atol=1e-5)
    assert_close(gz, gz_ref, "gz")


@pytest.mark.parametrize("cls", [optim.AdamW, optim.Adam])
@given(shape=st.one_of(shapes, one_element).filter(bool), seed=st.integers(0, 99), strided_grad=st.booleans())
def test_adam_step_is_the_optimizers_step(cls, shape, seed, strided_grad):
    """(Not 0-d: the optimizer's own step fails on a 0-d parameter today, NumPy making a scalar of g - m.)"""
    rng = np.random.default_rng(seed)
    p0 = rng.standard_normal(shape).astype(np.float32)
    param = Tensor(p0.copy(), requires_grad=True)
    opt = cls([param], lr=0.01, weight_decay=0.1)
    p, m, v = p0.copy(), np.zeros_like(p0), np.zeros_like(p0)
    for step in range(1, 4):
        g = rng.standard_normal(shape).astype(np.float32)
        g_kernel = np.asfortranarray(np.swapaxes(g, 0, -1)).swapaxes(0, -1) if strided_grad and g.ndim else g
        param.grad = Tensor(g.copy())
        opt.step()
        numba_adamw.adam_step(p, g_kernel, m, v, 0.01, 0.9, 0.999, 1e-8, 0.1, step, cls is optim.AdamW)
    state = opt.state[param]
    assert_close(p, param.array, "p")
    assert_close(m, state["exp_avg"], "exp_avg")
    assert_close(v, state["exp_avg_sq"], "exp_avg_sq")
    if p0.size:  # the update landed in p itself (a kernel writing into a copy would leave p0's values)
        assert not np.array_equal(p, p0)


def test_adam_step_refuses_a_strided_parameter():
    p = np.zeros((4, 4), np.float32)[:, ::2]
    with pytest.raises(ValueError, match="C-contiguous"):
        numba_adamw.adam_step(p, p, p.copy(), p.copy(), 0.1, 0.9, 0.999, 1e-8, 0.0, 1, True)


@st.composite
def qkv(draw):
    """q, k, v of one shape (B, nh, T, d), T up to past two key blocks; as a GPT's strided views of one array."""
    b, heads, d = draw(st.integers(1, 2)), draw(st.integers(1, 3)), draw(st.integers(1, 9))
    t = draw(st.sampled_from([0, 1, 2, 5, 63, 64, 65, 130]))
    rng = np.random.default_rng(draw(st.integers(0, 999)))
    qkv = rng.standard_normal((b, t, heads, 3 * d)).astype(np.float32)
    if draw(st.booleans()) and t:
        qkv[0, rng.integers(t), 0, rng.integers(d)] = np.nan  # one query's row of q
    q, k, v = (qkv[..., i * d:(i + 1) * d].swapaxes(1, 2) for i in range(3))  # (B, nh, T, d), strided
    return q, k, v


def test_every_kernel_module_is_ready():
    for module in (numba_gelu, numba_layernorm, numba_softmax, numba_cross_entropy, numba_adamw, numba_embedding):
        assert module.AVAILABLE and module.ready(), module.__name__


def test_a_failed_compile_warns_once_and_answers_false():
    def broken():
        raise numba.core.errors.TypingError("no such kernel")

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert numba_setup.prepare("test", broken) is False
    assert len(caught) == 1 and "using the NumPy op" in str(caught[0].message)


def _python(code, env):
    return subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=600,
                          cwd=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def test_first_compile_is_announced_once_then_cached(tmp_path):
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path)}
    code = "from minigrad.kernels import numba_gelu; print(numba_gelu.ready())"
    first, second = _python(code, env), _python(code, env)
    assert first.stdout.strip() == second.stdout.strip() == "True", first.stderr + second.stderr
    assert first.stderr.count("compiling minigrad's CPU kernels, once") == 1, first.stderr
    assert "compiling" not in second.stderr, second.stderr  # loaded from tmp_path
    assert any(tmp_path.rglob("*.nbi"))


def test_without_numba_the_kernels_are_simply_not_ready(tmp_path):
    code = ("import sys; sys.modules['numba'] = None\n"  # an import of numba now fails, as when it is missing
            "from minigrad.kernels import numba_gelu, numba_setup\n"
            "print(numba_setup.AVAILABLE, numba_gelu.ready())")
    result = _python(code, {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path)})
    assert result.stdout.strip() == "False False", result.stderr
    assert "Warning" not in result.stderr


def test_stale_cache_folders_are_pruned_and_the_current_one_kept(tmp_path):
    """An upgrade leaves a new digest folder; the old ones, unused for 30 days, go. Other files are never touched."""
    month_ago = time.time() - 31 * 86400
    for name in ("0123456789ab", "aaaaaaaaaaaa", "fedcba987654"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "kernel.nbi").write_bytes(b"x")
        os.utime(tmp_path / name, (month_ago, month_ago))
    os.utime(tmp_path / "fedcba987654")  # used today by another version: kept
    (tmp_path / "my_notes").mkdir()  # not a digest folder: kept however old
    os.utime(tmp_path / "my_notes", (month_ago, month_ago))

    deleted = numba_setup.prune_stale_caches(tmp_path, keep="0123456789ab")

    assert [p.name for p in deleted] == ["aaaaaaaaaaaa"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["0123456789ab", "fedcba987654", "my_notes"]
    assert (tmp_path / "0123456789ab").stat().st_mtime > time.time() - 60  # the current one marked as used now


# A NaN under the mask (above the diagonal) stays hidden, as in PyTorch's fused CPU attention: the NumPy reference
# once added the -inf mask to it (NaN + -inf is NaN) and spread it to the row, while the kernel never read it.
@example(lead=(), rows=12, extra=0, kind="nan", seed=10)
@given(lead=st.lists(st.integers(0, 3), max_size=2).map(tuple), rows=st.integers(1, 40), extra=st.integers(0, 40),
       kind=st.sampled_from(["plain", "nan", "large"]), seed=st.integers(0, 99))
def test_causal_softmax_of_attentions_row_blocks(lead, rows, extra, kind, seed):
    """causal_rows' scale, mask and softmax of one (..., R, K) block, and its gS = P (gP - rowsum), in place."""
    rng = np.random.default_rng(seed)
    scores = (rng.standard_normal(lead + (rows, rows + extra)) * (30.0 if kind == "large" else 3.0)).astype(np.float32)
    if kind == "nan" and scores.size:
        scores.reshape(-1)[rng.integers(scores.size)] = np.nan
    with np.errstate(invalid="ignore"):
        expected = causal_rows.causal_softmax_(scores.copy(), 0.125)
    got = numba_softmax.causal_softmax_(scores, 0.125)
    assert got is scores  # in place
    assert_close(got, expected, f"P, {kind}")
    gp, rowsum = (rng.standard_normal(s).astype(np.float32) for s in (scores.shape, lead + (rows, 1)))
    expected_gs = causal_rows.softmax_backward_(gp.copy(), expected, rowsum)
    assert_close(numba_softmax.softmax_backward_(gp, got, rowsum), expected_gs, "gS")


@example(vocab=3, lead=(4, 5), width=3, seed=0)  # 20 ids among 3: every id repeated
@given(vocab=st.integers(1, 9), lead=st.lists(st.integers(0, 6), max_size=2).map(tuple), width=st.integers(1, 9),
       seed=st.integers(0, 99))
def test_embedding_scatter_add(vocab, lead, width, seed):
    """Embedding's backward: the rows of gy summed into their ids' rows, repeated ids included, bit for bit."""
    rng = np.random.default_rng(seed)
    ids = rng.integers(0, vocab, lead)
    gy = rng.standard_normal(lead + (width,)).astype(np.float32)
    op = Embedding(ids=ids)
    op.forward(np.zeros((vocab, width), np.float32))
    expected = op.backward(gy)
    got = np.zeros((vocab, width), np.float32)
    numba_embedding.scatter_rows(got, ids, gy.reshape(-1, width))
    np.testing.assert_array_equal(got, expected)
