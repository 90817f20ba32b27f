"""Two more programs written for PyTorch and run under both libraries with only the import lines different
(test_pytorch_programs.py explains the rule): makemore's MLP (a Generator, embedding lookup by indexing `C[X]`,
manual `p.data += -lr * p.grad` updates, `torch.multinomial` sampling), and makemore's BatchNorm-era MLP (batch
statistics in the forward pass, running statistics updated under `torch.no_grad()`, evaluated with them).

Each runs twice: from the same weights, full batch (deterministic: the same losses to float rounding), and from
weights and minibatches drawn with a `torch.Generator` (minigrad's streams are not PyTorch's: it must learn).

Read next: test_pytorch_programs_gpt.py.
"""

import numpy as np
import pytest
from test_pytorch_programs import PACKAGES, imports, needs_torch, one_torch_thread, torch_installed  # noqa: F401

SYLLABLES = ["ka", "mi", "ro", "se", "lu", "an", "na", "el", "ti", "jo", "ra", "be", "ly", "do", "vi"]
pytestmark = pytest.mark.usefixtures("one_torch_thread")  # PyTorch on one thread (test_pytorch_programs says why)


def names(n=120, seed=0):
    """A tiny names.txt: words of two to three syllables, deterministic."""
    rng = np.random.default_rng(seed)
    return ["".join(rng.choice(SYLLABLES, size=rng.integers(2, 4))) for _ in range(n)]


def build_dataset(torch, words, block_size=3):
    """makemore's (context, next character) pairs; '.' (0) starts and ends every word."""
    chars = sorted(set("".join(words)))
    stoi = {s: i + 1 for i, s in enumerate(chars)}
    stoi["."] = 0
    X, Y = [], []
    for w in words:
        context = [0] * block_size
        for ch in w + ".":
            ix = stoi[ch]
            X.append(context)
            Y.append(ix)
            context = context[1:] + [ix]
    itos = {i: s for s, i in stoi.items()}
    return torch.tensor(X), torch.tensor(Y), itos


def mlp_weights(vocab_size, n_embd=10, block_size=3, n_hidden=64, seed=1):
    """One set of weights for both libraries, drawn with NumPy."""
    rng = np.random.default_rng(seed)
    shapes = {"C": (vocab_size, n_embd), "W1": (n_embd * block_size, n_hidden), "b1": (n_hidden,),
              "W2": (n_hidden, vocab_size), "b2": (vocab_size,)}
    return {name: (rng.standard_normal(shape) * 0.3).astype(np.float32) for name, shape in shapes.items()}


# ---------------------------------------------------------------------------------------------------------------
# 3. makemore's MLP (Bengio et al. 2003), as in the video: a Generator, C[X], tanh, manual .data updates.
def makemore_mlp(torch, F, words, weights=None, steps=30, batch_size=None):
    X, Y, itos = build_dataset(torch, words)
    vocab_size = len(itos)
    g = torch.Generator().manual_seed(2147483647)
    if weights is None:
        C = torch.randn((vocab_size, 10), generator=g)
        W1 = torch.randn((30, 64), generator=g) * 0.2
        b1 = torch.randn(64, generator=g) * 0.01
        W2 = torch.randn((64, vocab_size), generator=g) * 0.1
        b2 = torch.randn(vocab_size, generator=g) * 0
    else:
        C, W1, b1, W2, b2 = (torch.tensor(weights[name]) for name in ("C", "W1", "b1", "W2", "b2"))
    parameters = [C, W1, b1, W2, b2]
    for p in parameters:
        p.requires_grad = True
    losses = []
    for i in range(steps):
        # minibatch construct
        ix = torch.randint(0, X.shape[0], (batch_size,), generator=g) if batch_size else torch.arange(X.shape[0])
        # forward pass
        emb = C[X[ix]]  # (N, 3, 10)
        h = torch.tanh(emb.view(-1, 30) @ W1 + b1)  # (N, 64)
        logits = h @ W2 + b2  # (N, vocab_size)
        loss = F.cross_entropy(logits, Y[ix])
        # backward pass
        for p in parameters:
            p.grad = None
        loss.backward()
        # update
        lr = 0.5 if i < steps // 2 else 0.1
        for p in parameters:
            p.data += -lr * p.grad
        losses.append(loss.item())
    # sample from the model
    samples = []
    for _ in range(5):
        out, context = [], [0] * 3
        while len(out) < 20:
            emb = C[torch.tensor([context])]  # (1, 3, 10)
            h = torch.tanh(emb.view(1, -1) @ W1 + b1)
            probs = F.softmax(h @ W2 + b2, dim=1)
            ix = torch.multinomial(probs, num_samples=1, generator=g).item()
            context = context[1:] + [ix]
            if ix == 0:
                break
            out.append(itos[ix])
        samples.append("".join(out))
    return losses, samples


