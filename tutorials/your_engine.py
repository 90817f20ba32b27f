"""The learner's tensor engine (tutorials/exercises/engine.py), loaded part by part for their GPT (lecture 09).

`load_engine()` grades each part of the engine with its exercise's checker (lecture 00's 0.4 and 0.8-0.26). The core
(sum_to, Tensor, apply, the topological order, the walk) is one piece: if a part of it fails, the GPT runs on
minigrad's engine instead, and one Chinese line says which exercise to fix; while parts of it are only not written
yet, the reference answer's core stands in for all of it (as a blank part of the model gets the reference's). An op
that fails or is not written is the reference answer's op alone, the others the learner's: a Tensor looks its ops up
by name in its own file, so a private copy of the file the core comes from gets them (the learner's module is left as
it is). `agrees_with_minigrad`
is the last gate: a small GPT on the learner's engine must give the minigrad-built one's logits and gradients in
float64; if not, the GPT runs on minigrad's engine, with one line saying so.
Read next: capstone.py, which builds the GPT on the engine loaded here.
"""

from __future__ import annotations

import importlib
import importlib.util
from collections.abc import Callable
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any

import numpy as np

from tutorials.engines import MINIGRAD, Engine, engine_of
from tutorials.exercises import find
from tutorials.exercises.grading import grade

CORE = (
    ("sum_to", "0.4", "把广播过的梯度加回去"),
    ("Tensor", "0.8", "张量：数组、梯度、算出它的运算"),
    ("apply", "0.9", "把每个运算记进计算图（no_grad 时不记）"),
    ("topological_order", "0.10", "拓扑序"),
    ("backward", "0.11", "反向传播：逆序走一遍，梯度相加"),
)
OPS = (
    ("Add", "0.12", "+：残差、偏置"), ("Sub", "0.13", "−：softmax 和 LayerNorm 里减去最大值、均值"),
    ("Mul", "0.14", "×：GELU、LayerNorm"), ("Div", "0.15", "÷：注意力的缩放、softmax 的归一化"),
    ("Pow", "0.16", "幂：LayerNorm 的 √"), ("Exp", "0.17", "exp：softmax、损失"), ("Log", "0.18", "log：损失"),
    ("Erf", "0.19", "erf：MLP 里精确的 GELU"), ("Sum", "0.20", "求和、平均"), ("Max", "0.21", "最大值：softmax、损失"),
    ("Reshape", "0.22", "改变形状：切头、拼头"), ("SwapAxes", "0.23", "交换两轴：切头、权重的转置"),
    ("GetItem", "0.24", "取下标：查嵌入表、切开 q k v、取答案的概率"),
    ("MaskedFill", "0.25", "遮罩：因果注意力"), ("MatMul", "0.26", "矩阵乘法：每个 Linear、注意力"),
)
PARTS = CORE + OPS


@dataclass
class EngineParts:
    """The engine the GPT runs on, and for each of its parts who wrote it and how it was checked."""

    engine: Engine = MINIGRAD
    writer: dict[str, str] = field(default_factory=dict)  # part -> "你", "参考答案" or "minigrad"
    status: dict[str, str] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    def rows(self) -> list[tuple[str, str, str, str]]:
        """(exercise, who wrote it, its check, what it does) for every part of the engine."""
        return [(number, self.writer[key], self.status[key], f"引擎：{where}") for key, number, where in PARTS]


def read_engine() -> ModuleType:
    """The learner's engine file, read afresh."""
    return importlib.reload(importlib.import_module("tutorials.exercises.engine"))


def private_copy(module: ModuleType) -> ModuleType:
    """A second module from the same file: replacing its ops leaves the learner's own module as it is."""
    spec = importlib.util.spec_from_file_location(f"{module.__name__}_in_your_gpt", module.__file__)
    copy = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(copy)
    return copy


