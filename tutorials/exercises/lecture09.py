"""第 09 讲练习：你的 GPT——把零件接成模型，再亲手写训练的每一步。

把每个 `raise NotImplementedError` 换成你的代码，然后检查：

    python -m tutorials.exercises check 09
    from tutorials.exercises import check; check("09")   # Notebook 里

**这些答案会变成你自己的 GPT。** 第 09 讲（tutorials/09_capstone.py）把这一讲的七道题，和前面几讲的
3.1（softmax）、3.3（因果注意力）、5.2 / 5.5（LayerNorm 的前向和反向）、5.3（切头）、6.1（一批数据）、
6.5（采样）、7.5（配对差距）装在一起：一个参数名和 GPT-2 一样的模型，加上你写的训练循环，
跑在**你自己的引擎**上（第 00 讲的 tutorials/exercises/engine.py）。那一讲开头有一张表，列出每个零件
（引擎的每一部分也在内）是谁写的、检查过没有。某道题没写好，那一讲会用一行话点名它，只把这一个零件换成参考答案
（引擎的骨架没写好时，整个 GPT 改在 minigrad 的引擎上跑）。

**只用两个引擎都有的张量方法**（minigrad 的，和你的 engine.py；意思一样，所以同一份代码在两个引擎上都能跑）：
`+ − * /`（另一边可以是一个数）、`@`、`x ** p`（p 是一个数）、`exp()`、`log()`、`sqrt()`、`erf()`、
`sum(axis=…, keepdims=…)`、`mean(axis=…, keepdims=…)`、`max(dim=…, keepdim=…)`——和 PyTorch 一样，给了 dim 时
返回一对 (values, indices)，要的是 `.values`——、`reshape(…)`、`swapaxes(a, b)`、下标（整数、切片、整数数组）、
`masked_fill(mask, value)`、`detach()`；属性 `.shape`、`.ndim`、`.grad`（一个张量，或 None）、`.array`（底下的
NumPy 数组：AdamW 就地更新的就是它）；`.item()`、`.numpy()`、`.backward()`。
minigrad 的函数（mg.tensor、F.xxx、mg.where……）你的引擎里没有，不要用；minigrad 里做同一件事的现成函数
（F.embedding、F.gelu、F.cross_entropy、optim.AdamW、nn.utils.clip_grad_norm_……）在检查时会拒绝运行。
参考答案在 `tutorials/solutions/lecture09.py`——先自己做。
"""

import numpy as np

import minigrad as mg


# 练习 9.1 ★ 词元嵌入加位置嵌入
# idx 是 (B, T) 的整数数组（字符编号），wte (V, C) 是词元嵌入表，wpe (block_size, C) 是位置嵌入表，T ≤ block_size。
# 返回 (B, T, C)：位置 t 上的向量 = wte 里第 idx[b, t] 行 + wpe 里第 t 行。
# 提示：张量可以用整数数组索引（wte[idx]），梯度会加回被查到的那几行。
# 你的 GPT 的第一层（transformer.wte、transformer.wpe）用的就是它。
def embed(idx: np.ndarray, wte: mg.Tensor, wpe: mg.Tensor) -> mg.Tensor:
    raise NotImplementedError


# 练习 9.2 ★★ MLP：C → 4C → C
# x (B, T, C)；c_fc_weight (4C, C)、c_fc_bias (4C,)、c_proj_weight (C, 4C)、c_proj_bias (C,)——
# Linear 的权重是 (out, in)。
# h = x @ c_fc_weightᵀ + c_fc_bias，再过精确的 GELU：gelu(h) = 0.5·h·(1 + erf(h/√2))（Tensor 有 .erf()），
# 最后 gelu(h) @ c_proj_weightᵀ + c_proj_bias。你的 GPT 每个 Block 里的 mlp 就是它。
def mlp(x: mg.Tensor, c_fc_weight: mg.Tensor, c_fc_bias: mg.Tensor, c_proj_weight: mg.Tensor,
        c_proj_bias: mg.Tensor) -> mg.Tensor:
    raise NotImplementedError


