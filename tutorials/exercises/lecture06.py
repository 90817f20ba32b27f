"""第 06 讲练习：训练与 GPT——批量、一步梯度下降、采样的旋钮、KV 缓存。

把每个 `raise NotImplementedError` 换成你的代码，然后检查：

    python -m tutorials.exercises check 06
    from tutorials.exercises import check; check("06")   # Notebook 里

这一讲的练习都用 NumPy；logits 是一维数组（词表里每个候选一个分数）。
参考答案在 `tutorials/solutions/lecture06.py`——先自己做。
"""

import numpy as np


# 练习 6.1 ★ 一批训练数据
# data 是整段文本的词元编号（一维整数数组）。对 starts 里的每个起点 s，输入是 data[s : s + block_size]，
# 答案是它后面错一位的那一段。返回 (x, y)，形状都是 (len(starts), block_size)。
# 这个答案会装进你自己的 GPT（第 09 讲，tutorials/09_capstone.py）：训练循环的每一批数据。
def make_batch(data: np.ndarray, starts: np.ndarray, block_size: int) -> tuple[np.ndarray, np.ndarray]:
    raise NotImplementedError


# 练习 6.2 ★★ 一步梯度下降，损失会降多少（填数题，写成函数）
# 每个参数 θ 走一步 θ ← θ − lr·g。在一阶（泰勒展开到一次项）近似下，损失下降多少？
# grads 是每个参数张量的梯度（NumPy 数组）列表。讲义第 1 节用这个估计和实测的下降量对照过。
def first_order_decrease(lr: float, grads: list[np.ndarray]) -> float:
    raise NotImplementedError


# 练习 6.3 ★★ top-k
# 返回一个概率向量：只有 logits 最大的 k 个候选有概率（按 softmax 重新归一化，加起来等于 1），其余为 0。
# k 大于词表时就是普通的 softmax。
def top_k_probs(logits: np.ndarray, k: int) -> np.ndarray:
    raise NotImplementedError


# 练习 6.4 ★★ top-p（nucleus）
# 按概率从大到小排，一个候选被留下，当且仅当排在它前面的候选的概率之和 < p
# （所以最可能的那个总会留下，留下的概率之和刚好第一次 ≥ p）。返回留下的候选重新归一化后的概率向量，其余为 0。
def top_p_probs(logits: np.ndarray, p: float) -> np.ndarray:
    raise NotImplementedError


# 练习 6.5 ★★ 抽一个词元
# 依次：logits 除以 temperature → 若给了 top_k，只留前 k 个 → 若给了 top_p，在剩下的里面再按 top-p 筛 →
# 用 rng（np.random.Generator）按概率抽一个候选，返回它的下标（int）。temperature == 0 时不采样，直接返回最大的那个。
# 检查器会抽几千次，看每个候选出现的频率是否符合应有的分布。可以用上 6.3、6.4。
# 这个答案会装进你自己的 GPT（第 09 讲，tutorials/09_capstone.py）：续写时抽下一个字。
def sample_next(logits: np.ndarray, rng: np.random.Generator, temperature: float = 1.0, top_k: int | None = None,
                top_p: float | None = None) -> int:
    raise NotImplementedError


# 练习 6.6 ★★★ KV 缓存的一步（单个头）
# 逐个词元生成时，新词元的 q、k、v（都是 (d,) 向量）到了；cache = {"k": [...], "v": [...]} 里是之前
# 所有词元的 key 和 value。把新的 k、v 追加进 cache，再让新词元的 q 对缓存里的所有 key 做缩放点积注意力，
# 返回输出 (d,)。检查器会一步一步调用它，和“每步把整段重算一遍因果注意力”的结果比。
def cached_attention_step(q: np.ndarray, k: np.ndarray, v: np.ndarray, cache: dict) -> np.ndarray:
    raise NotImplementedError


# 练习 6.7 ★★★ 开放题：200 步的学习率表
# 第 4 节的学习率表（预热 50 步升到 2e-3，再按余弦降到 2e-4）是为几百步的训练定的。预算只有 200 步时呢？
# lr_schedule(step, total_steps) 返回第 step 步（从 0 数起，共 total_steps 步）的学习率。检查器用它训练一个小 GPT
# （2 层、4 个头、32 个通道；AdamW，每步 16 段 64 个字符，梯度裁剪到 1），换 2 个随机种子各训练 200 步，
# 和同样设置下讲义的学习率表逐窗口比：平均要好 0.06 纳特/字符以上，每个种子都要更好。每次检查都在检查器的开发集上比
# （训练文本最后十分之一切出的窗口，训练时不用）；尺子上的分数只打一次：
# python -m tutorials.exercises check --final 6.7。
# 先自己训练几次比一比（用训练文本末尾切出的一段当开发集打分，tutorials.yardstick.cut_windows 可以切窗口）；
# optim.cosine_with_warmup(step, max_lr, warmup_iters, decay_iters, min_lr) 可以拿来用，也可以自己写。
def lr_schedule(step: int, total_steps: int) -> float:
    raise NotImplementedError
