"""minigrad.viz: DOT text for computation graphs, module clusters and collapsing, drawing, backward frames.

The DOT text is checked by counting its node and edge lines against a small graph whose ops and tensors
we know, and by handing it to graphviz's `dot` program when it is installed (skipped otherwise).
"""

import re
import shutil
import subprocess
import sys

import numpy as np
import pytest

import minigrad as mg
import minigrad.functional as F
from minigrad import nn
from minigrad.core import autograd

HAS_DOT = shutil.which("dot") is not None
needs_dot = pytest.mark.skipif(not HAS_DOT, reason="graphviz's `dot` program is not installed (apt install graphviz)")


def small_graph():
    """L = sum(tanh(a * b) + a): 6 tensors (a, b, c, d, e, L) and 4 ops (Mul, Tanh, Add, Sum), 6 op inputs."""
    a = mg.tensor([1.0, -2.0], requires_grad=True)
    b = mg.tensor([0.5, 3.0], requires_grad=True)
    a.name, b.name = "a", "b"
    c = a * b
    c.name = "c"
    d = c.tanh()
    d.name = "d"
    L = (d + a).sum()
    L.name = "L"
    return a, b, L


def mlp_loss():
    model = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 2))
    x = mg.tensor(np.random.default_rng(0).normal(size=(5, 3)))
    with mg.viz.record_modules(model):
        loss = F.cross_entropy(model(x), np.array([0, 1, 1, 0, 1]))
    return model, x, loss


def nodes(dot: str, prefix: str) -> list[str]:
    return re.findall(rf"^\s*({prefix}\d+) \[", dot, flags=re.M)


def edges(dot: str) -> list[tuple[str, str]]:
    return re.findall(r"^\s*(\w+) -> (\w+)$", dot, flags=re.M)


def dot_accepts(source: str) -> None:
    result = subprocess.run(["dot", "-Tplain"], input=source, capture_output=True, text=True, timeout=30)
    assert result.returncode == 0, result.stderr


# --------------------------------------------------------------------------------------------------
# to_dot on a small graph
def test_counts_match_the_graph():
    _, _, L = small_graph()
    dot = mg.viz.to_dot(L)
    assert len(nodes(dot, "t")) == 6  # a, b, c, d, d + a, L
    assert len(nodes(dot, "f")) == 4  # Mul, Tanh, Add, Sum
    assert len(edges(dot)) == 6 + 4  # one per op input, one per op output
    for op in ("Mul", "Tanh", "Add", "Sum"):
        assert f'label="{op}"' in dot


def test_a_reused_input_draws_one_edge_per_use():
    a = mg.tensor([1.0, 2.0], requires_grad=True)
    b = a + a
    c = b + b
    dot = mg.viz.to_dot(c)
    assert len(nodes(dot, "t")) == 3 and len(nodes(dot, "f")) == 2
    assert edges(dot).count(("t0", "f1")) == 2 and edges(dot).count(("t1", "f2")) == 2


def test_labels_show_names_shapes_dtype_and_values():
    _, _, L = small_graph()
    dot = mg.viz.to_dot(L, values=True)
    for name in ("<B>a</B>", "<B>b</B>", "<B>c</B>", "<B>L</B>", "<B>t4</B>"):  # t4: the unnamed d + a
        assert name in dot
    assert "(2,) float32" in dot and "() float32" in dot
    assert "[1, -2]" in dot  # a's values


def test_parameter_names_come_from_the_model_or_a_dict():
    model, x, loss = mlp_loss()
    dot = mg.viz.to_dot(loss, model=model)
    for name, param in model.named_parameters():
        assert f"<B>{name}</B>" in dot
        assert f"{tuple(param.shape)} float32" in dot
    dot = mg.viz.to_dot(loss, names={"input": x, "W1": model[0].weight})
    assert "<B>input</B>" in dot and "<B>W1</B>" in dot


def test_output_is_stable():
    _, _, L = small_graph()
    first = mg.viz.to_dot(L, grads=True, values=True)
    assert mg.viz.to_dot(L, grads=True, values=True) == first
    _, _, L2 = small_graph()  # new tensors, new ids: the same text
    assert mg.viz.to_dot(L2, grads=True, values=True) == first
    assert "rankdir=LR" in first and "rankdir=TB" in mg.viz.to_dot(L, rankdir="TB")


@needs_dot
def test_dot_accepts_the_text():
    model, _, loss = mlp_loss()
    dot_accepts(mg.viz.to_dot(loss, model=model, values=True, grads=True, title='a "quoted" title'))
    dot_accepts(mg.viz.to_dot(loss, model=model, collapse=True, rankdir="TB"))


# --------------------------------------------------------------------------------------------------
# Gradients
def test_grads_show_every_tensor_and_leave_grad_alone():
    a, b, L = small_graph()
    L.backward(retain_graph=True)
    before = a.grad.numpy(), b.grad.numpy()
    dot = mg.viz.to_dot(L, grads=True)
    assert len(re.findall(r"grad \d", dot)) == 6  # every tensor, intermediate ones too
    assert "gradient norm (log scale)" in dot  # the legend
    np.testing.assert_array_equal(a.grad.numpy(), before[0])
    np.testing.assert_array_equal(b.grad.numpy(), before[1])


