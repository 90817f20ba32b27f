"""optim.lr_scheduler against torch.optim.lr_scheduler: both schedulers run side by side on a dummy optimizer
(two parameter groups) and must set the same rates (and momenta, for OneCycleLR) at every step."""

import json

import numpy as np
import pytest

import minigrad as mg
from minigrad import optim

torch = pytest.importorskip("torch")


def optimizers(name="SGD", **kwargs):
    """The same optimizer in both libraries, with two groups of their own learning rates."""
    kwargs = kwargs or dict(lr=0.1, momentum=0.9)
    ours = [mg.nn.Parameter(np.zeros(2)), mg.nn.Parameter(np.zeros(3))]
    theirs = [torch.zeros(2, requires_grad=True), torch.zeros(3, requires_grad=True)]

    def groups(ps):
        return [{"params": [ps[0]]}, {"params": [ps[1]], "lr": 0.03}]

    return getattr(optim, name)(groups(ours), **kwargs), getattr(torch.optim, name)(groups(theirs), **kwargs)


def _warmup_then_cosine(lib, opt):
    s = lib.optim.lr_scheduler
    return s.SequentialLR(opt, [s.LinearLR(opt, start_factor=0.1, total_iters=4), s.CosineAnnealingLR(opt, T_max=10)],
                          milestones=[4])


def _three(lib, opt):
    s = lib.optim.lr_scheduler
    return s.SequentialLR(opt, [s.LinearLR(opt, 0.5, 1.0, 3), s.StepLR(opt, 2, 0.5), s.LambdaLR(opt, lambda e: 0.9**e)],
                          milestones=[3, 8])


SCHEDULES = {
    "LambdaLR": lambda lib, opt: lib.optim.lr_scheduler.LambdaLR(opt, lambda epoch: 1 / (1 + epoch)),
    "LambdaLR-per-group": lambda lib, opt: lib.optim.lr_scheduler.LambdaLR(opt, [lambda e: 0.95**e, lambda e: e + 1]),
    "StepLR": lambda lib, opt: lib.optim.lr_scheduler.StepLR(opt, step_size=3, gamma=0.5),
    "CosineAnnealingLR": lambda lib, opt: lib.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=7, eta_min=0.001),
    "LinearLR": lambda lib, opt: lib.optim.lr_scheduler.LinearLR(opt, start_factor=0.25, total_iters=6),
    "LinearLR-decay": lambda lib, opt: lib.optim.lr_scheduler.LinearLR(opt, 1.0, 0.1, total_iters=10),
    "SequentialLR": _warmup_then_cosine,
    "SequentialLR-three": _three,
    "OneCycleLR": lambda lib, opt: lib.optim.lr_scheduler.OneCycleLR(opt, max_lr=[0.5, 0.2], total_steps=25),
    "OneCycleLR-linear-3": lambda lib, opt: lib.optim.lr_scheduler.OneCycleLR(
        opt, max_lr=0.4, epochs=4, steps_per_epoch=6, anneal_strategy="linear", three_phase=True, pct_start=0.25),
}


def assert_same_rates(opt_m, opt_t, sched_m, sched_t, step):
    assert sched_m.get_last_lr() == sched_t.get_last_lr(), f"step {step}"  # exactly equal, as the same arithmetic
    assert [g["lr"] for g in opt_m.param_groups] == [g["lr"] for g in opt_t.param_groups]
    for gm, gt in zip(opt_m.param_groups, opt_t.param_groups):
        for key in ("momentum", "betas"):
            if key in gt:
                assert tuple(np.atleast_1d(gm[key])) == tuple(np.atleast_1d(gt[key])), f"{key} at step {step}"


@pytest.mark.parametrize("optimizer", [("SGD", dict(lr=0.1, momentum=0.9)), ("AdamW", dict(lr=0.1))])
@pytest.mark.parametrize("name", list(SCHEDULES))
def test_rates_equal_pytorch_over_many_steps(name, optimizer):
    opt_m, opt_t = optimizers(optimizer[0], **optimizer[1])
    sched_m, sched_t = SCHEDULES[name](mg, opt_m), SCHEDULES[name](torch, opt_t)
    assert_same_rates(opt_m, opt_t, sched_m, sched_t, 0)
    steps = 24 if name.startswith("OneCycle") else 30
    for step in range(1, steps + 1):
        opt_m.step()
        opt_t.step()
        sched_m.step()
        sched_t.step()
        assert_same_rates(opt_m, opt_t, sched_m, sched_t, step)


@pytest.mark.parametrize("name", ["StepLR", "CosineAnnealingLR", "SequentialLR", "OneCycleLR", "LambdaLR"])
def test_state_dict_resumes_the_schedule(name):
    """A scheduler saved mid-run (through JSON, as a checkpoint would) and loaded into a fresh one continues
    exactly as the uninterrupted one, which itself follows PyTorch."""
    opt_a, opt_t = optimizers()
    a, t = SCHEDULES[name](mg, opt_a), SCHEDULES[name](torch, opt_t)
    opt_t.step()  # PyTorch warns about a scheduler stepped before its optimizer
    for _ in range(5):
        a.step()
        t.step()
    saved_opt = json.loads(json.dumps([{k: v for k, v in g.items() if k != "params"} for g in opt_a.param_groups]))
    saved = json.loads(json.dumps(a.state_dict()))
    opt_b, _ = optimizers()
    b = SCHEDULES[name](mg, opt_b)
    for group, values in zip(opt_b.param_groups, saved_opt):
        group.update({k: tuple(v) if isinstance(v, list) else v for k, v in values.items()})
    b.load_state_dict(saved)
    for step in range(10):
        a.step()
        b.step()
        t.step()
        assert a.get_last_lr() == b.get_last_lr() == t.get_last_lr(), f"step {step}"
    assert "optimizer" not in saved


def test_bad_arguments_raise_as_pytorch():
    opt, _ = optimizers()
    with pytest.raises(ValueError):
        optim.lr_scheduler.LinearLR(opt, start_factor=0.0)
    with pytest.raises(ValueError):
        optim.lr_scheduler.LambdaLR(opt, [lambda e: 1.0])
    with pytest.raises(ValueError):
        optim.lr_scheduler.OneCycleLR(opt, max_lr=0.1)
    with pytest.raises(TypeError):
        optim.lr_scheduler.StepLR(object(), 2)
    sched = optim.lr_scheduler.OneCycleLR(opt, max_lr=0.1, total_steps=2)
    sched.step()
    sched.step()
    with pytest.raises(ValueError, match="Tried to step 3 times"):
        sched.step()
