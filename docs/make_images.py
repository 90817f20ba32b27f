"""Redraw the pictures in docs/images/ (the README shows them): python docs/make_images.py

Needs the graphviz `dot` program, matplotlib, Pillow and a CJK font (Debian: graphviz fonts-noto-cjk).
"""

import shutil
import tempfile
from pathlib import Path

import numpy as np

import minigrad as mg
from minigpt import GPT, CharTokenizer, GPTConfig
from minigrad import optim
from minigrad.viz.__main__ import mlp_example

IMAGES = Path(__file__).resolve().parent / "images"


def mlp_graph() -> None:
    """A 2-layer MLP's loss, every tensor coloured by its gradient's norm."""
    loss, model = mlp_example()
    mg.viz.draw(loss, IMAGES / "mlp_graph.png", model=model, grads=True, title="2-layer MLP: loss and gradient norms")


def gpt_collapsed() -> None:
    """A 2-layer GPT's forward pass with each Transformer block drawn as one node."""
    mg.manual_seed(0)
    gpt = GPT(GPTConfig(vocab_size=16, block_size=8, n_layer=2, n_head=2, n_embd=16))
    idx = np.random.default_rng(0).integers(0, 16, size=(1, 8))
    with mg.viz.record_modules(gpt):
        _, loss = gpt(idx, idx)
    loss.name = "loss"
    mg.viz.draw(loss, IMAGES / "gpt_collapsed.png", model=gpt, collapse="transformer.h.*", rankdir="TB",
                grads=True, title="2-layer GPT, blocks collapsed")


def backward_animation() -> None:
    """The backward pass of a micrograd-sized expression, one frame per step, as a GIF and one still."""
    a = mg.tensor([1.0, -2.0], requires_grad=True)
    b = mg.tensor([0.5, 3.0], requires_grad=True)
    a.name, b.name = "a", "b"
    c = a * b
    d = c.tanh()
    loss = (d + a).sum()
    c.name, d.name, loss.name = "c", "d", "L"
    with tempfile.TemporaryDirectory() as folder:
        frames = mg.viz.backward_frames(loss, folder, values=True, duration_ms=1200)
        shutil.copy(Path(folder) / "backward.gif", IMAGES / "backward_frames.gif")
        shutil.copy(frames[3], IMAGES / "backward_step_3.png")


def attention_zh() -> None:
    """Attention maps of a tiny GPT trained for a moment on a Chinese poem, characters on the axes."""
    text = "床前明月光，疑是地上霜。举头望明月，低头思故乡。" * 4
    tokenizer = CharTokenizer.from_text(text)
    data = np.array(tokenizer.encode(text))
    mg.manual_seed(0)
    config = GPTConfig(vocab_size=tokenizer.vocab_size, block_size=12, n_layer=2, n_head=2, n_embd=32)
    model = GPT(config)
    optimizer = optim.AdamW(model.parameters(), lr=3e-3, weight_decay=0.0)
    rng = np.random.default_rng(0)
    for _ in range(150):
        starts = rng.integers(0, len(data) - config.block_size - 1, size=8)
        x = np.stack([data[s:s + config.block_size] for s in starts])
        y = np.stack([data[s + 1:s + config.block_size + 1] for s in starts])
        _, loss = model(x, y)  # forward
        optimizer.zero_grad()
        loss.backward()  # backward
        optimizer.step()  # update
    prompt = "床前明月光，疑是地上霜。"
    maps = model.attention_maps(np.array([tokenizer.encode(prompt)]))
    mg.viz.plot_attention(maps, prompt, path=IMAGES / "attention_zh.png",
                          title="注意力 (attention), 2 layers × 2 heads")


if __name__ == "__main__":
    IMAGES.mkdir(exist_ok=True)
    mlp_graph()
    gpt_collapsed()
    backward_animation()
    attention_zh()
