"""第 07 讲练习：一张表串起全文。

把每个 `None` 和 `raise NotImplementedError` 换成你的答案，然后检查：

    python -m tutorials.exercises check 07
    from tutorials.exercises import check; check("07")   # Notebook 里

参考答案在 `tutorials/solutions/lecture07.py`——先自己做。
"""

import numpy as np

# 练习 7.1 ★ 配对：每个毛病由哪个补法治好？
# 从 CHOICES 里选一个名字，填进 MATCH 的每个 None（每个名字正好用一次）。
CHOICES = ("残差连接", "LayerNorm", "因果遮罩", "位置编码", "KV 缓存", "多头注意力", "除以 √d_k", "门控（GRU）")
MATCH = {
    "tanh RNN 的梯度每往回传一步就缩小一截": None,
    "维度一大，softmax 变成非 0 即 1，梯度传不回去": None,
    "“狗咬人”和“人咬狗”经过自注意力得到同一组向量": None,
    "一套注意力只学得出一种匹配方式": None,
    "叠了 20 层之后，梯度传不到第一层": None,
    "残差流的数值随深度越滚越大": None,
    "整句并行训练时，前面的位置偷看了后面的字": None,
    "逐字生成时，每一步都把整段前文重算一遍": None,
}


# 练习 7.2 ★★ 贪心生成
# model 是一个 minigpt.GPT；model(ids) 返回 (logits, loss)，logits 的形状是 (B, T, V)。
# 从提示 ids（(B, T0) 的整数数组）出发，重复 n 次：取模型能看的最后 model.config.block_size 个词元，
# 前向一次，用最后一个位置的 logits 选出最大的那个候选，接到 ids 后面。返回 (B, T0 + n) 的数组。
# （这就是 model.generate(ids, n, temperature=0) 做的事，只是不用 KV 缓存。）
def greedy_generate(model, ids: np.ndarray, n: int) -> np.ndarray:
    raise NotImplementedError


# 练习 7.3 ★★ KV 缓存有多大（填数题，写成函数）
# 一个 n_layer 层、宽度 n_embd 的 GPT，batch 里 batch 条序列、每条 T 个词元，KV 缓存一共要存多少个数？
def kv_cache_floats(n_layer: int, n_embd: int, T: int, batch: int = 1) -> int:
    raise NotImplementedError


# 练习 7.4 ★★★ 整个 GPT 有多少参数（填数题，写成函数）
# minigpt 的默认 GPT：嵌入表 wte（V × C）、可学习的位置表 wpe（block_size × C）、n_layer 个 block（第 5 讲 5.1）、
# 最后的 LayerNorm ln_f，输出层 lm_head 和 wte 共用同一个矩阵（tie_weights=True，只算一次）。
def gpt_parameters(vocab_size: int, block_size: int, n_layer: int, n_embd: int) -> int:
    raise NotImplementedError


# 练习 7.5 ★★ 两个模型在同一把尺子上差多少
# losses_a、losses_b 是两个模型在尺子上的逐字符损失，形状都是 (N, W)：N 个窗口，每个窗口 W 个字符，
# 两者读的是同一批窗口。
# 返回 (gap, stderr)：gap 是 a 比 b 平均每字符多多少纳特（a − b）；stderr 是 gap 的标准误差。
# 提示：同一个窗口里的字符不是彼此独立的，不同窗口才近似独立；而两个模型读的是同一段文本——
# 先逐窗口求出“a 的平均 − b 的平均”，得到 N 个数，gap 是它们的平均，stderr 是它们的样本标准差（除以 N − 1）再除以 √N。
# （tutorials/yardstick.py 的 `Score.gap` 就做这件事；先自己写，别偷看。）
# 这个答案会装进你自己的 GPT（第 09 讲，tutorials/09_capstone.py）：把你的 GPT 放上梯子时的逐窗口差距。
def paired_gap(losses_a: np.ndarray, losses_b: np.ndarray) -> tuple[float, float]:
    raise NotImplementedError


# 练习 7.6 ★★★ 开放题：把 GPT 和 Kneser-Ney 混起来
# 梯子上，随课程附带的 GPT 和第 01 讲的 Kneser-Ney（看前 9 个字符）各有所长：一个会“学”，一个会“记”。
# 把两者的概率按权重混合：P(c) = λ·P_GPT(c) + (1 − λ)·P_KN(c)（对每个 λ ∈ [0, 1] 都还是一个概率分布）。λ 取多少？
# choose_mix 拿到训练文本 train_ids（最后十分之一留给检查器作开发集，不给你）、词表大小和 gpt_probs：
# gpt_probs(x, y) 对 (N, T) 的窗口 x（T ≤ 64）
# 给出附带的 GPT 对每个真实下一字符 y 的概率，形状 (N, T)。从训练文本里切出开发集（例如最后 10%），
# 只在其余部分上数 Kneser-Ney：tutorials.kneser_ney.KneserNey(ids, V, max_order=10, scale=1.2)，
# .probs(x, y) 给出它的概率；在开发集上比较各种 λ，返回你挑中的 λ（GPT 的权重）。
# 检查器用你的 λ 混合两者（Kneser-Ney 在你拿到的 train_ids 上数），每次检查都在它的开发集上打分：要比两者都逐窗口好
# 0.015 纳特以上。尺子上的分数只打一次：python -m tutorials.exercises check --final 7.6。
# 注意：GPT 训练时见过整段训练文本（开发集对它偏心：在开发集上它和 Kneser-Ney 不相上下，在尺子上差得多），
# Kneser-Ney 则绝不能在开发集上数过。
# 尺子只能用来打这最后一次分：choose_mix 里用到 tutorials.yardstick.load 或 load_dataset，检查器直接拒绝。
# tutorials.yardstick.cut_windows(ids) 从一段文本里等距切出 (x, y) 窗口。
def choose_mix(train_ids: np.ndarray, vocab_size: int, gpt_probs) -> float:
    raise NotImplementedError
