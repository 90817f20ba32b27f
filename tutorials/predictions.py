"""先猜一猜, recorded: a guess written down before a measurement, shown beside it, and scored at the end.

Each lecture keeps one record:

    my_guesses = Predictions("01", folder=FIGURES)
    my_guesses.guess("bigram_loss", "还没猜", "二元模型的损失")  # the learner writes a number over 还没猜
    ...                                                          # the experiment
    my_guesses.reveal("bigram_loss", bigram_score.nats)  # prints the guess beside the measurement
    ...
    my_guesses.calibration()  # at the end: how well calibrated were the guesses?

A guess is a number (scored by the ratio to the measurement: the mean |log2(guess / measured)|, and how many
were within a factor of 2) or a choice among a few options (scored right or wrong). Every guess cell ships
unanswered (UNANSWERED, "还没猜"), never with an answer filled in for the learner: the lecture still runs end to
end, each reveal shows the measurement and says the guess was never made, and the calibration scores only the
guesses made and says how many are still unanswered. With a folder, the record is also written to
`folder/guesses_NN.json` after every guess and measurement (plain JSON, never pickle).
Read next: 00_autograd.py, whose first 先猜一猜 is a guess cell.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from minigrad.tools.files import write_file

WITHIN = 2.0  # a numeric guess counts as close when guess / measured lies within [1/WITHIN, WITHIN]
UNANSWERED = "还没猜"  # what every guess cell ships with: the learner replaces it with a guess


@dataclass
class Guess:
    """One 先猜一猜: the question, the learner's answer (UNANSWERED until they write one), and what was measured."""

    key: str
    question: str
    value: Any
    default: Any = None  # a value the cell shipped with, if it shipped with one instead of UNANSWERED
    options: tuple[Any, ...] | None = None  # None for a numeric guess
    measured: Any = None
    revealed: bool = False

    @property
    def numeric(self) -> bool:
        return self.options is None

    @property
    def answered(self) -> bool:
        return not (isinstance(self.value, str) and self.value == UNANSWERED)

    def log2_ratio(self) -> float | None:
        """|log2(guess / measured)| for a numeric guess of the right sign; None when it has no meaning."""
        if not self.numeric or not self.revealed or not self.answered:
            return None
        guess, measured = float(self.value), float(self.measured)
        if guess == measured:
            return 0.0
        if guess * measured <= 0:  # different signs, or one of them zero: no ratio to speak of
            return None
        return abs(math.log2(guess / measured))

    @property
    def right(self) -> bool:
        """A choice equal to the outcome; a number within a factor of WITHIN of the measurement."""
        if not self.revealed or not self.answered:
            return False
        if not self.numeric:
            return self.value == self.measured
        ratio = self.log2_ratio()
        return ratio is not None and ratio <= math.log2(WITHIN) + 1e-12


@dataclass(frozen=True)
class Calibration:
    """The end-of-lecture score: numeric guesses by their ratio to the truth, choices by how many were right.

    Only the guesses made are scored; `unanswered` counts the cells still at 还没猜, which are not.
    """

    numbers: int
    numbers_close: int
    mean_log2_ratio: float | None  # over the numeric guesses that have a ratio; None when there is none
    choices: int
    choices_right: int
    defaults: int  # guesses still at a default value the cell shipped with
    pending: int  # guesses made but never revealed
    unanswered: int = 0  # cells still at UNANSWERED: not scored

    def __str__(self) -> str:
        lines = []
        if self.unanswered:
            lines.append(f"还有 {self.unanswered} 个先猜一猜{UNANSWERED}，不计分："
                         f"把那一格的“{UNANSWERED}”换成你的猜测，再从那一格运行下去")
        if self.numbers:
            spread = "" if self.mean_log2_ratio is None else \
                f"，平均差 {2 ** self.mean_log2_ratio:.2f} 倍（|log₂(猜/实测)| 的平均 {self.mean_log2_ratio:.2f}）"
            lines.append(f"数值：{self.numbers_close}/{self.numbers} 个在实测的 {WITHIN:g} 倍以内{spread}")
        if self.choices:
            lines.append(f"选择：{self.choices_right}/{self.choices} 个猜对")
        if self.defaults:
            lines.append(f"其中 {self.defaults} 个还是默认值：下次先改成你自己的猜测再运行")
        if self.pending:
            lines.append(f"{self.pending} 个猜测还没有揭晓（那一格没有运行？）")
        if not self.numbers and not self.choices and self.unanswered:
            lines.append("没有一个猜测可以打分")
        return "\n".join(lines) if lines else "这一讲还没有记下猜测"