# 练习 9.3 ★★ Pre-LN 的 Block：残差连接
# ln_1、attn、ln_2、mlp 是四个函数，每个把 (B, T, C) 的张量变成 (B, T, C)。按 GPT-2 的接法（Pre-LN）把它们接起来：
#   x = x + attn(ln_1(x))，然后 x = x + mlp(ln_2(x))
# x 是“残差流”：子层只读它归一化后的样子，再把输出加回去。你的 GPT 的每个 Block 都这样接。
def block(x: mg.Tensor, ln_1, attn, ln_2, mlp) -> mg.Tensor:
    raise NotImplementedError


# 练习 9.4 ★★ 语言模型的损失
# logits (B, T, V)，targets (B, T) 的整数数组。返回一个数（形状 () 的张量）：
# 所有 B·T 个位置上 −log softmax(logits)[答案] 的平均。logits 可能很大（上千）：先减去每行的最大值，
# 用 log-softmax = z − log Σ exp(z) 的稳定写法。
# 你的 GPT 的 forward(idx, targets) 返回的 loss 就是它。
def lm_loss(logits: mg.Tensor, targets: np.ndarray) -> mg.Tensor:
    raise NotImplementedError


# 练习 9.5 ★ 预热加余弦的学习率
# 第 step 步（从 0 数）的学习率：
#   step < warmup_iters：线性预热 max_lr·(step + 1)/(warmup_iters + 1)（第 0 步就开始学）；
#   warmup_iters ≤ step ≤ decay_iters：余弦退火 min_lr + ½(1 + cos πr)(max_lr − min_lr)，
#     其中 r = (step − warmup)/(decay − warmup)；
#   step > decay_iters：min_lr。
# 你的训练循环每一步都向它要学习率。
def lr_at(step: int, max_lr: float, warmup_iters: int, decay_iters: int, min_lr: float) -> float:
    raise NotImplementedError


# 练习 9.6 ★★★ AdamW 的一步
# p 是一个参数的数组（NumPy），g 是它的梯度，m、v 是这个参数的两个动量（和 p 一样形状，第一次调用前全是 0），
# t 是这一步的序号（从 1 数）。做 PyTorch 的 AdamW 的一步：解耦的权重衰减、两个动量的指数滑动平均、偏差修正，
# 再按每个元素自己的步长更新——为什么是这几样、各自的公式怎么来，见第 09 讲第 3 节。
# 就地更新 p、m、v（p -= ...、m *= ...）：调用者手里的数组要变，下一步接着用 m、v。
# 你的训练一步（9.7）对每个参数调用它；你的 GPT 就是这样学的。
def adamw_update(p: np.ndarray, g: np.ndarray, m: np.ndarray, v: np.ndarray, t: int, lr: float,
                 betas: tuple = (0.9, 0.99), eps: float = 1e-8, weight_decay: float = 0.0) -> None:
    raise NotImplementedError


# 练习 9.7 ★★★ 训练的一步：前向、反向、裁剪、更新
# model(x, y) 返回 (logits, loss)。做训练的一步，和 minigpt 的训练循环一样：
#   # forward   算出 loss；
#   # backward  清掉每个参数上一步的梯度（梯度会累加：p.grad = None），再 loss.backward()；
#             然后按所有梯度合起来的范数裁剪到 grad_clip 以内（第 09 讲第 3 节：为什么是合起来的范数、怎么缩放）；
#   # update    对每个有梯度的参数调用你的 adamw_update（9.6），更新的是参数底下的数组 p.array；
#             只有矩阵（ndim ≥ 2）用 weight_decay，偏置和 LayerNorm 的 γ、β 用 0。
# state 是一个字典，第一次是空的：把步数 t 和每个参数的 m、v（按 model.named_parameters() 的名字）存在里面。
# 参数 p 的 NumPy 数组是 p.array（就地改它，参数就变了：adamw_update(p.array, ...)），梯度的是 p.grad.numpy()。
# 返回这一步的损失（loss.item()，一个 float）。你的 GPT 就是用它训练的。
def train_step(model, x: np.ndarray, y: np.ndarray, state: dict, lr: float,
               grad_clip: float = 1.0, weight_decay: float = 0.1) -> float:
    raise NotImplementedError