def test_gradient_norms_follow_the_engine_order():
    a, b, L = small_graph()
    engine = []
    autograd.backward(L, np.ones(()), retain_graph=True, on_step=lambda t, g: engine.append(t))
    a.grad = b.grad = None
    steps = mg.viz.gradient_norms(L)
    assert [s.tensor for s in steps] == engine
    assert a.grad is None and b.grad is None
    a_value, b_value = np.array([1.0, -2.0]), np.array([0.5, 3.0])
    ga = (1 - np.tanh(a_value * b_value) ** 2) * b_value + 1  # dL/da through tanh(a * b), plus the direct + a
    norm_a = next(s.norm for s in steps if s.tensor is a)
    np.testing.assert_allclose(norm_a, np.linalg.norm(ga), rtol=1e-5)
    assert steps[0].tensor is L and steps[0].norm == 1.0


def test_after_a_released_backward_only_leaf_grads_are_shown():
    _, _, L = small_graph()
    L.backward()
    with pytest.warns(UserWarning, match="retain_graph=True"):
        dot = mg.viz.to_dot(L, grads=True)
    assert len(re.findall(r"grad \d", dot)) == 2  # a and b
    with pytest.raises(RuntimeError, match="retain_graph=True"):
        mg.viz.gradient_norms(L)


# --------------------------------------------------------------------------------------------------
# Modules: clusters and collapsing
def test_record_modules_sets_and_clears_the_hook():
    model, x, loss = mlp_loss()
    assert not autograd.observers.active
    scopes = [getattr(t._ctx, "scope", None) for t in mg.viz.walk(loss) if t._ctx is not None]
    # Linear 0's ops, then Tanh's, then Linear 2's; cross_entropy is called by no module
    assert list(dict.fromkeys(scopes)) == [("0",), ("1",), ("2",), ()]
    assert not hasattr((model(x))._ctx, "scope")  # outside the block nothing is recorded


def test_mlp_clusters_by_module():
    model, _, loss = mlp_loss()
    dot = mg.viz.to_dot(loss, model=model)
    assert dot.count("subgraph cluster_") == 3
    assert 'label="0 (Linear)"' in dot and 'label="1 (Tanh)"' in dot
    assert "subgraph" not in mg.viz.to_dot(loss, model=model, cluster=False)
    assert "subgraph" not in mg.viz.to_dot(loss, model=model, depth=0)
    collapsed = mg.viz.to_dot(loss, model=model, collapse=True)  # every numbered layer: 0, 1, 2
    assert len(nodes(collapsed, "m")) == 3 and len(nodes(collapsed, "f")) == 1  # the loss op stays
    assert "in (5, 3)" in collapsed and "out (5, 4)" in collapsed and "16 weights" in collapsed


@pytest.fixture(scope="module")
def gpt_loss():
    minigpt = pytest.importorskip("minigpt")
    if not hasattr(minigpt, "GPT"):
        pytest.skip("minigpt.GPT is not written yet")
    mg.manual_seed(0)
    model = minigpt.GPT(minigpt.GPTConfig(vocab_size=16, block_size=8, n_layer=2, n_head=2, n_embd=16))
    idx = np.random.default_rng(0).integers(0, 16, size=(1, 8))
    with mg.viz.record_modules(model):
        _, loss = model(idx, idx)
    return model, loss


def test_gpt_clusters_and_collapse(gpt_loss):
    model, loss = gpt_loss
    tensors = mg.viz.walk(loss)
    full = mg.viz.to_dot(loss, model=model)
    n_full = len(nodes(full, "[tf]"))
    assert n_full == len(tensors) + sum(t._ctx is not None for t in tensors)
    assert 'label="transformer.h.0 (Block)"' in full and 'label="attn (CausalSelfAttention)"' in full
    assert len(nodes(mg.viz.to_dot(loss, model=model, cluster=False), "[tf]")) == n_full  # clusters move, not drop
    assert full.count("subgraph") > mg.viz.to_dot(loss, model=model, depth=2).count("subgraph") > 0

    # Collapsing each block hides its ops, their outputs but the last, and the leaves only it uses.
    index = {id(t): i for i, t in enumerate(tensors)}
    consumers = {i: [] for i in range(len(tensors))}
    for i, t in enumerate(tensors):
        for p in t._ctx.parents if t._ctx is not None else ():
            consumers[index[id(p)]].append(i)

    def block(i):
        scope = getattr(tensors[i]._ctx, "scope", ()) if tensors[i]._ctx is not None else ()
        return next((s for s in scope if re.fullmatch(r"transformer\.h\.\d+", s)), None)

    hidden = 0
    for k in range(2):
        ops = [i for i in range(len(tensors)) if block(i) == f"transformer.h.{k}"]
        leaves = [i for i, t in enumerate(tensors) if t._ctx is None and consumers[i] and t.requires_grad
                  and all(block(j) == f"transformer.h.{k}" for j in consumers[i])]
        hidden += 2 * len(ops) - 1 + len(leaves)
    collapsed = mg.viz.to_dot(loss, model=model, collapse="transformer.h.*", rankdir="TB")
    assert len(nodes(collapsed, "[tfm]")) == n_full - hidden + 2
    assert len(nodes(collapsed, "m")) == 2
    assert "transformer.h.0.attn.c_attn.weight" not in collapsed and "transformer.wte.weight" in collapsed
    assert collapsed.count("in (1, 8, 16)") == 2 and collapsed.count("out (1, 8, 16)") == 2
    if HAS_DOT:
        dot_accepts(collapsed)
        dot_accepts(full)


