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
`folder/guesses_NN.json` after every guess and measurement (plain JSON, never pickle), and read back when the
lecture runs again: a guess changed after its measurement was shown is kept as a revision, and the first guess is
the one scored; a guess first written after its measurement was shown is marked as such and not scored. (A guess
changed before its reveal is simply the guess: nothing had been seen yet.)
Read next: 00_autograd.py, whose first 先猜一猜 is a guess cell.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
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
    revisions: list[Any] = field(default_factory=list)  # values written after the measurement was shown
    late: bool = False  # first written after the measurement was shown: not scored

    @property
    def numeric(self) -> bool:
        return self.options is None

    @property
    def answered(self) -> bool:
        return not (isinstance(self.value, str) and self.value == UNANSWERED)

    @property
    def scored(self) -> bool:
        """A guess made before its measurement was seen: the only kind the calibration scores."""
        return self.answered and not self.late

    def log2_ratio(self) -> float | None:
        """|log2(guess / measured)| for a numeric guess of the right sign; None when it has no meaning."""
        if not self.numeric or not self.revealed or not self.scored:
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
        if not self.revealed or not self.scored:
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
    revised: int = 0  # guesses changed after their measurement was shown: the first one is scored
    late: int = 0  # guesses first written after their measurement was shown: not scored

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
        if self.revised:
            lines.append(f"{self.revised} 个猜测在看过实测之后改过：记分的是第一次的猜测，改动只记作修改")
        if self.late:
            lines.append(f"{self.late} 个猜测是在看过实测之后才写下的，不计分：下一讲先猜、再运行")
        if not self.numbers and not self.choices and self.unanswered:
            lines.append("没有一个猜测可以打分")
        return "\n".join(lines) if lines else "这一讲还没有记下猜测"


