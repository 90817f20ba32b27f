"""第 01 讲练习：猜下一个词。

把每个 `raise NotImplementedError` 换成你的代码，然后检查：

    python -m tutorials.exercises check 01
    from tutorials.exercises import check; check("01")   # Notebook 里

这一讲的练习都用 NumPy：字符已经编成整数 id（0 .. V-1），一段文本就是一个整数数组。
参考答案在 `tutorials/solutions/lecture01.py`——先自己做。
"""

import numpy as np


# 练习 1.1 ★ 瞎猜的损失
# V 个字符里均匀地瞎猜（每个字符概率 1/V），交叉熵损失是多少？用自然对数（单位纳特）。
# 讲义第 0 节说过答案；这里写成一个对任何 V 都成立的函数。
def uniform_loss(vocab_size: int) -> float:
    raise NotImplementedError


# 练习 1.2 ★ 数出二元组
# 返回 (V, V) 的计数表 counts：counts[a, b] 是文本 ids 里“a 后面紧跟着 b”出现的次数。
# 小心：NumPy 的 `counts[rows, cols] += 1` 遇到重复的下标只加一次（讲义用的是 np.add.at）。
def bigram_counts(ids: np.ndarray, vocab_size: int) -> np.ndarray:
    raise NotImplementedError


# 练习 1.3 ★★ 从计数到概率
# 每个格子先加 alpha（平滑，让没见过的组合不至于概率为 0），再让每一行变成概率分布：
# P[a, b] = P(下一个是 b | 上一个是 a)，每一行加起来等于 1。
def bigram_probs(counts: np.ndarray, alpha: float) -> np.ndarray:
    raise NotImplementedError


# 练习 1.4 ★★ 平均损失
# 用概率表 P 给文本 ids 打分：对每个相邻的 (a, b)，损失是 −ln P[a, b]；返回所有位置的平均（一个 float）。
def average_nll(P: np.ndarray, ids: np.ndarray) -> float:
    raise NotImplementedError


# 练习 1.5 ★★★ 熵（比特）
# p 的最后一维是一个概率分布（可以有很多行）。返回每一行的熵 H = −Σ p·log₂ p，单位比特，形状是 p.shape[:-1]。
# 约定 0·log 0 = 0：概率为 0 的候选不贡献熵（但 NumPy 算 0 * log(0) 会得到 nan）。
def entropy_bits(p: np.ndarray) -> np.ndarray:
    raise NotImplementedError


# 练习 1.6 ★★★ 开放题：在开发集上挑阶数和平滑
# 讲义第 3 节把平滑强度固定在 β = 2，只挑了看几个字符（k），于是 k = 4 最好。k 和 β 一起挑，能好多少？
# choose_ngram 只拿到训练文本（莎士比亚训练部分的前一百万个字符）：从里面切出一段作开发集（例如最后 10%），
# 在其余部分上数数，在开发集上比较各种 (k, β)，返回你挑中的 (k, beta)。
# 检查器用你的 (k, beta) 在这一百万个字符上数数，每次检查都在它自己的开发集上打分（训练文本最后十分之一切出的窗口，
# 你拿不到）：要比讲义的 (k=4, β=2) 逐窗口好 0.15 纳特以上。尺子（验证文本）上的分数只打一次：
# python -m tutorials.exercises check --final 1.6。choose_ngram 里用到 tutorials.yardstick 或 load_dataset，
# 检查器直接拒绝。
# 工具：tutorials.exercises.tools.NGramCounts(ids, V, k_max) 数一次，.probs(x, y, k, beta) 给出任意 (k, β) 的概率；
# tutorials.yardstick.cut_windows(ids) 从一段文本里等距切出 (x, y) 窗口。
def choose_ngram(train_ids: np.ndarray, vocab_size: int) -> tuple[int, float]:
    raise NotImplementedError