# --------------------------------------------------------------------------------------------------
# Drawing and backward frames
@needs_dot
def test_draw_renders_and_returns_a_digraph(tmp_path):
    graphviz = pytest.importorskip("graphviz")
    _, _, L = small_graph()
    graph = mg.viz.draw(L, tmp_path / "small.png", values=True)
    assert isinstance(graph, graphviz.Digraph)
    assert graph.source == mg.viz.to_dot(L, values=True)
    assert (tmp_path / "small.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    mg.viz.draw(L, tmp_path / "small", format="svg")
    assert (tmp_path / "small.svg").read_text().lstrip().startswith("<?xml")


def test_draw_without_graphviz_writes_dot_and_says_how_to_install(tmp_path, monkeypatch, capsys):
    pytest.importorskip("graphviz")
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))  # no `dot` to be found
    _, _, L = small_graph()
    written = mg.viz.draw_to_file(L, tmp_path / "small.png")
    assert written == tmp_path / "small.dot" and written.read_text() == mg.viz.to_dot(L)
    message = capsys.readouterr().err.strip()
    assert len(message.splitlines()) == 1 and "apt install graphviz" in message and "brew install graphviz" in message
    paths = mg.viz.backward_frames(L, tmp_path / "frames")
    assert [p.suffix for p in paths] == [".dot"] * 6
    assert len(capsys.readouterr().err.strip().splitlines()) == 1  # said once, not once a frame


def test_backward_frames_one_per_engine_step(tmp_path):
    a, b, L = small_graph()
    engine = []
    autograd.backward(L, np.ones(()), retain_graph=True, on_step=lambda t, g: engine.append(t))
    a.grad = b.grad = None
    paths = mg.viz.backward_frames(L, tmp_path, format="dot")
    assert [p.name for p in paths] == [f"frame_{k:03d}.dot" for k in range(len(engine))]
    index = {id(t): i for i, t in enumerate(mg.viz.walk(L))}
    for k, (path, tensor) in enumerate(zip(paths, engine)):
        text = path.read_text()
        highlighted = re.findall(r"^\s*(t\d+) \[.*penwidth=5", text, flags=re.M)
        assert highlighted == [f"t{index[id(tensor)]}"]
        assert f"backward step {k + 1}/{len(engine)}" in text
        # gradients still to come are drawn in their node's fill colour: the layout stays put between frames
        assert len(re.findall(r"grad \d", text)) == 6
    assert a.grad is None and b.grad is None  # drawing never changes .grad


@needs_dot
def test_backward_frames_png_gif_and_html(tmp_path):
    _, _, L = small_graph()
    paths = mg.viz.backward_frames(L, tmp_path, duration_ms=200)
    assert len(paths) == 6 and all(p.read_bytes()[:4] == b"\x89PNG" for p in paths)
    assert (tmp_path / "backward.html").read_text().count("data:image/png;base64,") == 6
    try:
        from PIL import Image
    except ImportError:
        return
    with Image.open(tmp_path / "backward.gif") as gif:
        assert gif.n_frames == 6


# --------------------------------------------------------------------------------------------------
# The command and the package
def test_command_draws_the_mlp(tmp_path):
    from minigrad.viz.__main__ import main

    assert main(["--out", str(tmp_path / "mlp.dot"), "--format", "dot", "--grads"]) == 0
    text = (tmp_path / "mlp.dot").read_text()
    assert "<B>0.weight</B>" in text and "subgraph cluster_" in text


def test_importing_minigrad_does_not_import_the_drawing_libraries():
    code = ("import sys, minigrad; "
            "print(sorted({m.split('.')[0] for m in sys.modules} & {'graphviz', 'matplotlib', 'PIL'}))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_drawing_works_on_every_device(device):
    a = mg.tensor([1.0, -2.0], requires_grad=True, device=device)
    W = mg.randn(3, 2, requires_grad=True, device=device)
    loss = (W @ a).tanh().sum()
    dot = mg.viz.to_dot(loss, values=True, grads=True)
    assert len(re.findall(r"grad \d", dot)) == 5  # a, W, W @ a, its tanh, the sum
    if device != "cpu":
        assert f"float32 {mg.viz.walk(loss)[0].device}" in dot
