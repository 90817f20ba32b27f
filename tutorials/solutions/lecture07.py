"""第 07 讲练习的参考答案（题目在 tutorials/exercises/lecture07.py）。先自己做，再来对照。"""

import numpy as np

import minigrad as mg

CHOICES = ("残差连接", "LayerNorm", "因果遮罩", "位置编码", "KV 缓存", "多头注意力", "除以 √d_k", "门控（GRU）")
MATCH = {
    "tanh RNN 的梯度每往回传一步就缩小一截": "门控（GRU）",  # lecture 02, section 3
    "维度一大，softmax 变成非 0 即 1，梯度传不回去": "除以 √d_k",  # 03 §3
    "“狗咬人”和“人咬狗”经过自注意力得到同一组向量": "位置编码",  # 04 §1-2
    "一套注意力只学得出一种匹配方式": "多头注意力",  # 05 §1-2
    "叠了 20 层之后，梯度传不到第一层": "残差连接",  # 05 §3
    "残差流的数值随深度越滚越大": "LayerNorm",  # 05 §4
    "整句并行训练时，前面的位置偷看了后面的字": "因果遮罩",  # 06 §3
    "逐字生成时，每一步都把整段前文重算一遍": "KV 缓存",  # 06 §6
}


@mg.no_grad()
def greedy_generate(model, ids: np.ndarray, n: int) -> np.ndarray:
    block_size = model.config.block_size
    for _ in range(n):
        logits, _ = model(ids[:, -block_size:])  # the model sees at most block_size tokens
        next_ids = logits.numpy()[:, -1, :].argmax(axis=-1)  # (B,): the last position guesses the next token
        ids = np.concatenate([ids, next_ids[:, None]], axis=1)
    return ids


def kv_cache_floats(n_layer: int, n_embd: int, T: int, batch: int = 1) -> int:
    return 2 * n_layer * batch * T * n_embd  # a key and a value, per layer, per token, n_embd wide (all heads)


def gpt_parameters(vocab_size: int, block_size: int, n_layer: int, n_embd: int) -> int:
    C = n_embd
    block = 12 * C * C + 13 * C  # exercise 5.1
    return vocab_size * C + block_size * C + n_layer * block + 2 * C  # wte (= lm_head), wpe, blocks, ln_f


def paired_gap(losses_a: np.ndarray, losses_b: np.ndarray) -> tuple[float, float]:
    diff = (losses_a - losses_b).mean(axis=1)  # (N,): one difference per window; windows are nearly independent
    return float(diff.mean()), float(diff.std(ddof=1) / np.sqrt(len(diff)))


def choose_mix(train_ids: np.ndarray, vocab_size: int, gpt_probs) -> float:
    from tutorials.kneser_ney import KneserNey, dev_split
    from tutorials.yardstick import cut_windows  # a pure function: it cuts windows from whatever text it is given

    fit, dev = dev_split(train_ids)  # the last 10% of the training text: Kneser-Ney never counts it
    x, y = cut_windows(dev)
    p_kn = KneserNey(fit, vocab_size, max_order=10, scale=1.2).probs(x, y)
    p_gpt = gpt_probs(x, y)  # the GPT has seen this text in training: the dev split flatters it a little
    weights = np.linspace(0, 1, 21)
    dev_loss = [float(-np.log(w * p_gpt + (1 - w) * p_kn).mean()) for w in weights]
    return float(weights[int(np.argmin(dev_loss))])
