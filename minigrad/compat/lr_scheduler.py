"""Learning-rate schedulers as objects, as `torch.optim.lr_scheduler`: LambdaLR, StepLR, CosineAnnealingLR,
LinearLR, SequentialLR, OneCycleLR, computing with the curves training uses (../optim/schedules.py:
`cosine_between`, `linear_between`).

    scheduler = optim.lr_scheduler.StepLR(optimizer, step_size=30, gamma=0.1)
    for epoch in range(100):
        train(...)            # optimizer.step() inside
        scheduler.step()      # then the next rate goes into every group["lr"]

Creating a scheduler writes each group's "initial_lr" and takes the first step (epoch 0). Several rules are
written as PyTorch writes them, as a factor applied to the current group["lr"] ("chainable"), so that the
rates equal PyTorch's to the last bit, not only to float rounding.
Read next: ../optim/schedules.py (the formulas these objects compute with).
"""

from __future__ import annotations

import math
import types
from bisect import bisect_right
from collections.abc import Callable, Sequence
from typing import Any

from minigrad.optim.optimizer import Optimizer
from minigrad.optim.schedules import cosine_between, linear_between


class LRScheduler:
    """Base class: subclasses define `get_lr()`, the rates for epoch `self.last_epoch`."""

    def __init__(self, optimizer: Optimizer, last_epoch: int = -1) -> None:
        if not isinstance(optimizer, Optimizer):
            raise TypeError(f"{type(optimizer).__name__} is not an Optimizer")
        self.optimizer = optimizer
        for i, group in enumerate(optimizer.param_groups):
            if last_epoch == -1:
                group.setdefault("initial_lr", group["lr"])
            elif "initial_lr" not in group:
                raise KeyError(f"param 'initial_lr' is not specified in param_groups[{i}] when resuming a scheduler")
        self.base_lrs: list[float] = [group["initial_lr"] for group in optimizer.param_groups]
        self.last_epoch = last_epoch
        self._initial_step()

    def _initial_step(self) -> None:
        self._step_count = 0
        self._is_initial = True
        try:
            self.step()
        finally:
            self._is_initial = False

    def get_lr(self) -> list[float]:
        raise NotImplementedError(f"{type(self).__name__} must define get_lr()")

    def get_last_lr(self) -> list[float]:
        """The rates the last `step()` set, one per parameter group."""
        return self._last_lr

    def step(self) -> None:
        """Advance one epoch (or batch) and set every group's rate; call it after `optimizer.step()`."""
        self._step_count += 1
        self._update_lr(None)

    def _update_lr(self, epoch: int | None) -> None:
        if epoch is None:
            self.last_epoch += 1
            values = self.get_lr()
        else:  # SequentialLR restarts a scheduler at a milestone from its closed form, as PyTorch does
            self.last_epoch = epoch
            values = self._get_closed_form_lr() if hasattr(self, "_get_closed_form_lr") else self.get_lr()
        for group, lr in zip(self.optimizer.param_groups, values, strict=True):
            group["lr"] = lr
        self._last_lr = [group["lr"] for group in self.optimizer.param_groups]

    def state_dict(self) -> dict[str, Any]:
        """Everything but the optimizer (plain numbers and lists, so JSON can hold it)."""
        return {key: value for key, value in self.__dict__.items() if key != "optimizer"}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        self.__dict__.update(state_dict)


class LambdaLR(LRScheduler):
    """lr = initial_lr * lr_lambda(epoch), one function for all groups or one per group."""

    def __init__(self, optimizer: Optimizer, lr_lambda: Callable[[int], float] | Sequence[Callable[[int], float]],
                 last_epoch: int = -1) -> None:
        groups = len(optimizer.param_groups)
        if isinstance(lr_lambda, (list, tuple)):
            if len(lr_lambda) != groups:
                raise ValueError(f"Expected {groups} lr_lambdas, but got {len(lr_lambda)}")
            self.lr_lambdas = list(lr_lambda)
        else:
            self.lr_lambdas = [lr_lambda] * groups
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        return [base_lr * fn(self.last_epoch) for fn, base_lr in zip(self.lr_lambdas, self.base_lrs)]

    def state_dict(self) -> dict[str, Any]:
        """As PyTorch: the functions are not saved (recreate them), only the attributes of callable objects."""
        state = {key: value for key, value in self.__dict__.items() if key not in ("optimizer", "lr_lambdas")}
        state["lr_lambdas"] = [None if isinstance(fn, types.FunctionType) else dict(fn.__dict__)
                               for fn in self.lr_lambdas]
        return state

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        state_dict = dict(state_dict)
        saved = state_dict.pop("lr_lambdas")
        self.__dict__.update(state_dict)
        for fn, attributes in zip(self.lr_lambdas, saved):
            if attributes is not None:
                fn.__dict__.update(attributes)


