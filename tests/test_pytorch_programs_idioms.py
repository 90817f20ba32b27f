"""Programs of our own in the idioms of the public programs issue 47 ran (an English textbook's attention chapters,
an annotated encoder-decoder Transformer, a from-scratch GPT book, makemore), run under PyTorch and under minigrad
with only the import lines different (test_pytorch_programs.py explains the rule). Deterministic ones start from
the same weights and must give PyTorch's losses to float rounding; the one that draws its batches must learn.

Read next: test_pytorch_programs.py.
"""

import io

import numpy as np
import pytest
from test_pytorch_programs import PACKAGES, imports, needs_torch, one_torch_thread, torch_installed  # noqa: F401

pytestmark = pytest.mark.usefixtures("one_torch_thread")


def weights_of(model, seed=0):
    """One set of weights for both libraries, drawn with NumPy in the shapes of `model`'s state_dict."""
    rng = np.random.default_rng(seed)
    return {name: (rng.standard_normal(tuple(t.shape)) * 0.3).astype(np.float32) if t.dtype.is_floating_point
            else t.numpy() for name, t in model.state_dict().items()}


# ---------------------------------------------------------------------------------------------------------------
# 6. The textbook's attention chapters: masked_softmax writing -1e6 into a reshaped view of the scores, additive
#    attention of LazyLinear layers, scaled dot-product attention with torch.bmm, trained with Adam.
def textbook_attention(torch, nn, F, weights=None, steps=25):
    def masked_softmax(X, valid_lens):
        def _sequence_mask(X, valid_len, value=0):
            maxlen = X.size(1)
            mask = torch.arange((maxlen), dtype=torch.float32, device=X.device)[None, :] < valid_len[:, None]
            X[~mask] = value
            return X

        if valid_lens is None:
            return nn.functional.softmax(X, dim=-1)
        shape = X.shape
        if valid_lens.dim() == 1:
            valid_lens = torch.repeat_interleave(valid_lens, shape[1])
        else:
            valid_lens = valid_lens.reshape(-1)
        X = _sequence_mask(X.reshape(-1, shape[-1]), valid_lens, value=-1e6)
        return nn.functional.softmax(X.reshape(shape), dim=-1)

    class AdditiveAttention(nn.Module):
        def __init__(self, num_hiddens, dropout):
            super().__init__()
            self.W_k = nn.LazyLinear(num_hiddens, bias=False)
            self.W_q = nn.LazyLinear(num_hiddens, bias=False)
            self.w_v = nn.LazyLinear(1, bias=False)
            self.dropout = nn.Dropout(dropout)

        def forward(self, queries, keys, values, valid_lens):
            queries, keys = self.W_q(queries), self.W_k(keys)
            features = queries.unsqueeze(2) + keys.unsqueeze(1)
            features = torch.tanh(features)
            scores = self.w_v(features).squeeze(-1)
            self.attention_weights = masked_softmax(scores, valid_lens)
            return torch.bmm(self.dropout(self.attention_weights), values)

    class DotProductAttention(nn.Module):
        def __init__(self, dropout):
            super().__init__()
            self.dropout = nn.Dropout(dropout)

        def forward(self, queries, keys, values, valid_lens=None):
            d = queries.shape[-1]
            scores = torch.bmm(queries, keys.transpose(1, 2)) / d**0.5
            self.attention_weights = masked_softmax(scores, valid_lens)
            return torch.bmm(self.dropout(self.attention_weights), values)

    generator = np.random.default_rng(1)
    queries = torch.tensor(generator.normal(size=(2, 3, 4)).astype(np.float32))
    keys = torch.tensor(generator.normal(size=(2, 5, 6)).astype(np.float32))
    values = torch.tensor(generator.normal(size=(2, 5, 4)).astype(np.float32))
    targets = torch.tensor(generator.normal(size=(2, 3, 4)).astype(np.float32))
    valid_lens = torch.tensor([2, 4])
    model = AdditiveAttention(num_hiddens=8, dropout=0.0)
    model(queries, keys, values, valid_lens)  # the first call fixes every LazyLinear's in_features
    if weights is None:
        return model
    model.load_state_dict({k: torch.tensor(v) for k, v in weights.items()})
    dot = DotProductAttention(dropout=0.0)
    optimizer = torch.optim.Adam(model.parameters(), lr=0.05)
    losses = []
    for _ in range(steps):
        out = model(queries, keys, values, valid_lens)
        loss = ((out + dot(out, out, out, valid_lens) - targets) ** 2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    assert model.attention_weights[0, :, 2:].abs().max().item() == 0.0  # the masked keys get no weight
    return losses


@needs_torch[1]
@pytest.mark.torch
def test_textbook_attention_gives_pytorchs_losses():
    ns = [imports(p) for p in ("torch", "minigrad")]
    weights = weights_of(textbook_attention(ns[0].torch, ns[0].nn, ns[0].F))
    theirs, ours = (textbook_attention(n.torch, n.nn, n.F, weights) for n in ns)
    np.testing.assert_allclose(ours, theirs, rtol=2e-5)
    assert ours[-1] < 0.8 * ours[0]


# ---------------------------------------------------------------------------------------------------------------
# 7. The annotated Transformer's idioms: subsequent_mask from triu(...).type(torch.uint8) == 0, attention with
#    masked_fill(mask == 0, -1e9) and view/transpose/contiguous, LabelSmoothing (KLDivLoss(reduction="sum"),
#    fill_, scatter_, index_fill_, torch.nonzero), Adam with LambdaLR, and greedy decoding with type_as.
def annotated_copy(torch, nn, F, weights=None, steps=6, V=7, d=16):
    def subsequent_mask(size):
        attn_shape = (1, size, size)
        subsequent = torch.triu(torch.ones(attn_shape), diagonal=1).type(torch.uint8)
        return subsequent == 0

    class LabelSmoothing(nn.Module):
        def __init__(self, size, padding_idx, smoothing=0.0):
            super().__init__()
            self.criterion = nn.KLDivLoss(reduction="sum")
            self.padding_idx, self.confidence, self.smoothing, self.size = padding_idx, 1.0 - smoothing, smoothing, size

        def forward(self, x, target):
            true_dist = x.detach().clone()
            true_dist.fill_(self.smoothing / (self.size - 2))
            true_dist.scatter_(1, target.unsqueeze(1), self.confidence)
            true_dist[:, self.padding_idx] = 0
            mask = torch.nonzero(target == self.padding_idx)
            if mask.dim() > 0:
                true_dist.index_fill_(0, mask.squeeze(), 0.0)
            return self.criterion(x, true_dist.clone().detach())

    class Decoder(nn.Module):
        def __init__(self):
            super().__init__()
            self.embed = nn.Embedding(V, d)
            self.qkv = nn.Linear(d, 3 * d)
            self.proj = nn.Linear(d, V)

        def forward(self, x, mask):
            B, T = x.shape
            h = self.embed(x) * d**0.5
            q, k, v = [t.view(B, T, 2, d // 2).transpose(1, 2) for t in self.qkv(h).split(d, dim=-1)]
            scores = torch.matmul(q, k.transpose(-2, -1)) / (d // 2) ** 0.5
            scores = scores.masked_fill(mask.unsqueeze(1) == 0, -1e9)
            y = torch.matmul(scores.softmax(dim=-1), v).transpose(1, 2).contiguous().view(B, T, d)
            return F.log_softmax(self.proj(h + y), dim=-1)

    model = Decoder()
    if weights is None:
        return model
    model.load_state_dict({k: torch.tensor(v) for k, v in weights.items()})
    criterion = LabelSmoothing(V, padding_idx=0, smoothing=0.1)
    optimizer = torch.optim.Adam(model.parameters(), lr=0.01, betas=(0.9, 0.98), eps=1e-9)
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lr_lambda=lambda step: min(1.0, (step + 1) / 3))
    data = torch.LongTensor(np.random.default_rng(2).integers(1, V, (steps, 8, 6)).tolist())
    data[:, :, -1] = 0  # a padding position in every sequence
    losses = []
    for batch in data:
        out = model(batch[:, :-1], subsequent_mask(5).type_as(batch))
        loss = criterion(out.contiguous().view(-1, V), batch[:, 1:].contiguous().view(-1)) / batch.numel()
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        scheduler.step()
        losses.append(loss.item())
    ys = torch.zeros(1, 1).fill_(1).type_as(data)
    for _ in range(4):  # greedy decoding
        _, next_word = torch.max(model(ys, subsequent_mask(ys.size(1)).type_as(data))[:, -1], dim=1)
        ys = torch.cat([ys, torch.zeros(1, 1).type_as(data).fill_(next_word.item())], dim=1)
    return losses + ys.reshape(-1).tolist()


@needs_torch[1]
@pytest.mark.torch
def test_annotated_transformer_idioms_give_pytorchs_losses_and_decoding():
    ns = [imports(p) for p in ("torch", "minigrad")]
    weights = weights_of(annotated_copy(ns[0].torch, ns[0].nn, ns[0].F))
    theirs, ours = (annotated_copy(n.torch, n.nn, n.F, weights) for n in ns)
    np.testing.assert_allclose(ours[:6], theirs[:6], rtol=2e-5)
    assert ours[6:] == theirs[6:]  # the same greedy tokens


# ---------------------------------------------------------------------------------------------------------------
# 8. A from-scratch GPT book's idioms: device = torch.device(...), a triu mask buffer used as mask.bool()[:T, :T]
#    with masked_fill_(..., -torch.inf), GELU written with torch.pi, pad_sequence with ignore_index=-100, AdamW,
#    and a sampler that stops at eos_id (None by default: `idx_next == eos_id`).
def gpt_book(torch, nn, F, weights=None, steps=5, V=11, C=8, ctx=6):
    device = torch.device("cuda" if torch.cuda.is_available() and False else "cpu")

    class GELU(nn.Module):
        def forward(self, x):
            return 0.5 * x * (1 + torch.tanh(torch.sqrt(torch.tensor(2.0 / torch.pi)) *
                                             (x + 0.044715 * torch.pow(x, 3))))

    class Model(nn.Module):
        def __init__(self):
            super().__init__()
            self.tok = nn.Embedding(V, C)
            self.W_query, self.W_key, self.W_value = (nn.Linear(C, C, bias=False) for _ in range(3))
            self.ff = nn.Sequential(nn.Linear(C, 2 * C), GELU(), nn.Linear(2 * C, C))
            self.out_head = nn.Linear(C, V, bias=False)
            self.register_buffer("mask", torch.triu(torch.ones(ctx, ctx), diagonal=1))

        def forward(self, idx):
            b, num_tokens = idx.shape
            x = self.tok(idx)
            attn_scores = self.W_query(x) @ self.W_key(x).transpose(1, 2)
            attn_scores.masked_fill_(self.mask.bool()[:num_tokens, :num_tokens], -torch.inf)
            attn_weights = torch.softmax(attn_scores / self.W_key.weight.shape[0] ** 0.5, dim=-1)
            x = x + attn_weights @ self.W_value(x)
            return self.out_head(x + self.ff(x))

    model = Model().to(device)
    if weights is None:
        return model
    model.load_state_dict({k: torch.tensor(v) for k, v in weights.items()})
    rows = [torch.tensor([1, 2, 3, 4]), torch.tensor([5, 6]), torch.tensor([7, 8, 9, 10, 1])]
    inputs = torch.nn.utils.rnn.pad_sequence([r[:-1] for r in rows], batch_first=True, padding_value=0)
    targets = torch.nn.utils.rnn.pad_sequence([r[1:] for r in rows], batch_first=True, padding_value=-100)
    optimizer = torch.optim.AdamW(model.parameters(), lr=0.01, weight_decay=0.1)
    losses = []
    for _ in range(steps):
        optimizer.zero_grad()
        logits = model(inputs.to(device))
        loss = F.cross_entropy(logits.flatten(0, 1), targets.flatten(), ignore_index=-100)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    idx, eos_id = torch.tensor([[1, 2]]), None
    for _ in range(3):
        with torch.no_grad():
            logits = model(idx[:, -ctx:])[:, -1, :]
        top_logits, _ = torch.topk(logits, 3)
        logits = torch.where(logits < top_logits[:, -1], torch.tensor(float("-inf")).to(logits.device), logits)
        idx_next = torch.argmax(logits, dim=-1, keepdim=True)
        if idx_next == eos_id:
            break
        idx = torch.cat((idx, idx_next), dim=1)
    return losses + idx.reshape(-1).tolist()


@needs_torch[1]
@pytest.mark.torch
def test_gpt_book_idioms_give_pytorchs_losses_and_tokens():
    ns = [imports(p) for p in ("torch", "minigrad")]
    weights = weights_of(gpt_book(ns[0].torch, ns[0].nn, ns[0].F))
    theirs, ours = (gpt_book(n.torch, n.nn, n.F, weights) for n in ns)
    np.testing.assert_allclose(ours[:5], theirs[:5], rtol=2e-5)
    assert ours[5:] == theirs[5:]


# ---------------------------------------------------------------------------------------------------------------
# 9. makemore's idioms: a character Dataset of torch.zeros(..., dtype=torch.long) rows, an endless loader drawn
#    by RandomSampler(replacement=True, num_samples=int(1e10)), an MLP with BatchNorm1d, @torch.inference_mode
#    evaluation, torch.save / torch.load through a file object. It draws its own batches, so it must learn.
def makemore_mlp(torch, nn, F, data, steps=150):
    torch.manual_seed(0)
    words = ["emma", "olivia", "ava", "isabella", "sophia", "mia", "amelia", "harper", "evelyn", "abigail"] * 10
    chars = sorted(set("".join(words)))
    stoi = {ch: i + 1 for i, ch in enumerate(chars)}

    class CharDataset(data.Dataset):
        def __len__(self):
            return len(words)

        def __getitem__(self, i):
            x = torch.zeros(9, dtype=torch.long)
            ix = torch.tensor([stoi[c] for c in words[i]], dtype=torch.long)
            x[1:1 + len(ix)] = ix
            return x[:-1], x[1:]

    dataset = CharDataset()
    sampler = data.RandomSampler(dataset, replacement=True, num_samples=int(1e10))
    batches = iter(data.DataLoader(dataset, batch_size=16, sampler=sampler))
    model = nn.Sequential(nn.Embedding(len(chars) + 1, 8), nn.Flatten(), nn.Linear(64, 32, bias=False),
                          nn.BatchNorm1d(32), nn.Tanh(), nn.Linear(32, 8 * (len(chars) + 1)))
    optimizer = torch.optim.AdamW(model.parameters(), lr=0.01)

    @torch.inference_mode()
    def evaluate():
        model.eval()
        X, Y = zip(*(dataset[i] for i in range(len(dataset))))
        logits = model(torch.stack(X)).view(len(dataset) * 8, -1)
        model.train()
        return F.cross_entropy(logits, torch.stack(Y).view(-1)).item()

    before = evaluate()
    for _ in range(steps):
        X, Y = next(batches)
        loss = F.cross_entropy(model(X).view(-1, len(chars) + 1), Y.view(-1))
        model.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
    buffer = io.BytesIO()
    torch.save(model.state_dict(), buffer)
    buffer.seek(0)
    model.load_state_dict(torch.load(buffer))
    return before, evaluate()


@pytest.mark.parametrize("package", PACKAGES)
def test_makemore_idioms_learn(package):
    ns = imports(package)
    before, after = makemore_mlp(ns.torch, ns.nn, ns.F, ns.data)
    assert after < 0.6 * before, (before, after)