class Predictions:
    """The guesses of one lecture, in the order they were made (and, with a folder, those of its earlier runs)."""

    def __init__(self, lecture: str, folder: str | Path | None = None) -> None:
        self.lecture = lecture
        self.path = None if folder is None else Path(folder) / f"guesses_{lecture}.json"
        self.guesses: dict[str, Guess] = {}
        self.earlier: dict[str, Guess] = self._read()  # what an earlier run recorded: first guesses stay first

    def guess(self, key: str, value: Any, question: str = "", options: Sequence[Any] | None = None,
              default: Any = None) -> None:
        """Write down a guess before the experiment. `options` makes it a choice; otherwise it is a number.

        `value` is UNANSWERED ("还没猜") until the learner writes a guess over it. `default` is a value the cell
        shipped with, for a cell that ships with one, so that the calibration can say it was never changed.
        Once the measurement has been shown, a new value is a revision: the first guess is kept and scored.
        """
        options = None if options is None else tuple(options)
        guess = Guess(key, question, value, default, options)
        shown = f"（可选：{' / '.join(map(str, options))}）" if options else ""
        if guess.answered and options is not None and value not in options:
            raise ValueError(f"先猜一猜 [{key}]：{value!r} 不是选项之一{shown}；照选项原样写，连引号一起")
        if guess.answered and options is None and (isinstance(value, bool) or not isinstance(value, (int, float))):
            raise ValueError(f"先猜一猜 [{key}]：这一题要猜一个数，你写的是 {value!r}（{type(value).__name__}）；"
                             "写成 3.5 这样的数，不加引号")
        before = self.guesses.get(key) or self.earlier.get(key)
        revised = False
        if before is not None and before.revealed:
            guess, revised = self._after_the_reveal(before, guess)
        self.guesses[key] = guess
        if revised:
            print(f"先猜一猜 [{key}] {question}：实测已经揭晓过了，你的猜测改成了 {value}；"
                  f"记分的仍是第一次的猜测 {guess.value}，这一次记作修改")
        elif guess.late:
            print(f"先猜一猜 [{key}] {question}：你的猜测是 {value}{shown}——不过实测已经揭晓过了，这个猜测不计分")
        elif guess.answered:
            print(f"先猜一猜 [{key}] {question}：你的猜测是 {value}{shown}")
        else:
            print(f"先猜一猜 [{key}] {question}：{UNANSWERED}{shown}——把这一格的“{UNANSWERED}”换成你的猜测，再运行")
        self._save()

    @staticmethod
    def _after_the_reveal(before: Guess, now: Guess) -> tuple[Guess, bool]:
        """A guess written again after its measurement was shown: (the guess kept, whether `now` revised it). The
        first answered value stays the guess; one first written after the reveal is late."""
        kept = Guess(now.key, now.question, before.value, now.default, now.options, revisions=list(before.revisions),
                     late=before.late)
        if not before.answered:  # never guessed before the reveal: whatever is written now came after it
            kept.value, kept.late = now.value, now.answered
            return kept, False
        if now.answered and now.value != before.value:
            if not kept.revisions or kept.revisions[-1] != now.value:
                kept.revisions.append(now.value)
            return kept, True
        return kept, False

    def reveal(self, key: str, measured: Any) -> str:
        """Record the measurement, print it beside the guess, and return that line."""
        if key not in self.guesses:
            raise KeyError(f"揭晓 [{key}]：还没有这个先猜一猜（先运行它前面那一格猜测）")
        guess = self.guesses[key]
        if guess.numeric:
            measured = float(measured)
        elif measured not in guess.options:
            raise ValueError(f"揭晓 [{key}]：实测的 {measured!r} 不是选项之一（{' / '.join(map(str, guess.options))}）")
        guess.measured, guess.revealed = measured, True
        later = f"（看过实测后改成 {guess.revisions[-1]}，不计）" if guess.revisions else ""
        if not guess.answered:
            shown = f"{measured:.4g}" if guess.numeric else f"{measured}"
            line = f"揭晓 [{key}]：实测 {shown}；你{UNANSWERED}（下次先写下猜测，再运行这一格）"
        elif guess.late:
            line = f"揭晓 [{key}]：实测 {measured:.4g}" if guess.numeric else f"揭晓 [{key}]：实际是 {measured}"
            line += f"；你的猜测 {guess.value} 是看过实测之后写的，不计分"
        elif guess.numeric:
            ratio = guess.log2_ratio()
            how = f"相差 {2 ** ratio:.2f} 倍" if ratio is not None else \
                "有一个是 0，谈不上几倍" if guess.value * measured == 0 else "正负号都不对"
            verdict = f"{how}，{'在' if guess.right else '不在'} {WITHIN:g} 倍以内"
            line = f"揭晓 [{key}]：你猜 {guess.value:.4g}{later}，实测 {measured:.4g}：{verdict}"
        else:
            right = "猜对了" if guess.right else "没猜对"
            line = f"揭晓 [{key}]：你猜 {guess.value}{later}，实际是 {measured}：{right}"
        print(line)
        self._save()
        return line

    def calibration(self) -> Calibration:
        """Score every guess of the lecture, print the score, and return it."""
        revealed = [g for g in self.guesses.values() if g.revealed and g.scored]
        numbers = [g for g in revealed if g.numeric]
        ratios = [r for r in (g.log2_ratio() for g in numbers) if r is not None]
        result = Calibration(
            numbers=len(numbers), numbers_close=sum(g.right for g in numbers),
            mean_log2_ratio=sum(ratios) / len(ratios) if ratios else None,
            choices=len(revealed) - len(numbers), choices_right=sum(g.right for g in revealed if not g.numeric),
            defaults=sum(g.default is not None and g.value == g.default for g in self.guesses.values()),
            pending=sum(not g.revealed for g in self.guesses.values()),
            unanswered=sum(not g.answered for g in self.guesses.values()),
            revised=sum(bool(g.revisions) and g.scored for g in self.guesses.values()),
            late=sum(g.late for g in self.guesses.values()))
        print(f"第 {self.lecture} 讲的先猜一猜，校准得分：\n{result}")
        return result

    def _read(self) -> dict[str, Guess]:
        """The guesses an earlier run recorded, by key; none if there is no record (or one this code did not write)."""
        if self.path is None or not self.path.is_file():
            return {}
        try:
            record = json.loads(self.path.read_text(encoding="utf-8"))
            guesses = [Guess(**{**g, "options": None if g["options"] is None else tuple(g["options"])})
                       for g in record["guesses"]]
        except (OSError, ValueError, TypeError, KeyError):
            print(f"（{self.path} 读不懂，当作没有记录：这一讲的猜测从头记起）")
            return {}
        return {g.key: g for g in guesses}

    def _save(self) -> None:
        if self.path is not None:
            kept = {**self.earlier, **self.guesses}  # an earlier run's guesses not reached yet stay recorded
            record = {"lecture": self.lecture, "guesses": [asdict(g) for g in kept.values()]}
            write_file(self.path, json.dumps(record, ensure_ascii=False, indent=1, default=str))  # never via a link
