"""The course's one yardstick: every lecture's language model scored on the same held-out Shakespeare text.

So that a number in lecture 01 and a number in lecture 07 can be compared, they are measured the same way:

- the text: minigpt's built-in Shakespeare corpus, split as `minigpt train` splits it (the last 10% held out,
  never trained on), with its vocabulary of every character in the corpus (V of them);
- the windows: WINDOWS windows of WINDOW + 1 characters, evenly spaced over the held-out text, the same in
  quick and full mode; in each window a model predicts characters 1 .. WINDOW, each from the characters before
  it in that window (nothing outside the window), as a GPT with a context of WINDOW characters does;
- the score: the mean of -ln P(the true next character), in nats per character. Guessing uniformly scores
  ln V exactly; a model that always knows the answer scores 0.

A counting model hands in its probabilities of the true characters (`score_probs`); a neural network hands in
a function from a batch of windows to logits (`score_logits`). Either way the result is a `Score`, which keeps
every character's loss, so that two models can be compared window by window (`Score.gap`): their difference
is far more precise than either number alone, because both read the same text.

The same windows, cut from the training text instead (`training_windows`), show how much better a model does
on text it has seen than on text it has not: the mark of memorising. Windows cut from the last tenth of the
training text (`development`) are the open tasks' development split: an answer is graded there as often as the
learner likes, and on the yardstick once (`python -m tutorials.exercises check --final 1.6`), so that no answer
is tuned on the yardstick by trying again and again.
Your own run, on the same windows: `python -m tutorials.yardstick score OUT_DIR` scores the checkpoint that
`minigpt train --out-dir OUT_DIR` wrote (trained on the built-in Shakespeare corpus, with a context of at least
WINDOW characters), so that it can stand on lecture 07's ladder.
Read next: ladder.py, which records each lecture's scores and draws the ladder in lecture 07.
"""

from __future__ import annotations

import argparse
import hashlib
import math
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

import minigrad as mg
from minigpt.data import load_dataset
from minigpt.distributed_training import launched_rank_and_size
from minigpt.progress import discard_stdout, write_out
from minigpt.tokenizer import CharTokenizer

WINDOW = 64  # characters of context a model may use, and characters scored, per window
WINDOWS = 512  # windows: 32,768 scored characters, about 7% of the held-out text
DEV_FRACTION = 0.1  # the last tenth of the training text: the open tasks' development split


@dataclass(frozen=True)
class Score:
    """Every scored character's loss in nats, one row per window: (WINDOWS, WINDOW)."""

    losses: np.ndarray

    @property
    def nats(self) -> float:
        """Nats per character: the number on the ladder."""
        return float(self.losses.mean())

    @property
    def stderr(self) -> float:
        """The standard error of `nats`, from the spread of the window means (characters in one window are not
        independent draws; windows far apart nearly are)."""
        return float(self.losses.mean(axis=1).std(ddof=1) / math.sqrt(len(self.losses)))

    @property
    def per_position(self) -> np.ndarray:
        """The mean loss at each position of a window, (WINDOW,): how much a longer context helps."""
        return self.losses.mean(axis=0)

    def gap(self, other: Score) -> tuple[float, float]:
        """(self - other in nats per character, its standard error), window by window on the same text."""
        if self.losses.shape != other.losses.shape:
            raise ValueError(f"Score.gap: scores of shapes {self.losses.shape} and {other.losses.shape} were not "
                             "measured on the same windows")
        diff = (self.losses - other.losses).mean(axis=1)
        return float(diff.mean()), float(diff.std(ddof=1) / math.sqrt(len(diff)))

    def __str__(self) -> str:
        return f"{self.nats:.3f} ± {self.stderr:.3f}"