class Predictions:
    """The guesses of one lecture, in the order they were made."""

    def __init__(self, lecture: str, folder: str | Path | None = None) -> None:
        self.lecture = lecture
        self.path = None if folder is None else Path(folder) / f"guesses_{lecture}.json"
        self.guesses: dict[str, Guess] = {}

    def guess(self, key: str, value: Any, question: str = "", options: Sequence[Any] | None = None,
              default: Any = None) -> None:
        """Write down a guess before the experiment. `options` makes it a choice; otherwise it is a number.

        `value` is UNANSWERED ("还没猜") until the learner writes a guess over it. `default` is a value the cell
        shipped with, for a cell that ships with one, so that the calibration can say it was never changed.
        """
        options = None if options is None else tuple(options)
        guess = Guess(key, question, value, default, options)
        if guess.answered and options is not None and value not in options:
            raise ValueError(f"guess {key!r}: {value!r} is not one of the options {list(options)}")
        if guess.answered and options is None and (isinstance(value, bool) or not isinstance(value, (int, float))):
            raise ValueError(f"guess {key!r}: a numeric guess must be a number, not {type(value).__name__} "
                             "(pass options=... for a choice)")
        self.guesses[key] = guess
        shown = f"（可选：{' / '.join(map(str, options))}）" if options else ""
        if guess.answered:
            print(f"先猜一猜 [{key}] {question}：你的猜测是 {value}{shown}")
        else:
            print(f"先猜一猜 [{key}] {question}：{UNANSWERED}{shown}——把这一格的“{UNANSWERED}”换成你的猜测，再运行")
        self._save()

    def reveal(self, key: str, measured: Any) -> str:
        """Record the measurement, print it beside the guess, and return that line."""
        if key not in self.guesses:
            raise KeyError(f"reveal {key!r}: no guess with that key was made (run its 先猜一猜 cell first)")
        guess = self.guesses[key]
        if guess.numeric:
            measured = float(measured)
        elif measured not in guess.options:
            raise ValueError(f"reveal {key!r}: {measured!r} is not one of the options {list(guess.options)}")
        guess.measured, guess.revealed = measured, True
        if not guess.answered:
            shown = f"{measured:.4g}" if guess.numeric else f"{measured}"
            line = f"揭晓 [{key}]：实测 {shown}；你{UNANSWERED}（下次先写下猜测，再运行这一格）"
        elif guess.numeric:
            ratio = guess.log2_ratio()
            how = f"相差 {2 ** ratio:.2f} 倍" if ratio is not None else \
                "有一个是 0，谈不上几倍" if guess.value * measured == 0 else "正负号都不对"
            verdict = f"{how}，{'在' if guess.right else '不在'} {WITHIN:g} 倍以内"
            line = f"揭晓 [{key}]：你猜 {guess.value:.4g}，实测 {measured:.4g}：{verdict}"
        else:
            line = f"揭晓 [{key}]：你猜 {guess.value}，实际是 {measured}：{'猜对了' if guess.right else '没猜对'}"
        print(line)
        self._save()
        return line

    def calibration(self) -> Calibration:
        """Score every guess of the lecture, print the score, and return it."""
        revealed = [g for g in self.guesses.values() if g.revealed and g.answered]
        numbers = [g for g in revealed if g.numeric]
        ratios = [r for r in (g.log2_ratio() for g in numbers) if r is not None]
        result = Calibration(
            numbers=len(numbers), numbers_close=sum(g.right for g in numbers),
            mean_log2_ratio=sum(ratios) / len(ratios) if ratios else None,
            choices=len(revealed) - len(numbers), choices_right=sum(g.right for g in revealed if not g.numeric),
            defaults=sum(g.default is not None and g.value == g.default for g in self.guesses.values()),
            pending=sum(not g.revealed for g in self.guesses.values()),
            unanswered=sum(not g.answered for g in self.guesses.values()))
        print(f"第 {self.lecture} 讲的先猜一猜，校准得分：\n{result}")
        return result

    def _save(self) -> None:
        if self.path is not None:
            record = {"lecture": self.lecture, "guesses": [asdict(g) for g in self.guesses.values()]}
            write_file(self.path, json.dumps(record, ensure_ascii=False, indent=1, default=str))
