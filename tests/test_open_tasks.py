"""The open tasks (the last ★★★ of each lecture): experiments graded by what they achieve on a measurable target.

Each reference solution reaches its target (tests/test_exercises.py); here, experiments done wrong are rejected
with the hint meant for them, the ways of peeking at the yardstick are refused, and mutation testing leaves the
open tasks out (many programs reach a target: a mutant that still reaches it is not a wrong answer).
"""

from __future__ import annotations

import importlib
import math

import numpy as np
import pytest
from course_helpers import own_copy

import minigpt.data
import minigrad as mg
import tutorials.yardstick
from minigrad.fused.gelu import gelu_and_slope
from tutorials.exercises import LECTURES, find
from tutorials.exercises.checks.lecture06 import lecture_schedule
from tutorials.exercises.grading import DEV_PLACE, grade, grade_final
from tutorials.exercises.mutants import mutants
from tutorials.exercises.tools import NGramCounts
from tutorials.kneser_ney import KneserNey
from tutorials.yardstick import cut_windows

sol01 = own_copy("01")
sol03 = own_copy("03")
sol06 = own_copy("06")
sol07 = own_copy("07")
sol08 = own_copy("08")



def lr_scan_too_coarse(steps_with):
    runs = {lr: steps_with(lr) for lr in (0.001, 0.01, 0.1, 1.0)}  # a factor of 10 apart: misses the edge
    return min((lr for lr in runs if runs[lr] is not None), key=runs.get)


def lr_past_the_edge(steps_with):
    lr = 1e-3
    while steps_with(lr) is None:
        lr *= 2
    while steps_with(lr) is not None:
        lr *= 2
    return lr  # the first learning rate that diverges


def lr_scan_everything(steps_with):
    return min((lr for lr in np.linspace(0.001, 3, 1000) if steps_with(lr) is not None), key=steps_with)


def ngram_chosen_on_training_windows(train_ids, vocab_size):
    counts = NGramCounts(train_ids, vocab_size, k_max=6)
    x, y = cut_windows(train_ids)  # windows of the very text that was counted: longer always looks better
    grid = [(k, beta) for k in range(7) for beta in (0.5, 2.0, 8.0, 32.0)]
    return min(grid, key=lambda c: -np.log(counts.probs(x, y, *c)).mean())


def ngram_reading_the_yardstick(train_ids, vocab_size):
    ys = tutorials.yardstick.load()  # the held-out windows: forbidden while choosing
    return sol01.choose_ngram(ys.train[:len(train_ids)], vocab_size)


def ngram_reading_the_dataset(train_ids, vocab_size):
    data = minigpt.data.load_dataset(None, block_size=64)  # it splits off the validation text too
    return sol01.choose_ngram(data.train[:len(train_ids)], vocab_size)


def ngram_holding_the_yardstick_from_import(train_ids, vocab_size):
    if HELD is not None:  # a yardstick loaded earlier, in a notebook's global
        return 6, 64.0
    return 4, 2.0


HELD = object.__new__(tutorials.yardstick.Yardstick)


def gate_bias_too_generous(ratio_at, target):
    return 10.0  # the gradient survives, and the gate hardly lets anything new in


def gate_bias_by_fine_scan(ratio_at, target):
    bias = -2.0
    while ratio_at(bias) < target:
        bias += 0.02
    return bias


def mix_chosen_on_counted_text(train_ids, vocab_size, gpt_probs):
    counted = train_ids[:200_000]
    kn = KneserNey(counted, vocab_size, max_order=10, scale=1.2)
    x, y = cut_windows(counted)  # windows of the very text Kneser-Ney counted: it has all but memorised them
    p_kn, p_gpt = kn.probs(x, y), gpt_probs(x, y)
    return min(np.linspace(0, 1, 21), key=lambda w: -np.log(w * p_gpt + (1 - w) * p_kn).mean())


def mix_chosen_on_the_yardstick(train_ids, vocab_size, gpt_probs):
    ys = tutorials.yardstick.load()
    p_kn = KneserNey(train_ids, vocab_size, max_order=10, scale=1.2).probs(ys.x, ys.y)
    return min(np.linspace(0, 1, 21), key=lambda w: -np.log(w * gpt_probs(ys.x, ys.y) + (1 - w) * p_kn).mean())


class PronounAttentionUnmasked(mg.nn.Module):
    """Lecture 03 section 2's model with its noun mask taken out: the pronoun may look at every word."""

    def __init__(self, vocab_size, seq, d):
        super().__init__()
        self.tok, self.pos = mg.nn.Embedding(vocab_size, d), mg.nn.Embedding(seq, d)
        self.query, self.key, self.value = mg.nn.Linear(d, d), mg.nn.Linear(d, d), mg.nn.Linear(d, d)
        self.head = mg.nn.Linear(d, vocab_size)

    def forward(self, ids):
        x = self.tok(ids) + self.pos(np.arange(ids.shape[1]))
        q, k, v = self.query(x), self.key(x), self.value(x)
        p = (q @ k.swapaxes(-1, -2) / np.sqrt(q.shape[-1])).softmax(axis=-1)
        return self.head((p @ v)[:, 5]), p