def load_engine(source: str = "answers", read: Callable[[], ModuleType] | None = None) -> EngineParts:
    """The learner's engine ("answers"), part by part as the module docstring says, or the reference ("solutions")."""
    reference = importlib.import_module("tutorials.solutions.engine")
    parts = EngineParts()
    if source == "solutions":
        parts.engine = engine_of(reference, "参考答案的引擎")
        for key, _, _ in PARTS:
            parts.writer[key], parts.status[key] = "参考答案", "✓ 参考答案"
        return parts
    try:
        module = (read or read_engine)()
    # a half-edited file can fail in any way when it is imported
    except Exception as error:
        parts.notes.append(f"tutorials/exercises/engine.py 导入出错（{type(error).__name__}: "
                           f"{' '.join(str(error).split())[:80]}）——你的 GPT 这次跑在 minigrad 的引擎上；"
                           "修好后检查：python -m tutorials.exercises check 00")
        return fall_back_to_minigrad(parts, "! 文件导入出错")
    failed = {}
    for key, number, _ in PARTS:
        result = grade(find(number), getattr(module, key, None))
        parts.status[key] = "✓ 通过" if result.passed else \
            {"blank": "· 还没写", "wrong": "✗ 没通过", "error": "✗ 运行出错"}[result.status]
        if not result.passed:
            failed[key] = (number, result)
    broken = [key for key, _, _ in CORE if key in failed and failed[key][1].status != "blank"]
    if broken:
        numbers = "、".join(failed[key][0] for key in broken)
        parts.notes.append(f"你的引擎的骨架有没通过的（练习 {numbers}）——你的 GPT 这次跑在 minigrad 的引擎上；"
                           f"检查：python -m tutorials.exercises check {failed[broken[0]][0]}")
        return fall_back_to_minigrad(parts, None)
    core_written = not any(key in failed for key, _, _ in CORE)
    # The core is the learner's, or (not written yet) the reference answer's; each op, the learner's if it passed.
    running = private_copy(module if core_written else reference)
    for key, _, _ in OPS:
        setattr(running, key, getattr(reference if key in failed else module, key))
    learners_ops = [key for key, _, _ in OPS if key not in failed]
    parts.engine = engine_of(running, "你的引擎" if core_written else "参考答案的引擎骨架（运算是你的）"
                             if learners_ops else "参考答案的引擎")
    for key, _, _ in PARTS:
        parts.writer[key] = "参考答案" if key in failed else "你"
    for key in (key for key in failed if failed[key][1].status != "blank"):
        number, result = failed[key]
        parts.notes.append(f"练习 {number}（{find(number).title}）{parts.status[key][2:]}：{result.message[:80]}"
                           "——你的引擎里这一个运算改用参考答案；"
                           f"改好后检查：python -m tutorials.exercises check {number}")
    blank = [failed[key][0] for key in failed if failed[key][1].status == "blank"]
    if blank:
        parts.notes.append(f"还没写的引擎练习（{'、'.join(blank)}）：这些部分用参考答案"
                           f"{'' if core_written else '（骨架没写完，整个骨架都用参考答案的）'}；"
                           f"写好后检查，例如 python -m tutorials.exercises check {blank[0]}")
    return parts


def fall_back_to_minigrad(parts: EngineParts, status: str | None) -> EngineParts:
    """Every part of the engine minigrad's (with `status` as each part's check, unless None)."""
    parts.engine = MINIGRAD
    for key, _, _ in PARTS:
        parts.writer[key] = "minigrad"
        if status is not None:
            parts.status[key] = status
    return parts


def agrees_with_minigrad(build: Callable[[Engine], Any], engine: Engine, reference: Any, x: np.ndarray,
                         y: np.ndarray, rtol: float = 1e-10) -> str | None:
    """None if the model `build(engine)`, loaded with `reference`'s weights (float64), gives the same loss, logits and
    gradients as `build(MINIGRAD)` on (x, y); else what differs, in a few words."""
    results = []
    for on in (MINIGRAD, engine):
        model = build(on)
        model.load_state_dict(reference.state_dict())
        try:
            logits, loss = model(x, y)
            loss.backward()
        # the learner's engine may fail in any way on a whole model: the lecture falls back instead of stopping
        except Exception as error:
            return f"运行出错：{type(error).__name__}: {' '.join(str(error).split())[:80]}"
        grads = {name: (np.zeros(p.shape) if p.grad is None else np.asarray(p.grad.numpy()))
                 for name, p in model.named_parameters()}
        results.append((np.asarray(logits.numpy()), grads))
    (their_logits, theirs), (my_logits, mine) = results
    if not np.allclose(my_logits, their_logits, rtol=rtol, atol=rtol * np.abs(their_logits).max()):
        return f"logits 之差最大 {np.abs(my_logits - their_logits).max():.2e}"
    for name, g in theirs.items():
        scale = np.abs(g).max() + 1e-300
        if np.abs(mine[name] - g).max() > rtol * scale:
            return f"{name} 的梯度相对之差 {np.abs(mine[name] - g).max() / scale:.2e}"
    return None
