"""Two GPTs written for PyTorch and run under both libraries with only the import lines different
(test_pytorch_programs.py explains the rule): a character GPT in the style of a well-known video lecture (heads
as a ModuleList, a `tril` buffer, `estimate_loss` writing `losses[k] = loss.item()`, `torch.multinomial`), and a
GPT in nanoGPT's `model.py` idiom (ModuleDict, weight tying, `apply(self._init_weights)`, optimizer groups by
`p.dim()`, top-k sampling). Both draw their batches from the global seed, so they must learn, by the margin stated.

Read next: test_pytorch_programs_makemore.py.
"""

import math

import pytest
from test_pytorch_programs import PACKAGES, imports, needs_torch, one_torch_thread, torch_installed  # noqa: F401

import minigrad

TEXT = ("first citizen: before we proceed any further, hear me speak. all: speak, speak. first citizen: you are "
        "all resolved rather to die than to famish? all: resolved. resolved. first citizen: first, you know caius "
        "marcius is chief enemy to the people. all: we know't, we know't. first citizen: let us kill him, and "
        "we'll have corn at our own price. is't a verdict? all: no more talking on't; let it be done: away, away! ")
pytestmark = pytest.mark.usefixtures("one_torch_thread")  # PyTorch on one thread (test_pytorch_programs says why)


# ---------------------------------------------------------------------------------------------------------------
# 5. The video lecture's character GPT, at a size a test can train.
def lecture_gpt(torch, nn, F, max_iters=60, eval_iters=4):
    batch_size, block_size, n_embd, n_head, n_layer, learning_rate = 16, 16, 32, 4, 2, 3e-3
    torch.manual_seed(1337)
    chars = sorted(list(set(TEXT)))
    vocab_size = len(chars)
    stoi = {ch: i for i, ch in enumerate(chars)}
    itos = {i: ch for i, ch in enumerate(chars)}
    encode = lambda s: [stoi[c] for c in s]  # noqa: E731  (the lecture's style)
    decode = lambda l: "".join([itos[i] for i in l])  # noqa: E731, E741
    data = torch.tensor(encode(TEXT), dtype=torch.long)
    n = int(0.9 * len(data))
    train_data, val_data = data[:n], data[n:]

    def get_batch(split):
        data = train_data if split == "train" else val_data
        ix = torch.randint(len(data) - block_size, (batch_size,))
        x = torch.stack([data[i:i + block_size] for i in ix])
        y = torch.stack([data[i + 1:i + block_size + 1] for i in ix])
        return x, y

    @torch.no_grad()
    def estimate_loss():
        out = {}
        model.eval()
        for split in ["train", "val"]:
            losses = torch.zeros(eval_iters)
            for k in range(eval_iters):
                X, Y = get_batch(split)
                logits, loss = model(X, Y)
                losses[k] = loss.item()
            out[split] = losses.mean()
        model.train()
        return out

    class Head(nn.Module):
        """one head of self-attention"""

        def __init__(self, head_size):
            super().__init__()
            self.key = nn.Linear(n_embd, head_size, bias=False)
            self.query = nn.Linear(n_embd, head_size, bias=False)
            self.value = nn.Linear(n_embd, head_size, bias=False)
            self.register_buffer("tril", torch.ones(block_size, block_size).tril())  # (torch.tril: a method here)

        def forward(self, x):
            B, T, C = x.shape
            k = self.key(x)  # (B,T,hs)
            q = self.query(x)  # (B,T,hs)
            wei = q @ k.transpose(-2, -1) * k.shape[-1] ** -0.5  # (B, T, hs) @ (B, hs, T) -> (B, T, T)
            wei = wei.masked_fill(self.tril[:T, :T] == 0, float("-inf"))  # (B, T, T)
            wei = F.softmax(wei, dim=-1)
            v = self.value(x)  # (B,T,hs)
            return wei @ v  # (B, T, T) @ (B, T, hs) -> (B, T, hs)

    class MultiHeadAttention(nn.Module):
        """multiple heads of self-attention in parallel"""

        def __init__(self, num_heads, head_size):
            super().__init__()
            self.heads = nn.ModuleList([Head(head_size) for _ in range(num_heads)])
            self.proj = nn.Linear(head_size * num_heads, n_embd)

        def forward(self, x):
            out = torch.cat([h(x) for h in self.heads], dim=-1)
            return self.proj(out)

    class FeedFoward(nn.Module):
        def __init__(self, n_embd):
            super().__init__()
            self.net = nn.Sequential(nn.Linear(n_embd, 4 * n_embd), nn.ReLU(), nn.Linear(4 * n_embd, n_embd))

        def forward(self, x):
            return self.net(x)

    class Block(nn.Module):
        def __init__(self, n_embd, n_head):
            super().__init__()
            head_size = n_embd // n_head
            self.sa = MultiHeadAttention(n_head, head_size)
            self.ffwd = FeedFoward(n_embd)
            self.ln1 = nn.LayerNorm(n_embd)
            self.ln2 = nn.LayerNorm(n_embd)

        def forward(self, x):
            x = x + self.sa(self.ln1(x))
            x = x + self.ffwd(self.ln2(x))
            return x

    class GPTLanguageModel(nn.Module):
        def __init__(self):
            super().__init__()
            self.token_embedding_table = nn.Embedding(vocab_size, n_embd)
            self.position_embedding_table = nn.Embedding(block_size, n_embd)
            self.blocks = nn.Sequential(*[Block(n_embd, n_head=n_head) for _ in range(n_layer)])
            self.ln_f = nn.LayerNorm(n_embd)
            self.lm_head = nn.Linear(n_embd, vocab_size)

        def forward(self, idx, targets=None):
            B, T = idx.shape
            tok_emb = self.token_embedding_table(idx)  # (B,T,C)
            pos_emb = self.position_embedding_table(torch.arange(T))  # (T,C)
            x = self.ln_f(self.blocks(tok_emb + pos_emb))  # (B,T,C)
            logits = self.lm_head(x)  # (B,T,vocab_size)
            if targets is None:
                return logits, None
            B, T, C = logits.shape
            logits = logits.view(B * T, C)
            targets = targets.view(B * T)
            return logits, F.cross_entropy(logits, targets)

        def generate(self, idx, max_new_tokens):
            for _ in range(max_new_tokens):
                idx_cond = idx[:, -block_size:]
                logits, loss = self(idx_cond)
                logits = logits[:, -1, :]  # becomes (B, C)
                probs = F.softmax(logits, dim=-1)  # (B, C)
                idx_next = torch.multinomial(probs, num_samples=1)  # (B, 1)
                idx = torch.cat((idx, idx_next), dim=1)  # (B, T+1)
            return idx

    model = GPTLanguageModel()
    optimizer = torch.optim.AdamW(model.parameters(), lr=learning_rate)
    history = [estimate_loss()]
    for _ in range(max_iters):
        xb, yb = get_batch("train")
        logits, loss = model(xb, yb)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
    history.append(estimate_loss())
    context = torch.zeros((1, 1), dtype=torch.long)
    text = decode(model.generate(context, max_new_tokens=30)[0].tolist())
    return [(h["train"].item(), h["val"].item()) for h in history], text