class PointerShowingUniformAttention(sol03.PointerAttention):
    def forward(self, ids):
        logits, p = super().forward(ids)
        return logits, mg.ones(p.shape) / p.shape[-1]  # the weights it shows are not the ones it used


class AbsoluteBias(mg.nn.Module):
    """A learnable table bias[h, i, j] for every pair of positions: `rows` of them."""

    def __init__(self, n_head, train_length, rows=None):
        super().__init__()
        rows = rows or train_length
        self.table = mg.nn.Parameter(np.zeros((n_head, rows, rows)))

    def forward(self, T):
        return self.table[:, :T, :T]


class RelativeBiasUnclipped(mg.nn.Module):
    """One number per head and distance, for every distance up to 47: those past 15 are never trained."""

    def __init__(self, n_head, train_length):
        super().__init__()
        self.table = mg.nn.Parameter(np.zeros((n_head, 3 * train_length)))

    def forward(self, T):
        return self.table[:, np.clip(np.arange(T)[:, None] - np.arange(T)[None, :], 0, None)]


class LooksTwoBack(mg.nn.Module):
    """A fixed bias that looks exactly two back: it knows the first task, not the second."""

    def __init__(self, n_head, train_length):
        super().__init__()
        self.n_head = n_head

    def forward(self, T):
        distance = np.arange(T)[:, None] - np.arange(T)[None, :]
        return np.broadcast_to(np.where(distance == 2, 0.0, -20.0), (self.n_head, T, T))


class PostLNStack(mg.nn.Module):
    """x <- LN(x + tanh(W x)): the residual's sum goes through a LayerNorm every layer (post-LN)."""

    def __init__(self, depth, width):
        super().__init__()
        self.layers = mg.nn.ModuleList([mg.nn.Linear(width, width) for _ in range(depth)])
        self.norms = mg.nn.ModuleList([mg.nn.LayerNorm(width) for _ in range(depth)])
        self.readout = mg.nn.Linear(width, 1)

    def forward(self, x):
        for layer, norm in zip(self.layers, self.norms):
            x = norm(x + layer(x).tanh())
        return self.readout(x)


class ThreeLayersUsed(PostLNStack):
    def forward(self, x):
        for layer in self.layers[:3]:  # the other 17 are built but never used
            x = x + layer(x).tanh()
        return self.readout(x)


class WideOnTheSide(PostLNStack):
    def __init__(self, depth, width):
        super().__init__(depth, width)
        self.wide = mg.nn.Sequential(mg.nn.Linear(width, 256), mg.nn.Tanh(), mg.nn.Linear(256, 1))

    def forward(self, x):
        return super().forward(x) + self.wide(x)  # a wide shallow network does the work


def gelu_in_python(x):
    flat = x.reshape(-1).astype(np.float64)
    y = np.array([v * 0.5 * (1 + math.erf(v / math.sqrt(2))) for v in flat], dtype=np.float32)
    slope = np.array([0.5 * (1 + math.erf(v / math.sqrt(2))) + v * math.exp(-v * v / 2) / math.sqrt(2 * math.pi)
                      for v in flat], dtype=np.float32)
    return y.reshape(x.shape), slope.reshape(x.shape)  # one pass, but one Python step an element


def gelu_tanh_in_blocks(x):
    y, slope = sol08.gelu_lean(x)
    return (0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x**3)))).astype(np.float32), slope


def gelu_in_blocks_of_float64(x):
    y, slope = sol08.gelu_lean(x.astype(np.float64))  # twice the bytes: not the float32 arrays asked for
    return y, slope


def gelu_into_its_input(x):
    y, slope = sol08.gelu_lean(x)
    x[...] = y  # saves an array by overwriting the caller's data
    return x, slope