class StepLR(LRScheduler):
    """lr = initial_lr * gamma ** (epoch // step_size): multiplied by gamma every step_size epochs."""

    def __init__(self, optimizer: Optimizer, step_size: int, gamma: float = 0.1, last_epoch: int = -1) -> None:
        self.step_size, self.gamma = step_size, gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        if self.last_epoch == 0 or self.last_epoch % self.step_size != 0:
            return [group["lr"] for group in self.optimizer.param_groups]
        return [group["lr"] * self.gamma for group in self.optimizer.param_groups]

    def _get_closed_form_lr(self) -> list[float]:
        return [base_lr * self.gamma ** (self.last_epoch // self.step_size) for base_lr in self.base_lrs]


class CosineAnnealingLR(LRScheduler):
    """lr = eta_min + (initial_lr - eta_min) * (1 + cos(pi * epoch / T_max)) / 2, computed step to step as
    PyTorch does (past T_max it climbs back up: a cosine, not a restart)."""

    def __init__(self, optimizer: Optimizer, T_max: int, eta_min: float = 0.0, last_epoch: int = -1) -> None:  # noqa: N803
        self.T_max, self.eta_min = T_max, eta_min
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        groups, t, T = self.optimizer.param_groups, self.last_epoch, self.T_max  # noqa: N806
        if self._is_initial:
            return [group["lr"] for group in groups]
        if self._step_count == 1 and t > 0:
            return [self.eta_min + (base - self.eta_min) * (1 + math.cos(t * math.pi / T)) / 2
                    for base in self.base_lrs]
        if (t - 1 - T) % (2 * T) == 0:
            return [group["lr"] + (base - self.eta_min) * (1 - math.cos(math.pi / T)) / 2
                    for base, group in zip(self.base_lrs, groups)]
        return [(1 + math.cos(math.pi * t / T)) / (1 + math.cos(math.pi * (t - 1) / T))
                * (group["lr"] - self.eta_min) + self.eta_min for group in groups]

    def _get_closed_form_lr(self) -> list[float]:
        return [cosine_between(base, self.eta_min, self.last_epoch / self.T_max) for base in self.base_lrs]


class LinearLR(LRScheduler):
    """lr = initial_lr * factor, the factor going in a straight line from start_factor to end_factor over
    total_iters epochs, then staying there."""

    def __init__(self, optimizer: Optimizer, start_factor: float = 1.0 / 3, end_factor: float = 1.0,
                 total_iters: int = 5, last_epoch: int = -1) -> None:
        if start_factor > 1.0 or start_factor <= 0:
            raise ValueError("Starting multiplicative factor expected to be greater than 0 and less or equal to 1.")
        if end_factor > 1.0 or end_factor < 0:
            raise ValueError("Ending multiplicative factor expected to be between 0 and 1.")
        self.start_factor, self.end_factor, self.total_iters = start_factor, end_factor, total_iters
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        groups, span = self.optimizer.param_groups, self.end_factor - self.start_factor
        if self.last_epoch == 0:
            return [group["lr"] * self.start_factor for group in groups]
        if self._is_initial or self.last_epoch > self.total_iters:
            return [group["lr"] for group in groups]
        ratio = 1.0 + span / (self.total_iters * self.start_factor + (self.last_epoch - 1) * span)
        return [group["lr"] * ratio for group in groups]

    def _get_closed_form_lr(self) -> list[float]:
        factor = linear_between(self.start_factor, self.end_factor, min(self.total_iters, self.last_epoch)
                                / self.total_iters)
        return [base * factor for base in self.base_lrs]


class SequentialLR(LRScheduler):
    """schedulers[0] until milestones[0], then schedulers[1] (restarted at its epoch 0), and so on: e.g. a
    LinearLR warmup followed by a CosineAnnealingLR decay."""

    def __init__(self, optimizer: Optimizer, schedulers: Sequence[LRScheduler], milestones: Sequence[int],
                 last_epoch: int = -1) -> None:
        if len(schedulers) < 1:
            raise ValueError("SequentialLR expects at least one scheduler, but got no scheduler.")
        for i, scheduler in enumerate(schedulers):
            if scheduler.optimizer is not optimizer:
                raise ValueError(f"SequentialLR expects all schedulers to belong to the same optimizer, but "
                                 f"scheduler {type(scheduler).__name__} at index {i} has another one")
        if len(milestones) != len(schedulers) - 1:
            raise ValueError(f"SequentialLR expects one milestone fewer than schedulers, but got "
                             f"{len(schedulers)} schedulers and {len(milestones)} milestones")
        self._schedulers, self._milestones = list(schedulers), list(milestones)
        self.last_epoch, self.optimizer = last_epoch + 1, optimizer
        for group in optimizer.param_groups:  # undo what the schedulers' own first steps did
            group["lr"] = group["initial_lr"]
        for scheduler in self._schedulers:
            scheduler.last_epoch -= 1
        first = self._schedulers[bisect_right(self._milestones, 0)]
        first._initial_step()
        self._last_lr = first.get_last_lr()

    def step(self) -> None:
        self.last_epoch += 1
        i = bisect_right(self._milestones, self.last_epoch)
        scheduler = self._schedulers[i]
        if i > 0 and self._milestones[i - 1] == self.last_epoch:
            scheduler._update_lr(0)
        else:
            scheduler.step()
        self._last_lr = scheduler.get_last_lr()

    def state_dict(self) -> dict[str, Any]:
        state = {key: value for key, value in self.__dict__.items() if key not in ("optimizer", "_schedulers")}
        state["_schedulers"] = [scheduler.state_dict() for scheduler in self._schedulers]
        return state

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        state_dict = dict(state_dict)
        saved = state_dict.pop("_schedulers")
        self.__dict__.update(state_dict)
        for scheduler, state in zip(self._schedulers, saved):
            scheduler.load_state_dict(state)


class OneCycleLR(LRScheduler):
    """The 1cycle policy (Smith & Topin): the rate rises from max_lr / div_factor to max_lr over the first
    pct_start of total_steps, then anneals to initial_lr / final_div_factor; momentum (SGD's, or Adam's beta1)
    moves the opposite way between max_momentum and base_momentum. Step it after every batch."""

    def __init__(self, optimizer: Optimizer, max_lr: float | Sequence[float], total_steps: int | None = None,
                 epochs: int | None = None, steps_per_epoch: int | None = None, pct_start: float = 0.3,
                 anneal_strategy: str = "cos", cycle_momentum: bool = True, base_momentum: float = 0.85,
                 max_momentum: float = 0.95, div_factor: float = 25.0, final_div_factor: float = 1e4,
                 three_phase: bool = False, last_epoch: int = -1) -> None:
        if total_steps is not None:
            if not isinstance(total_steps, int) or total_steps <= 0:
                raise ValueError(f"Expected positive integer total_steps, but got {total_steps}")
            self.total_steps = total_steps
        elif epochs is not None and steps_per_epoch is not None:
            if not all(isinstance(n, int) and n > 0 for n in (epochs, steps_per_epoch)):
                raise ValueError(f"Expected positive integer epochs and steps_per_epoch, got {epochs}, "
                                 f"{steps_per_epoch}")
            self.total_steps = epochs * steps_per_epoch
        else:
            raise ValueError("You must define either total_steps OR (epochs AND steps_per_epoch)")
        if not isinstance(pct_start, float) or not 0 <= pct_start <= 1:
            raise ValueError(f"Expected float between 0 and 1 pct_start, but got {pct_start}")
        if anneal_strategy not in ("cos", "linear"):
            raise ValueError(f"anneal_strategy must be one of 'cos' or 'linear', instead got {anneal_strategy}")
        self._anneal_func_type = anneal_strategy
        self._schedule_phases = _one_cycle_phases(pct_start, self.total_steps, three_phase)
        groups = optimizer.param_groups
        max_lrs = _per_group("max_lr", groups, max_lr)
        if last_epoch == -1:
            for peak, group in zip(max_lrs, groups):
                group["initial_lr"], group["max_lr"] = peak / div_factor, peak
                group["min_lr"] = group["initial_lr"] / final_div_factor
        self.cycle_momentum = cycle_momentum
        if cycle_momentum:
            if "momentum" not in optimizer.defaults and "betas" not in optimizer.defaults:
                raise ValueError("optimizer must support momentum or beta1 with `cycle_momentum` option enabled")
            self.use_beta1 = "betas" in optimizer.defaults
            tops = _per_group("max_momentum", groups, max_momentum)
            bottoms = _per_group("base_momentum", groups, base_momentum)
            if last_epoch == -1:
                for top, bottom, group in zip(tops, bottoms, groups):
                    _set_momentum(group, top, self.use_beta1)
                    group["max_momentum"], group["base_momentum"] = top, bottom
        super().__init__(optimizer, last_epoch)

    def _anneal(self, start: float, end: float, pct: float) -> float:
        return (cosine_between if self._anneal_func_type == "cos" else linear_between)(start, end, pct)

    def get_lr(self) -> list[float]:
        step = self.last_epoch
        if step > self.total_steps:
            raise ValueError(f"Tried to step {step} times. The specified number of total steps is {self.total_steps}")
        lrs = []
        for group in self.optimizer.param_groups:
            start_step = 0.0
            for i, phase in enumerate(self._schedule_phases):
                end_step = phase["end_step"]
                if step <= end_step or i == len(self._schedule_phases) - 1:
                    pct = (step - start_step) / (end_step - start_step)
                    lrs.append(self._anneal(group[phase["start_lr"]], group[phase["end_lr"]], pct))
                    if self.cycle_momentum:
                        momentum = self._anneal(group[phase["start_momentum"]], group[phase["end_momentum"]], pct)
                        _set_momentum(group, momentum, self.use_beta1)
                    break
                start_step = phase["end_step"]
        return lrs


def _one_cycle_phases(pct_start: float, total_steps: int, three_phase: bool) -> list[dict[str, Any]]:
    """The phases of OneCycleLR: (end step, the group keys to anneal from and to), as PyTorch lays them out."""
    def phase(end_step: float, lr: tuple[str, str], momentum: tuple[str, str]) -> dict[str, Any]:
        return {"end_step": end_step, "start_lr": lr[0], "end_lr": lr[1], "start_momentum": momentum[0],
                "end_momentum": momentum[1]}

    warm = float(pct_start * total_steps) - 1
    if three_phase:
        return [phase(warm, ("initial_lr", "max_lr"), ("max_momentum", "base_momentum")),
                phase(float(2 * pct_start * total_steps) - 2, ("max_lr", "initial_lr"),
                      ("base_momentum", "max_momentum")),
                phase(total_steps - 1, ("initial_lr", "min_lr"), ("max_momentum", "max_momentum"))]
    return [phase(warm, ("initial_lr", "max_lr"), ("max_momentum", "base_momentum")),
            phase(total_steps - 1, ("max_lr", "min_lr"), ("base_momentum", "max_momentum"))]


def _per_group(name: str, groups: list[dict[str, Any]], value: Any) -> list[Any]:
    if isinstance(value, (list, tuple)):
        if len(value) != len(groups):
            raise ValueError(f"{name} must have the same length as optimizer.param_groups. "
                             f"{name} has {len(value)} values, param_groups has {len(groups)}.")
        return list(value)
    return [value] * len(groups)


def _set_momentum(group: dict[str, Any], momentum: float, use_beta1: bool) -> None:
    if use_beta1:
        group["betas"] = (momentum, *group["betas"][1:])
    else:
        group["momentum"] = momentum


__all__ = ["CosineAnnealingLR", "LRScheduler", "LambdaLR", "LinearLR", "OneCycleLR", "SequentialLR", "StepLR"]