@pytest.mark.torch
@pytest.mark.skipif(not torch_installed, reason="needs PyTorch as the oracle")
def test_makemore_mlp_gives_pytorchs_losses():
    words = names()
    weights = mlp_weights(len(set("".join(words))) + 1)
    (theirs, _), (ours, samples) = (makemore_mlp(imports(p).torch, imports(p).F, words, weights)
                                    for p in ("torch", "minigrad"))
    np.testing.assert_allclose(ours, theirs, rtol=2e-4)
    assert ours[-1] < 0.6 * ours[0]
    assert all(set(s) <= set("".join(words)) for s in samples)


@pytest.mark.parametrize("package", PACKAGES)
def test_makemore_mlp_learns_with_a_generator(package):
    ns = imports(package)
    losses, samples = makemore_mlp(ns.torch, ns.F, names(), steps=80, batch_size=32)
    first, last = np.mean(losses[:5]), np.mean(losses[-5:])
    assert last < 0.7 * first, (first, last)  # minibatch losses fall by at least 30%
    assert len(samples) == 5 and all(isinstance(s, str) for s in samples)


# ---------------------------------------------------------------------------------------------------------------
# 4. makemore part 3: the same MLP with batch normalisation written out, running statistics under no_grad.
def makemore_batchnorm(torch, F, words, weights=None, steps=30, batch_size=None):
    X, Y, itos = build_dataset(torch, words)
    vocab_size, n_embd, block_size, n_hidden = len(itos), 10, 3, 64
    g = torch.Generator().manual_seed(2147483647)
    if weights is None:
        C = torch.randn((vocab_size, n_embd), generator=g)
        W1 = torch.randn((n_embd * block_size, n_hidden), generator=g) * (5 / 3) / ((n_embd * block_size) ** 0.5)
        W2 = torch.randn((n_hidden, vocab_size), generator=g) * 0.01
        b2 = torch.randn(vocab_size, generator=g) * 0
    else:
        C, W1, W2, b2 = (torch.tensor(weights[name]) for name in ("C", "W1", "W2", "b2"))
    bngain = torch.ones((1, n_hidden))
    bnbias = torch.zeros((1, n_hidden))
    bnmean_running = torch.zeros((1, n_hidden))
    bnstd_running = torch.ones((1, n_hidden))
    parameters = [C, W1, W2, b2, bngain, bnbias]
    for p in parameters:
        p.requires_grad = True
    losses = []
    for i in range(steps):
        ix = torch.randint(0, X.shape[0], (batch_size,), generator=g) if batch_size else torch.arange(X.shape[0])
        Xb, Yb = X[ix], Y[ix]
        # forward pass
        emb = C[Xb]
        embcat = emb.view(emb.shape[0], -1)
        hpreact = embcat @ W1  # no bias: batch norm's bnbias replaces it
        bnmeani = hpreact.mean(0, keepdim=True)
        bnstdi = hpreact.std(0, keepdim=True)
        hpreact = bngain * (hpreact - bnmeani) / bnstdi + bnbias
        with torch.no_grad():
            bnmean_running = 0.9 * bnmean_running + 0.1 * bnmeani
            bnstd_running = 0.9 * bnstd_running + 0.1 * bnstdi
        h = torch.tanh(hpreact)
        logits = h @ W2 + b2
        loss = F.cross_entropy(logits, Yb)
        # backward pass
        for p in parameters:
            p.grad = None
        loss.backward()
        # update
        lr = 0.5 if i < steps // 2 else 0.1
        for p in parameters:
            p.data += -lr * p.grad
        losses.append(loss.item())

    @torch.no_grad()  # this decorator disables gradient tracking
    def split_loss(x, y):
        emb = C[x]
        embcat = emb.view(emb.shape[0], -1)
        hpreact = embcat @ W1
        hpreact = bngain * (hpreact - bnmean_running) / bnstd_running + bnbias
        h = torch.tanh(hpreact)
        logits = h @ W2 + b2
        return F.cross_entropy(logits, y).item()

    assert not bnmean_running.requires_grad and bnmean_running.grad_fn is None
    return losses, split_loss(X, Y), bnmean_running.view(-1).tolist()


@pytest.mark.torch
@pytest.mark.skipif(not torch_installed, reason="needs PyTorch as the oracle")
def test_makemore_batchnorm_gives_pytorchs_losses():
    words = names()
    weights = mlp_weights(len(set("".join(words))) + 1)
    (theirs, their_eval, their_mean), (ours, our_eval, our_mean) = (
        makemore_batchnorm(imports(p).torch, imports(p).F, words, weights) for p in ("torch", "minigrad"))
    np.testing.assert_allclose(ours, theirs, rtol=2e-4)
    np.testing.assert_allclose(our_eval, their_eval, rtol=2e-4)
    np.testing.assert_allclose(our_mean, their_mean, rtol=1e-3, atol=1e-5)
    assert ours[-1] < 0.6 * ours[0]


@pytest.mark.parametrize("package", PACKAGES)
def test_makemore_batchnorm_learns_with_a_generator(package):
    ns = imports(package)
    losses, eval_loss, _ = makemore_batchnorm(ns.torch, ns.F, names(), steps=80, batch_size=32)
    first, last = np.mean(losses[:5]), np.mean(losses[-5:])
    assert last < 0.7 * first, (first, last)
    assert eval_loss < 0.8 * first  # the running statistics serve the whole set at evaluation
