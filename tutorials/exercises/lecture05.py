"""第 05 讲练习：多头注意力与 Transformer Block。

把每个 `raise NotImplementedError` 换成你的代码，然后检查：

    python -m tutorials.exercises check 05
    from tutorials.exercises import check; check("05")   # Notebook 里

5.2–5.4 和 5.6 用 minigrad 的张量运算写（5.7 用 mg.nn 搭一个网络）。
方差请用均值写出来：((x − μ)²).mean(...)（Tensor.var 和 PyTorch 一样，默认是除以 n − 1 的无偏估计，
LayerNorm 要的是除以 n 的）；交换两维用 `swapaxes`。nn.Linear 的权重形状是 (out, in)，
y = x @ Wᵀ + b（也可以用 F.linear）。
参考答案在 `tutorials/solutions/lecture05.py`——先自己做。
"""

import numpy as np

import minigrad as mg


# 练习 5.1 ★★ 一个 block 有多少参数（填数题，写成函数）
# minigpt 的 Block（默认带偏置）：ln_1、attn（c_attn: C → 3C，c_proj: C → C）、ln_2、
# mlp（c_fc: C → 4C，c_proj: 4C → C）。
# 每个 Linear 有权重和偏置，每个 LayerNorm 有 weight（γ）和 bias（β）各 C 个。返回参数总数，写成 n_embd 的公式。
def block_parameters(n_embd: int) -> int:
    raise NotImplementedError


# 练习 5.2 ★ LayerNorm 的前向
# 对 x 的最后一维归一化：x̂ = (x − μ) / √(σ² + eps)，σ² = mean((x − μ)²)（除以 n，不是 n − 1），
# 再乘 weight、加 bias。x (..., C)，weight、bias (C,)。
# 这个答案会装进你自己的 GPT（第 09 讲，tutorials/09_capstone.py）：5.5 没通过时的 LayerNorm。
def layer_norm(x: mg.Tensor, weight: mg.Tensor, bias: mg.Tensor, eps: float = 1e-5) -> mg.Tensor:
    raise NotImplementedError


# 练习 5.3 ★★ 把通道切成几个头
# x (B, T, C) -> (B, n_head, T, hs)，hs = C // n_head：第 h 个头拿到的是每个位置第 h*hs .. (h+1)*hs − 1 个通道。
# 提示：先 reshape 成 (B, T, n_head, hs)，再交换第 1、2 维。
# 这个答案会装进你自己的 GPT（第 09 讲，tutorials/09_capstone.py）：每个 Block 里把 q、k、v 切成头。
def split_heads(x: mg.Tensor, n_head: int) -> mg.Tensor:
    raise NotImplementedError


# 练习 5.4 ★★ 合上讲义，重写多头因果自注意力
# 讲义第 2 节写过一遍；先别翻回去，自己再写一遍。和 minigpt.model.CausalSelfAttention 一样的计算，
# 权重也按它的排法给你：
#   qkv = x @ c_attn_weightᵀ + c_attn_bias          (B, T, 3C)，前 C 列是 q，接着 C 列是 k，最后 C 列是 v
#   q、k、v 各切成 n_head 个头（5.3），每个头做因果的缩放点积注意力（除以 √hs），
#   把各头的输出拼回 (B, T, C)，再乘 c_proj：y @ c_proj_weightᵀ + c_proj_bias。
# 遮罩和 softmax 自己写（3.3 写过）：检查这一题时，F.scaled_dot_product_attention 和 minigpt 的注意力都不许调用。
def causal_self_attention(x: mg.Tensor, c_attn_weight: mg.Tensor, c_attn_bias: mg.Tensor, c_proj_weight: mg.Tensor,
                          c_proj_bias: mg.Tensor, n_head: int) -> mg.Tensor:
    raise NotImplementedError


# 练习 5.5 ★★★ LayerNorm 的反向传播（不带 weight、bias）
# 前向已经写好，存下了 x̂ 和 rstd = 1/√(σ² + eps)。推导 backward：μ 和 σ 都依赖 x 的每一个元素，
# 所以 gx 不只是 gy·rstd。结果可以写成 rstd · (gy − mean(gy) − x̂ · mean(gy · x̂))，试着自己推出来。
# 这个答案会装进你自己的 GPT（第 09 讲，tutorials/09_capstone.py）：每个 LayerNorm 的反向传播（ln_1、ln_2、ln_f）。
class LayerNorm(mg.Function):
    """y = (x - mean) / sqrt(var + eps) over the last axis."""

    def forward(self, x):
        centred = x - x.mean(axis=-1, keepdims=True)
        self.rstd = 1 / np.sqrt((centred**2).mean(axis=-1, keepdims=True) + 1e-5)
        self.xhat = centred * self.rstd
        return self.xhat

    def backward(self, gy):
        raise NotImplementedError


# 练习 5.6 ★★★ 亲手拼一个 Post-LN 的 Block
# 讲义第 10 节拼的是 Pre-LN（GPT-2）的 Block。原始 Transformer 用的是 Post-LN，LayerNorm 放在残差相加之后：
#   x = LN_1(x + 注意力(x))，然后 x = LN_2(x + MLP(x))
# 注意力是 n_head 个头的因果自注意力（5.4），MLP 是 C -> 4C、精确的 GELU、4C -> C。
# w 是一个字典，键和 minigpt 的 Block.state_dict() 一样，值是张量：
#   "ln_1.weight" "ln_1.bias" "attn.c_attn.weight" "attn.c_attn.bias" "attn.c_proj.weight" "attn.c_proj.bias"
#   "ln_2.weight" "ln_2.bias" "mlp.c_fc.weight" "mlp.c_fc.bias" "mlp.c_proj.weight" "mlp.c_proj.bias"
# 可以用 F.layer_norm、F.gelu、F.linear 和你在 5.4 写的函数。检查器拿 minigpt 的
# Block(GPTConfig(norm_position="post")) 在同样的权重上算出的结果和你的比。
def post_ln_block(x: mg.Tensor, w: dict, n_head: int) -> mg.Tensor:
    raise NotImplementedError


# 练习 5.7 ★★★ 开放题：让 20 层的网络学得动
# 检查器出一道回归题：输入 x 是 16 维的标准正态随机向量，答案 y 是 x 的一个非线性函数（方差为 1；任何一条直线
# 在它上面的均方误差都约为 1，也就是只会猜平均数）。deep_net(depth, width) 返回一个 mg.nn.Module：
# 输入 (B, width) 的张量，输出 (B, 1)；里面至少有 depth 个 nn.Linear(width, width)，每一个都用在前向里。
# 检查器调用 deep_net(20, 16)，用 Adam（学习率 3e-3，不许改）每步 64 个样本训练 400 步，在没见过的输入上量均方误差，
# 换 3 个随机种子各做一次：平均要 ≤ 0.5。参数个数有上限：20 层 Linear、读出层，再加每层一个 LayerNorm 那么多。
# 朴素的做法——20 层 Linear + tanh 直接叠起来，最后接 nn.Linear(16, 1)——误差停在 1 附近，什么也没学到。
# 讲义里的哪些东西能让它学得动？先量一量朴素的做法，再一样一样试（check("5.7", deep_net) 只考这一题）。
def deep_net(depth: int, width: int) -> mg.nn.Module:
    raise NotImplementedError