@pytest.mark.parametrize("package", PACKAGES)
def test_lecture_gpt_learns(package):
    ns = imports(package)
    (start, end), text = lecture_gpt(ns.torch, ns.nn, ns.F)
    assert start[0] == pytest.approx(math.log(len(set(TEXT))), rel=0.15)  # about uniform over the characters
    assert end[0] < 0.75 * start[0], (start, end)  # the training loss falls by at least a quarter
    assert len(text) == 31 and set(text) <= set(TEXT)


# ---------------------------------------------------------------------------------------------------------------
# 6. A GPT in nanoGPT's model.py idiom: a config, ModuleDict, weight tying, apply(_init_weights), the scaled
#    c_proj init, optimizer groups by p.dim(), AdamW, clip_grad_norm_, and top-k sampling.
def nanogpt(torch, nn, F, max_iters=60):
    from dataclasses import dataclass

    @dataclass
    class GPTConfig:
        block_size: int = 16
        vocab_size: int = 32
        n_layer: int = 2
        n_head: int = 4
        n_embd: int = 32
        dropout: float = 0.0
        bias: bool = True

    class CausalSelfAttention(nn.Module):
        def __init__(self, config):
            super().__init__()
            self.c_attn = nn.Linear(config.n_embd, 3 * config.n_embd, bias=config.bias)
            self.c_proj = nn.Linear(config.n_embd, config.n_embd, bias=config.bias)
            self.n_head, self.n_embd, self.dropout = config.n_head, config.n_embd, config.dropout

        def forward(self, x):
            B, T, C = x.size()
            q, k, v = self.c_attn(x).split(self.n_embd, dim=2)
            k = k.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)  # (B, nh, T, hs)
            q = q.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)  # (B, nh, T, hs)
            v = v.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)  # (B, nh, T, hs)
            y = F.scaled_dot_product_attention(q, k, v, attn_mask=None, dropout_p=0, is_causal=True)
            y = y.transpose(1, 2).contiguous().view(B, T, C)  # re-assemble all head outputs side by side
            return self.c_proj(y)

    class MLP(nn.Module):
        def __init__(self, config):
            super().__init__()
            self.c_fc = nn.Linear(config.n_embd, 4 * config.n_embd, bias=config.bias)
            self.gelu = nn.GELU()
            self.c_proj = nn.Linear(4 * config.n_embd, config.n_embd, bias=config.bias)

        def forward(self, x):
            return self.c_proj(self.gelu(self.c_fc(x)))

    class Block(nn.Module):
        def __init__(self, config):
            super().__init__()
            self.ln_1 = nn.LayerNorm(config.n_embd)
            self.attn = CausalSelfAttention(config)
            self.ln_2 = nn.LayerNorm(config.n_embd)
            self.mlp = MLP(config)

        def forward(self, x):
            x = x + self.attn(self.ln_1(x))
            return x + self.mlp(self.ln_2(x))

    class GPT(nn.Module):
        def __init__(self, config):
            super().__init__()
            self.config = config
            self.transformer = nn.ModuleDict(dict(
                wte=nn.Embedding(config.vocab_size, config.n_embd),
                wpe=nn.Embedding(config.block_size, config.n_embd),
                drop=nn.Dropout(config.dropout),
                h=nn.ModuleList([Block(config) for _ in range(config.n_layer)]),
                ln_f=nn.LayerNorm(config.n_embd),
            ))
            self.lm_head = nn.Linear(config.n_embd, config.vocab_size, bias=False)
            self.transformer.wte.weight = self.lm_head.weight  # https://paperswithcode.com/method/weight-tying
            self.apply(self._init_weights)
            for pn, p in self.named_parameters():  # scaled init of the residual projections, per GPT-2
                if pn.endswith("c_proj.weight"):
                    torch.nn.init.normal_(p, mean=0.0, std=0.02 / math.sqrt(2 * config.n_layer))

        def _init_weights(self, module):
            if isinstance(module, nn.Linear):
                torch.nn.init.normal_(module.weight, mean=0.0, std=0.02)
                if module.bias is not None:
                    torch.nn.init.zeros_(module.bias)
            elif isinstance(module, nn.Embedding):
                torch.nn.init.normal_(module.weight, mean=0.0, std=0.02)

        def forward(self, idx, targets=None):
            b, t = idx.size()
            pos = torch.arange(0, t, dtype=torch.long)  # shape (t)
            x = self.transformer.drop(self.transformer.wte(idx) + self.transformer.wpe(pos))
            for block in self.transformer.h:
                x = block(x)
            x = self.transformer.ln_f(x)
            if targets is None:
                return self.lm_head(x[:, [-1], :]), None  # only the last position at inference
            logits = self.lm_head(x)
            return logits, F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1), ignore_index=-1)

        def configure_optimizers(self, weight_decay, learning_rate, betas):
            param_dict = {pn: p for pn, p in self.named_parameters() if p.requires_grad}
            decay_params = [p for n, p in param_dict.items() if p.dim() >= 2]
            nodecay_params = [p for n, p in param_dict.items() if p.dim() < 2]
            optim_groups = [{"params": decay_params, "weight_decay": weight_decay},
                            {"params": nodecay_params, "weight_decay": 0.0}]
            return torch.optim.AdamW(optim_groups, lr=learning_rate, betas=betas)

        @torch.no_grad()
        def generate(self, idx, max_new_tokens, temperature=1.0, top_k=None):
            for _ in range(max_new_tokens):
                idx_cond = idx if idx.size(1) <= self.config.block_size else idx[:, -self.config.block_size:]
                logits, _ = self(idx_cond)
                logits = logits[:, -1, :] / temperature
                if top_k is not None:
                    v, _ = torch.topk(logits, min(top_k, logits.size(-1)))
                    logits[logits < v[:, [-1]]] = -float("Inf")
                probs = F.softmax(logits, dim=-1)
                idx_next = torch.multinomial(probs, num_samples=1)
                idx = torch.cat((idx, idx_next), dim=1)
            return idx

    torch.manual_seed(1337)
    chars = sorted(set(TEXT))
    data = torch.tensor([chars.index(c) for c in TEXT], dtype=torch.long)
    model = GPT(GPTConfig(vocab_size=len(chars)))
    n_params = sum(p.numel() for p in model.parameters())
    optimizer = model.configure_optimizers(weight_decay=0.1, learning_rate=3e-3, betas=(0.9, 0.95))
    block_size, losses = model.config.block_size, []
    for _ in range(max_iters):
        ix = torch.randint(len(data) - block_size, (16,))
        x = torch.stack([data[i:i + block_size] for i in ix])
        y = torch.stack([data[i + 1:i + 1 + block_size] for i in ix])
        logits, loss = model(x, y)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        losses.append(loss.item())
    model.eval()
    sample = model.generate(torch.zeros((1, 1), dtype=torch.long), max_new_tokens=20, top_k=5)[0].tolist()
    tied = model.transformer.wte.weight is model.lm_head.weight
    return losses, "".join(chars[i] for i in sample), n_params, tied


@pytest.mark.parametrize("package", [
    pytest.param("minigrad", marks=pytest.mark.skipif(not hasattr(minigrad, "topk"), reason="needs mg.topk")),
    pytest.param("torch", marks=needs_torch)])
def test_nanogpt_learns(package):
    ns = imports(package)
    losses, sample, n_params, tied = nanogpt(ns.torch, ns.nn, ns.F)
    V, T, C = len(set(TEXT)), 16, 32
    block = 2 * C + (C * 3 * C + 3 * C) + (C * C + C) + 2 * C + (C * 4 * C + 4 * C) + (4 * C * C + C)
    assert tied and n_params == V * C + T * C + 2 * block + 2 * C  # the tied weight is counted once
    assert losses[0] == pytest.approx(math.log(len(set(TEXT))), rel=0.1)
    assert sum(losses[-5:]) / 5 < 0.75 * losses[0], (losses[0], losses[-5:])
    assert len(sample) == 21 and set(sample) <= set(TEXT)