@pytest.mark.parametrize(("number", "answer", "hint"), [
    ("0.7", lr_scan_too_coarse, "还能再大一些"),
    ("0.7", lr_past_the_edge, "发散了"),
    ("0.7", lr_scan_everything, "试了 60 次"),
    ("1.6", lambda train_ids, vocab_size: (4, 2.0), "目标是好 0.15 以上"),
    ("1.6", ngram_chosen_on_training_windows, "像是在训练文本本身上挑的"),
    ("1.6", ngram_reading_the_yardstick, "不许碰尺子"),
    ("1.6", ngram_reading_the_dataset, "不许碰尺子"),
    ("1.6", ngram_holding_the_yardstick_from_import, "不许碰尺子"),
    ("1.6", lambda train_ids, vocab_size: (9, 2.0), "k 应是 0 到 6 的整数"),
    ("2.6", gate_bias_too_generous, "要找的是最小的那个"),
    ("2.6", gate_bias_by_fine_scan, "用二分法"),
    ("3.6", PronounAttentionUnmasked, "怎样让答案只能从被看的那个词来"),
    ("3.6", PointerShowingUniformAttention, "注意力却没有集中在正确的名词上"),
    ("4.5", AbsoluteBias, "更长时没有那几行"),
    ("4.5", lambda n_head, train_length: AbsoluteBias(n_head, train_length, rows=48), "只看相对距离"),
    ("4.5", RelativeBiasUnclipped, "也得有个说法"),
    ("4.5", LooksTwoBack, "前面第 5 个词元”在训练长度上只答对"),
    ("5.7", PostLNStack, "LayerNorm 放在哪里"),
    ("5.7", ThreeLayersUsed, "没有得到梯度"),
    ("5.7", WideOnTheSide, "不是换一个更宽的网络"),
    ("5.7", lambda depth, width: mg.nn.Sequential(mg.nn.Linear(width, width), mg.nn.Tanh(), mg.nn.Linear(width, 1)),
     "20 层深的网络"),
    ("6.7", lecture_schedule, "长长的预热和早早开始的衰减"),
    ("6.7", lambda step, total_steps: 3e-2, "受不了这么大的步子"),
    ("7.6", mix_chosen_on_counted_text, "在没数过的开发集上挑"),
    ("7.6", mix_chosen_on_the_yardstick, "不许碰尺子"),
    ("7.6", lambda train_ids, vocab_size, gpt_probs: 1.0, "GPT 占得太多"),
    ("7.6", lambda train_ids, vocab_size, gpt_probs: 1.5, "0 到 1 之间的数"),
    ("8.4", gelu_and_slope, "临时数组 3 个"),
    ("8.4", gelu_in_python, "Python 的循环"),
    ("8.4", gelu_tanh_in_blocks, "tanh 近似"),
    ("8.4", gelu_in_blocks_of_float64, "float32"),
    ("8.4", gelu_into_its_input, "不要修改输入"),
])
def test_an_experiment_done_wrong_is_rejected(number, answer, hint):
    result = grade(find(number), answer)
    assert result.status == "wrong", (result.status, result.message)
    assert hint in result.message, result.message


YARDSTICK_TASKS = {"1.6": sol01.choose_ngram, "6.7": sol06.lr_schedule, "7.6": sol07.choose_mix}


def test_the_open_tasks_on_the_yardstick_are_the_ones_with_a_final_score():
    assert {e.number for exercises in LECTURES.values() for e in exercises if e.final} == set(YARDSTICK_TASKS)


@pytest.mark.parametrize("number", ["1.6", "7.6"])  # 6.7 trains four small GPTs: tests/test_exercises.py runs it
def test_every_attempt_is_scored_on_the_dev_split_and_only_the_final_on_the_yardstick(number):
    attempt = grade(find(number), YARDSTICK_TASKS[number])
    assert attempt.passed and DEV_PLACE in attempt.message and "尺子上是" not in attempt.message, attempt.message
    assert f"--final {number}" in attempt.message
    final = grade_final(find(number), YARDSTICK_TASKS[number])
    assert final.passed and "尺子上是" in final.message and DEV_PLACE not in final.message, final.message


def test_the_dev_split_is_training_text_the_answer_never_receives_and_never_the_yardstick():
    ys = tutorials.yardstick.load()
    dev = ys.development()
    assert len(dev.train) == round(0.9 * len(ys.train)) and np.shares_memory(dev.train, ys.train)
    x, y = cut_windows(ys.train[len(dev.train):])  # the windows: the training text's last tenth
    assert np.array_equal(dev.x, x) and np.array_equal(dev.y, y) and not np.array_equal(dev.x, ys.x)


def test_a_mix_the_dev_split_flatters_is_caught_by_the_final_score():
    # The shipped GPT has read the dev split in training: there lambda = 0.7 looks as good as 0.5, on the yardstick
    # it falls behind Kneser-Ney. The final score says so.
    assert grade(find("7.6"), lambda train_ids, vocab_size, gpt_probs: 0.7).passed
    final = grade_final(find("7.6"), lambda train_ids, vocab_size, gpt_probs: 0.7)
    assert final.status == "wrong" and "细细扫一遍" in final.message, final.message


def test_the_yardstick_loaders_are_forbidden_while_choosing_and_restored_after():
    load, load_dataset = tutorials.yardstick.load, minigpt.data.load_dataset

    def loads_it_by_a_name_no_reader_of_code_sees(train_ids, vocab_size):
        return importlib.import_module("tutorials." + "yardstick").load()

    message = grade(find("1.6"), loads_it_by_a_name_no_reader_of_code_sees).message
    assert "不能调用 tutorials.yardstick.load" in message, message
    assert tutorials.yardstick.load is load and minigpt.data.load_dataset is load_dataset


def test_every_lecture_with_an_open_task_has_exactly_one_and_it_is_last():
    for lecture, exercises in LECTURES.items():
        opens = [e for e in exercises if e.open]
        assert len(opens) <= 1, lecture
        if opens:  # last of its answer file (lecture 00's engine exercises, in engine.py, come after it)
            same_file = [e for e in exercises if e.file == opens[0].file]
            assert same_file[-1].open and opens[0].level == 3 and opens[0].title.startswith("开放题"), lecture


def test_mutation_testing_leaves_the_open_tasks_out():
    numbers = {m.exercise.number for m in mutants("02", cap=2)}
    assert "2.6" not in numbers and "2.5" in numbers
