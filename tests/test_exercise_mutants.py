"""Mutation testing for the exercises' checkers: typical wrong answers, generated from each reference solution
(tutorials/exercises/mutants.py), must be rejected by that exercise's checker.

Each lecture must reject at least 95% of its mutants, equivalent mutants (listed with their reasons) aside;
a failure lists the survivors, and the module prints one line per lecture when it is done.
"""

from __future__ import annotations

from functools import cache

import pytest

from tutorials.exercises import LECTURES
from tutorials.exercises.grading import grade
from tutorials.exercises.mutants import EQUIVALENT, mutants

REQUIRED_RATE = 0.95
KINDS = ["axis flipped", "term dropped", "off by one", "operator flipped", "sign flipped", "gradient cut",
         "moved later", "comparison", "swapped name", "call dropped", "transpose dropped", "answers swapped",
         "axis from the front", "shape from the front", "bound dropped", "condition dropped", "library shortcut",
         "engine mistake"]
REPORT: dict[str, str] = {}


@cache
def outcomes(lecture: str) -> tuple[tuple[str, bool], ...]:
    """(description, whether the checker passed it) for every mutant of one lecture: made and graded once."""
    return tuple((m.description, grade(m.exercise, m.answer).passed) for m in mutants(lecture))


@pytest.fixture(scope="module", autouse=True)
def report(request):
    """Print the per-lecture report after this module's tests (shown without -s, after the progress dots)."""
    yield
    plugins = request.config.pluginmanager
    reporter, capture = plugins.getplugin("terminalreporter"), plugins.getplugin("capturemanager")
    if reporter is None or capture is None or not REPORT:
        return
    with capture.global_and_fixture_disabled():  # what capsys.disabled() does: past pytest's output capture
        reporter.write_line("")
        for lecture in sorted(REPORT):
            reporter.write_line(REPORT[lecture])


@pytest.mark.parametrize("lecture", list(LECTURES))
def test_the_checkers_reject_the_mutants_of_every_solution(lecture, record_property):
    results = outcomes(lecture)
    equivalent = [d for d, _ in results if d in EQUIVALENT]
    counted = [(d, passed) for d, passed in results if d not in EQUIVALENT]
    survivors = [d for d, passed in counted if passed]
    rate = 1 - len(survivors) / len(counted)
    line = (f"mutants, lecture {lecture}: {len(counted) - len(survivors)}/{len(counted)} killed ({rate:.1%}), "
            f"{len(equivalent)} equivalent")
    REPORT[lecture] = line
    record_property(f"mutants_{lecture}", line)
    assert len(counted) >= 30, f"too few mutants to mean anything: {line}"
    assert rate >= REQUIRED_RATE, f"{line}; survivors:\n" + "\n".join(survivors)


@pytest.mark.parametrize("lecture", list(LECTURES))
def test_the_equivalent_mutants_listed_are_made_and_survive(lecture):
    """A listed equivalent mutant that is no longer made, or that a checker now rejects, is a stale entry."""
    made = dict(outcomes(lecture))
    for description in (d for d in EQUIVALENT if d.split(".")[0] == str(int(lecture))):
        assert description in made, f"not made any more (remove it from EQUIVALENT): {description}"
        assert made[description], f"rejected, so not equivalent (remove it from EQUIVALENT): {description}"


def test_every_kind_of_mistake_is_made():
    made = [d for lecture in LECTURES for d, _ in outcomes(lecture)]
    for kind in KINDS:
        assert any(f" {kind}" in d for d in made), kind


@pytest.mark.parametrize(("number", "fragment"), [
    ("6.4", "comparison: mass_before < p → mass_before <= p"),  # the top-p boundary
    ("6.5", "moved later: if top_k is not None:"),  # top-p before top-k
    ("6.5", "moved later (by 2): logits = logits / temperature"),  # the temperature applied last
    ("3.1", "off by one: -1 → -2"),  # a softmax along the wrong axis
    ("3.2", "term dropped: q @ k.swapaxes(-1, -2) / math.sqrt(q.shape[-1]) → q @ k.swapaxes(-1, -2)"),  # no scale
    ("3.3", "off by one: 1 → 0"),  # the causal mask's diagonal
    ("2.2", "gradient cut"),
    ("5.2", "axis from the front: axis=-1 → axis=1"),  # a LayerNorm over the time axis of (B, T, C)
    ("3.3", "shape from the front: q.shape[-1] → q.shape[2]"),  # the scale read from T at (B, nh, T, hs)
    ("3.3", "library shortcut"),  # F.scaled_dot_product_attention(q, k, v, is_causal=True)
    ("5.2", "library shortcut"),  # F.layer_norm
    ("9.7", "bound dropped: min(1.0, grad_clip / (norm + 1e-06)) → grad_clip / (norm + 1e-06)"),  # no min(1, ·)
    ("9.7", "condition dropped: weight_decay if p.ndim >= 2 else 0.0 → weight_decay"),  # decay on every parameter
    ("9.2", "swapped name: (h / math.sqrt(2)).erf → (h / math.sqrt(2)).tanh"),
    ("9.3", "library shortcut"),  # minigpt's Block.forward on a stand-in object
    # the learner's engine (tutorials/exercises/engine_mutants.py)
    ("0.10", "engine mistake: recursive order"),  # fine on small graphs, a RecursionError past ~1,000 ops
    ("0.11", "engine mistake: gradients overwritten, not added"),  # a tensor used twice
    ("0.11", "engine mistake: leaf gradients replaced on each backward"),  # no accumulation across calls
    ("0.4", "engine mistake: sum_to over the leading axes only"),  # the size-1 axes forgotten
    ("0.24", "engine mistake: gather without scatter-add"),  # a repeated row keeps one gradient
    ("0.26", "engine mistake: matmul without transposes"),
    ("0.19", "engine mistake: erf's gradient in float64"),  # a NumPy float64 scalar promotes float32
])
def test_the_known_mistakes_are_among_the_mutants_and_are_rejected(number, fragment):
    lecture = f"{int(number.split('.')[0]):02d}"
    matching = [(d, passed) for d, passed in outcomes(lecture) if d.startswith(number + " ") and fragment in d]
    assert matching, f"no {number} mutant contains {fragment!r}"
    assert not any(passed for _, passed in matching), matching