@dataclass(frozen=True)
class Yardstick:
    """The corpus, its split, and the fixed held-out windows `x` (inputs) and `y` (targets), each (WINDOWS, WINDOW)."""

    tokenizer: CharTokenizer
    train: np.ndarray  # the training text's ids: what a model may learn from
    val: np.ndarray  # the held-out text's ids
    x: np.ndarray
    y: np.ndarray

    @property
    def vocab_size(self) -> int:
        return self.tokenizer.vocab_size

    @property
    def fingerprint(self) -> str:
        """A short hash of the windows: a recorded score is comparable only with scores of the same windows."""
        return hashlib.sha256(self.x.tobytes() + self.y.tobytes()).hexdigest()[:16]

    def uniform(self) -> Score:
        """The top rung: every character equally likely, ln V nats each."""
        return Score(np.full(self.y.shape, math.log(self.vocab_size)))

    def score_probs(self, probs: np.ndarray) -> Score:
        """Score a model by its probabilities of the true next characters: probs[n, t] = P(y[n, t] | x[n, :t+1])."""
        probs = np.asarray(probs, dtype=np.float64)
        if probs.shape != self.y.shape:
            raise ValueError(f"score_probs: probabilities of shape {probs.shape}, expected {self.y.shape} "
                             "(one per window and position)")
        if not np.all((probs > 0) & (probs <= 1)):
            worst = probs.flat[np.argmin(np.where((probs > 0) & (probs <= 1), 1.0, -1.0))]
            raise ValueError(f"score_probs: probabilities must lie in (0, 1]; found {worst!r} (a model that gives "
                             "the true character probability 0 has an infinite loss: smooth it)")
        return Score(-np.log(probs))

    def score_logits(self, logits_of: Callable[[np.ndarray], Any], batch_size: int = 64) -> Score:
        """Score a network: `logits_of(x)` maps windows x (B, WINDOW) to logits (B, WINDOW, V), a Tensor or array.

        A model whose forward returns (logits, loss), as minigpt's GPT does, can be passed as it is. It runs
        without a graph (no_grad); put a model with dropout in eval mode first.
        """
        losses = []
        with mg.no_grad():
            for start in range(0, len(self.x), batch_size):
                x, y = self.x[start:start + batch_size], self.y[start:start + batch_size]
                logits = logits_of(x)
                logits = logits[0] if isinstance(logits, tuple) else logits  # (logits, loss): keep the logits
                logits = np.asarray(logits.numpy() if isinstance(logits, mg.Tensor) else logits, dtype=np.float64)
                if logits.shape != (*x.shape, self.vocab_size):
                    raise ValueError(f"score_logits: logits of shape {logits.shape} for windows of shape {x.shape}, "
                                     f"expected {(*x.shape, self.vocab_size)}")
                # -log softmax(logits)[y] = logsumexp(logits) - logits[y], with the largest logit taken out first
                top = logits.max(axis=-1, keepdims=True)
                log_total = top[..., 0] + np.log(np.exp(logits - top).sum(axis=-1))
                losses.append(log_total - np.take_along_axis(logits, y[..., None], axis=-1)[..., 0])
        return Score(np.concatenate(losses))

    def training_windows(self) -> Yardstick:
        """The same number of windows, cut the same way from the training text: text every model has seen."""
        x, y = cut_windows(self.train)
        return Yardstick(self.tokenizer, self.train, self.val, x, y)

    def development(self) -> Yardstick:
        """The development split: windows cut from the last DEV_FRACTION of the training text, its `train` the rest.

        What an open task's answer may learn from is the returned `train`; it is graded on these windows on every
        attempt, and on the yardstick's own windows only once.
        """
        cut = int(round(len(self.train) * (1 - DEV_FRACTION)))
        x, y = cut_windows(self.train[cut:])
        return Yardstick(self.tokenizer, self.train[:cut], self.val, x, y)


def cut_windows(ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """WINDOWS windows of WINDOW + 1 characters, evenly spaced over `ids`: inputs x and targets y (x shifted by one)."""
    starts = np.linspace(0, len(ids) - WINDOW - 1, WINDOWS).round().astype(np.int64)
    offsets = np.arange(WINDOW)
    return ids[starts[:, None] + offsets], ids[starts[:, None] + offsets + 1]


def load() -> Yardstick:
    """Read the corpus, split it as `minigpt train` does, and cut the held-out windows (a few seconds)."""
    data = load_dataset(None, block_size=WINDOW)  # the built-in Shakespeare corpus, split 90/10
    x, y = cut_windows(data.val)
    return Yardstick(data.tokenizer, data.train, data.val, x, y)


def score_checkpoint(out_dir: str) -> tuple[Score, Yardstick]:
    """The yardstick's score of the GPT that `minigpt train --out-dir out_dir` saved, or of a model's exported weights
    (config.json, model.safetensors, tokenizer.json, as tutorials/pretrained/kneser_ney/) (ValueError, in Chinese, for
    a model the yardstick cannot score: another text's characters, or a context shorter than WINDOW)."""
    from minigpt.checkpoint import load_model

    model, tokenizer = load_model(out_dir)
    ys = load()
    if tokenizer.chars != ys.tokenizer.chars:
        raise ValueError(f"{out_dir} 里的模型不是在内置的莎士比亚语料上训练的（字符表不同），码尺量不了它")
    if model.config.block_size < WINDOW:
        raise ValueError(f"{out_dir} 里的模型上下文只有 {model.config.block_size} 个字符，码尺的每个窗口要 {WINDOW} "
                         f"个：用 --block-size {WINDOW} 或更大重新训练")
    return ys.score_logits(model), ys


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tutorials.yardstick",
                                     description="在课程的码尺上给自己训练的 GPT 打分"
                                                 "（验证集上每个字符的平均损失，单位纳特）")
    commands = parser.add_subparsers(dest="command", required=True)
    score = commands.add_parser("score", help="给 minigpt train 存下的检查点（或导出的权重文件夹）打分")
    score.add_argument("out_dir", metavar="OUT_DIR",
                       help="minigpt train 的 --out-dir，或 tutorials/pretrained/kneser_ney 这样的文件夹")
    args = parser.parse_args(argv)
    prog = "python -m tutorials.yardstick score"
    try:
        if launched_rank_and_size()[0] != 0:
            return 0  # under mpiexec: rank 0 scores and says so, once
        result, ys = score_checkpoint(args.out_dir)
        write_out(f"{args.out_dir}: {result} 纳特/字符（码尺：验证集上 {WINDOWS} 个窗口，每个 {WINDOW} 个字符；"
                  f"均匀乱猜是 {math.log(ys.vocab_size):.3f}）\n")
    except UnicodeEncodeError as error:  # PYTHONIOENCODING=ascii: the line itself cannot be shown in Chinese
        print(f"{prog}: error: this terminal's encoding ({error.encoding}) cannot show Chinese: set "
              "PYTHONIOENCODING=utf-8, or use a UTF-8 locale", file=sys.stderr)
        return 2
    except (ValueError, FileNotFoundError, mg.CheckpointError) as error:
        print(f"{prog}: 错误：{error}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # `| head` that has read enough
        discard_stdout()
        return 141
    except OSError as error:  # a full disk under `> score.txt`: named, one line
        print(f"{prog}: 错误：{error}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print(f"\n{prog}: 已中断", file=sys.stderr)
        return 130
    return 0


if __name__ == "__main__":
    sys.exit(main())
