"""Typical wrong answers, generated from the reference solutions: mutation testing for the checkers.

A mutant is a reference solution with one small mistake of the kind a learner makes, written into its syntax
tree: an axis flipped (-1 <-> 0), a term dropped, a slice or a mask off by one, a scale left out (a division
by sqrt dropped), a sign flipped, a gradient cut (.detach(), .data), two statements in the wrong order (top-p before
top-k), < for <=, max for min, mean for sum, erf for tanh, a nonlinearity or a transpose forgotten, an axis or a
shape counted from the front (axis=1, q.shape[2]: right on the checker's small inputs, wrong at a GPT's
(B, nh, T, hs)), a bound dropped from min/max (min(1, c/norm) -> c/norm: a clip that scales small gradients up), a
condition dropped (`wd if p.ndim >= 2 else 0.0` -> wd: decay on every parameter), and the library's own function
called instead (each exercise's shortcut answers, shortcuts.py). A checker worth its name
rejects nearly every mutant of its exercise; tests/test_exercise_mutants.py holds each lecture to 95%.

A mutant that computes exactly what the solution computes cannot be rejected by any checker: such equivalent
mutants are listed in `EQUIVALENT`, each with the reason, and the test checks that the list is not stale.
The mutated module is compiled and run in a fresh namespace: this file is a test tool, and the only place in
the course that runs generated code. Read next: ../../tests/test_exercise_mutants.py.
"""

from __future__ import annotations

import ast
import copy
import importlib
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tutorials.exercises import engine_mutants
from tutorials.exercises.checks import LECTURES
from tutorials.exercises.grading import Exercise, answer_file, grade
from tutorials.exercises.origin import MUTANT_PREFIX

CAP = 40  # mutants per exercise at most (evenly spread over all its sites): keeps the test fast
CAPS = {"6.5": 20}  # its checker draws 12,000 samples from each answer: fewer mutants, same spread
SWAPS = {"max": "min", "min": "max", "argmax": "argmin", "argmin": "argmax", "mean": "sum", "sum": "mean",
         "triu": "tril", "tril": "triu", "sin": "cos", "cos": "sin", "tanh": "sigmoid", "sigmoid": "tanh",
         "log": "log2", "erf": "tanh"}
DROPPABLE_CALLS = {"tanh", "sigmoid", "exp", "sqrt", "log", "softmax", "detach", "copy", "swapaxes", "transpose"}
FLIPPED_COMPARISONS = {ast.Lt: ast.LtE, ast.LtE: ast.Lt, ast.Gt: ast.GtE, ast.GtE: ast.Gt}
MUTATING = {"append", "extend", "insert", "pop", "update", "add", "fill", "sort"}  # methods that change their object
FLIPPED_OPERATORS = {ast.Add: ast.Sub, ast.Sub: ast.Add, ast.Mult: ast.Div, ast.Div: ast.Mult}

# Mutants that compute the same thing as the solution, so no checker can reject them: description -> why.
EQUIVALENT = {
    "2.3 attention_context+2:45 axis flipped: 0 → -1":
        "it indexes an axis of size 1 ((B, L, H) @ (B, H, 1) is (B, L, 1)): 0 and -1 are the same element",
    "2.3 attention_context+4:45 axis flipped: 0 → -1":
        "it indexes an axis of size 1 ((B, 1, L) @ (B, L, H) is (B, 1, H)): 0 and -1 are the same row",
    "3.1 softmax+1:12 gradient cut: x → x.detach()":
        "the cut is inside x.max(...): softmax(x - c) does not depend on c, so no gradient flows through c anyway",
    "4.3 rope+1:19 axis flipped: -1 → 0": "x is one vector (hs,), as the exercise says: x.shape[0] is x.shape[-1]",
    "6.6 cached_attention_step+4:51 axis flipped: -1 → 0":
        "q is one vector (d,), as the exercise says: q.shape[0] is q.shape[-1]",
    "4.1 sinusoidal_table+3 moved later: pe[:, 0::2] = np.sin(angles)":
        "the two statements write disjoint columns of pe (even and odd): either order fills the same table",
    "6.6 cached_attention_step+1 moved later: cache['k'].append(k)":
        "appending the key after the value instead of before: two separate lists, both full before they are read",
    "2.3 attention_context+3:29 axis from the front: axis=-1 → axis=1":
        "the scores are (B, L), two axes, as the exercise says: axis 1 is the last one",
    "7.2 greedy_generate+4:51 axis from the front: axis=-1 → axis=1":
        "the last position's logits are (B, V), two axes: axis 1 is the last one",
    "9.4 lm_loss+4:32 axis from the front: axis=-1 → axis=1":
        "the logits were reshaped to (B·T, V), two axes: axis 1 is the last one",
    "9.4 lm_loss+3:18 axis from the front: dim=-1 → dim=1":
        "the logits were reshaped to (B·T, V), two axes: dim 1 is the last one",
    "5.6 post_ln_block+5:8 shape from the front: x.shape[-1] → x.shape[2]":
        "x is the residual stream (B, T, C), as the exercise says: x.shape[2] is x.shape[-1]",
    "9.4 lm_loss+3:12 call dropped: z.max(dim=-1, keepdim=True).values.detach() → z.max(dim=-1, keepdim=True).values":
        "the cut is on the shift: log-softmax(z - c) does not depend on c, so no gradient flows through c anyway",
    "9.5 lr_at+1:7 comparison: step < warmup_iters → step <= warmup_iters":
        "at step == warmup_iters both branches give max_lr: (w + 1)/(w + 1) and the cosine at r = 0",
    "9.5 lr_at+3:7 comparison: step > decay_iters → step >= decay_iters":
        "at step == decay_iters both branches give min_lr: the cosine at r = 1 is min_lr",
    "9.7 train_step+3 moved later (by 2): _, loss = model(x, y)":
        "the forward after clearing the gradients instead of before: the forward neither reads nor writes .grad",
    # the learner's engine: attributes set in another order, a set filled a step later
    **{f"0.8 Tensor+{line} moved later{by}: {what}": "Tensor.__init__ sets separate attributes: any order is the same"
       for line, what, bys in ((5, "self.array = array if array.dtype.kind == 'f' else array.astype(np....",
                                ("", " (by 2)", " (by 3)")),
                               (6, "self.requires_grad = requires_grad", ("", " (by 2)")),
                               (7, "self.grad = None", ("",)))
       for by in bys},
    "0.9 apply+3 moved later: y.requires_grad = True":
        "setting y.requires_grad after y.op and op.inputs instead of before: three separate attributes",
    "0.10 topological_order+10 moved later (by 2): visited.add(id(tensor))":
        "marking the tensor visited after pushing its inputs: a tensor is never its own input, the test is the same",
}


@dataclass(frozen=True)
class Mutant:
    """One generated wrong answer: the exercise it answers, what was changed, and the answer itself."""

    exercise: Exercise
    description: str
    answer: Any


def _short(node: ast.AST) -> str:
    text = " ".join(ast.unparse(node).split())
    return text if len(text) <= 70 else text[:67] + "..."


def _int(node: ast.AST) -> int | None:
    """The value of an integer literal (-1 included), or None."""
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub) and isinstance(node.operand, ast.Constant) \
            and type(node.operand.value) is int:
        return -node.operand.value
    return None


def _literal(value: int) -> ast.expr:
    return ast.UnaryOp(ast.USub(), ast.Constant(-value)) if value < 0 else ast.Constant(value)


def _expression_mutations(node: ast.AST, tensors: set[str]) -> Iterator[tuple[str, ast.AST]]:
    """(what kind of mistake, the node that replaces `node`) for each typical mistake at this node.

    `tensors` are the names whose uses may be cut from the graph (uses for a shape are left out: x.shape is
    the same whether x is detached or not).
    """
    if isinstance(node, ast.Compare) and len(node.ops) == 1 and type(node.ops[0]) in FLIPPED_COMPARISONS:
        yield "comparison", ast.Compare(node.left, [FLIPPED_COMPARISONS[type(node.ops[0])]()], node.comparators)
    if isinstance(node, ast.BinOp):
        if type(node.op) in FLIPPED_OPERATORS:
            yield "operator flipped", ast.BinOp(node.left, FLIPPED_OPERATORS[type(node.op)](), node.right)
        if isinstance(node.op, (ast.Add, ast.Sub, ast.Mult, ast.Div)):
            yield "term dropped", node.left
            if isinstance(node.op, (ast.Add, ast.Mult)):
                yield "term dropped", node.right
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub) and _int(node) is None:
        yield "sign flipped", node.operand
    value = _int(node)
    if value is not None and abs(value) <= 4:  # small integers: axes (-1 <-> 0), offsets, slice ends, mask diagonals
        for other in (value - 1, value + 1):
            yield "axis flipped" if {value, other} == {-1, 0} else "off by one", _literal(other)
    if isinstance(node, ast.keyword) and node.arg in ("axis", "dim") and _int(node.value) == -1:
        yield "axis from the front", ast.keyword(node.arg, ast.Constant(1))  # right on 2-D, the time axis on 3-D
    if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Attribute) and node.value.attr == "shape" \
            and _int(node.slice) in (-1, -2):
        front = 2 if _int(node.slice) == -1 else 1  # right for (B, T, hs); the time axis (or heads) on (B, nh, T, hs)
        yield "shape from the front", ast.Subscript(node.value, ast.Constant(front), node.ctx)
    if isinstance(node, ast.Attribute) and node.attr in SWAPS:
        yield "swapped name", ast.Attribute(node.value, SWAPS[node.attr], node.ctx)
    if isinstance(node, ast.Attribute) and node.attr == "T":
        yield "transpose dropped", node.value
    if isinstance(node, ast.Call):
        func = node.func
        if isinstance(func, ast.Attribute) and func.attr in DROPPABLE_CALLS:
            if isinstance(func.value, ast.Name) and func.value.id in ("np", "math", "mg", "F") and node.args:
                yield "call dropped", node.args[0]  # np.tanh(x) -> x
            elif not (isinstance(func.value, ast.Name) and func.value.id in ("np", "math", "mg", "F")):
                yield "call dropped", func.value  # x.tanh() -> x, k.swapaxes(-1, -2) -> k
    if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and node.id in tensors:
        yield "gradient cut", ast.Call(ast.Attribute(ast.Name(node.id, ast.Load()), "detach", ast.Load()), [], [])
        yield "gradient cut", ast.Attribute(ast.Name(node.id, ast.Load()), "data", ast.Load())  # the raw array
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("min", "max") \
            and len(node.args) == 2 and not node.keywords:
        for kept in node.args:  # min(1, c / norm) -> c / norm: a clip that also scales small gradients up
            yield "bound dropped", kept
    if isinstance(node, ast.IfExp):  # decay if p.ndim >= 2 else 0.0 -> decay: the condition forgotten
        yield "condition dropped", node.body
        yield "condition dropped", node.orelse
    if isinstance(node, ast.Dict) and len(node.values) >= 2:
        for i in range(len(node.values) - 1):
            values = list(node.values)
            values[i], values[i + 1] = values[i + 1], values[i]
            yield "answers swapped", ast.Dict(list(node.keys), values)


def _tensor_parameters(definition: ast.AST) -> set[str]:
    """The parameters annotated `mg.Tensor`: cutting one from the graph is the gradient-cut mistake."""
    if not isinstance(definition, ast.FunctionDef):
        return set()
    return {a.arg for a in definition.args.args if a.annotation is not None and "Tensor" in ast.unparse(a.annotation)}


def _definitions(tree: ast.Module, name: str, exercises: set[str]) -> list[ast.AST]:
    """The top-level definition of `name`, then the helper functions it calls that the learner also writes
    (one level down; a helper that is another exercise has mutants of its own, graded by its own checker)."""
    top = {n.name if not isinstance(n, ast.Assign) else n.targets[0].id: n for n in tree.body
           if isinstance(n, (ast.FunctionDef, ast.ClassDef)) or (isinstance(n, ast.Assign)
                                                                 and isinstance(n.targets[0], ast.Name))}
    own = top[name]
    used = {n.id for n in ast.walk(own) if isinstance(n, ast.Name)}
    helpers = [top[h] for h in sorted(used) if h in top and h not in exercises and isinstance(top[h], ast.FunctionDef)]
    return [own, *helpers]


def _sites(definition: ast.AST, written: set[int] | None = None) -> Iterator[tuple[str, Callable[[ast.AST], None]]]:
    """Every mistake in one definition, as (description, a function that makes it in a copy of the definition);
    with `written`, only at those nodes (what the learner writes, _written_by_learner)."""
    label = getattr(definition, "name", None) or definition.targets[0].id
    tensors = _tensor_parameters(definition)
    nodes = _nodes(definition)
    shapes = {id(n.value) for n in nodes if isinstance(n, ast.Attribute) and n.attr in ("shape", "ndim", "dtype")}
    for index, node in enumerate(nodes):
        if written is not None and id(node) not in written:
            continue
        for kind, replacement in _expression_mutations(node, set() if id(node) in shapes else tensors):
            where = f"{label}+{node.lineno - definition.lineno}:{node.col_offset}"
            yield f"{where} {kind}: {_short(node)} → {_short(replacement)}", _replacer(index, replacement)
    for index, node in enumerate(nodes):  # statements moved later in their block: the order of steps
        body = getattr(node, "body", None)
        if not isinstance(body, list) or written is not None and id(node) not in written:
            continue
        documented = isinstance(node, (ast.FunctionDef, ast.ClassDef)) and ast.get_docstring(node) is not None
        start = 1 if documented else 0
        for i in range(start, len(body) - 1):
            if isinstance(body[i], (ast.FunctionDef, ast.Return)):
                continue
            where = f"{label}+{body[i].lineno - definition.lineno}"
            for j in range(i + 1, len(body)):
                if not isinstance(body[j], ast.Return) and _reordering_matters(body, i, j):
                    by = "" if j == i + 1 else f" (by {j - i})"
                    yield f"{where} moved later{by}: {_short(body[i])}", _mover(index, i, j)


def _nodes(definition: ast.AST) -> list[ast.AST]:
    """The nodes a mistake can be made in, in a fixed order: all but docstrings and the 1 of a literal -1."""
    skipped = {id(n.body[0]) for n in ast.walk(definition) if isinstance(n, (ast.FunctionDef, ast.ClassDef))
               and n.body and isinstance(n.body[0], ast.Expr) and isinstance(n.body[0].value, ast.Constant)}
    skipped |= {id(n.operand) for n in ast.walk(definition) if _int(n) is not None and isinstance(n, ast.UnaryOp)}
    return [n for n in ast.walk(definition) if id(n) not in skipped]


def _names(statement: ast.AST, context: type) -> set[str]:
    """The names a statement reads (ast.Load) or changes (ast.Store), leaving out comprehensions' own variables.

    Changing includes writing into an object (`pe[:, 0::2] = ...`, `cache["k"].append(k)`), not only binding.
    """
    own = {id(n) for c in ast.walk(statement) if isinstance(c, ast.comprehension) for n in ast.walk(c.target)}
    names = {n.id for n in ast.walk(statement) if isinstance(n, ast.Name) and isinstance(n.ctx, context)
             and id(n) not in own}
    if context is ast.Store:
        changed = [n.value for n in ast.walk(statement) if isinstance(n, (ast.Subscript, ast.Attribute))
                   and isinstance(n.ctx, ast.Store)]
        changed += [n.func.value for n in ast.walk(statement) if isinstance(n, ast.Call)
                    and isinstance(n.func, ast.Attribute) and n.func.attr in MUTATING]
        for target in changed:
            while isinstance(target, (ast.Subscript, ast.Attribute)):
                target = target.value
            if isinstance(target, ast.Name):
                names.add(target.id)
    return names


def _reordering_matters(body: list[ast.stmt], i: int, j: int) -> bool:
    """Whether moving statement i after statement j can change anything: some statement in between reads
    what it writes, or writes what it reads or writes. (Independent statements in another order are the
    same program: such moves would be equivalent mutants.)"""
    writes, reads = _names(body[i], ast.Store), _names(body[i], ast.Load)
    between = body[i + 1:j + 1]
    later_writes = set().union(*(_names(b, ast.Store) for b in between))
    later_reads = set().union(*(_names(b, ast.Load) for b in between))
    return bool(writes & later_reads or reads & later_writes or writes & later_writes)


def _replacer(index: int, replacement: ast.AST) -> Callable[[ast.AST], None]:
    def apply(definition: ast.AST) -> None:
        target = _nodes(definition)[index]
        for parent in ast.walk(definition):
            for field, value in ast.iter_fields(parent):
                if value is target:
                    setattr(parent, field, copy.deepcopy(replacement))
                    return
                if isinstance(value, list) and any(v is target for v in value):
                    value[[id(v) for v in value].index(id(target))] = copy.deepcopy(replacement)
                    return

    return apply


def _mover(index: int, i: int, j: int) -> Callable[[ast.AST], None]:
    def apply(definition: ast.AST) -> None:
        body = _nodes(definition)[index].body
        body.insert(j, body.pop(i))  # statement i now comes after what was statement j

    return apply


def _answer(tree: ast.Module, filename: str, name: str) -> Any:
    """The mutated module run in a fresh namespace, compiled under `<mutant of lectureNN.py>`: the grader lets the
    reference's edits use the reference's helpers (origin.py), and no one else."""
    namespace: dict[str, Any] = {"__name__": "tutorials.solutions.mutant"}
    with warnings.catch_warnings():  # a mutant like `1[:, None]` compiles with a SyntaxWarning: it is meant to fail
        warnings.simplefilter("ignore", SyntaxWarning)
        code = compile(ast.fix_missing_locations(tree), f"{MUTANT_PREFIX}{Path(filename).name}>", "exec")
    exec(code, namespace)  # noqa: S102 (see the docstring)
    return namespace[name]


def mutants(lecture: str, cap: int = CAP) -> list[Mutant]:
    """The mutants of every exercise of one lecture ('03'), at most `cap` per exercise."""
    found = []
    for exercise in (e for e in LECTURES[lecture] if not e.open):  # an open task has no one right program
        filename = importlib.import_module(f"tutorials.solutions.{answer_file(exercise)}").__file__
        tree = ast.parse(Path(filename).read_text(encoding="utf-8"))
        names = {e.name for e in LECTURES[lecture] if answer_file(e) == answer_file(exercise)}
        seen, mine = set(), []
        for definition in _definitions(tree, exercise.name, names):
            position = [id(n) for n in tree.body].index(id(definition))
            seen.add((position, ast.unparse(definition)))
            written = _written_by_learner(definition, answer_file(exercise))
            for description, make in _sites(definition, written):
                mutated = copy.deepcopy(definition)  # only this definition changes; the rest is shared
                make(mutated)
                key = (position, ast.unparse(mutated))
                if key in seen:
                    continue  # the same program as the solution or as another mutant
                seen.add(key)
                mine.append((f"{exercise.number} {description}", position, mutated))
        for description, position, mutated in _spread(mine, min(cap, CAPS.get(exercise.number, cap))):
            body = [*tree.body[:position], mutated, *tree.body[position + 1:]]
            answer = _answer(ast.Module(body=body, type_ignores=[]), filename, exercise.name)
            found.append(Mutant(exercise, description, answer))
        for description, source in engine_mutants.written(exercise, filename):  # hand-written: engine_mutants.py
            found.append(Mutant(exercise, f"{exercise.number} {description}",
                                _answer(ast.parse(source), filename, exercise.name)))
        for i, shortcut in enumerate(exercise.shortcuts):  # the library called instead of the learner's own code
            found.append(Mutant(exercise, f"{exercise.number} {exercise.name} library shortcut {i}", shortcut))
    return found


def _written_by_learner(definition: ast.AST, file: str) -> set[int] | None:
    """For a class whose stub gives some methods (a forward, the Tensor's operators), the ids of the nodes in the
    methods the stub leaves to the learner (those that raise NotImplementedError): a mistake is made only where
    the learner writes; none for a helper function the stub gives whole. None (every node) otherwise."""
    stub = ast.parse((Path(__file__).resolve().parent / f"{file}.py").read_text(encoding="utf-8"))
    if isinstance(definition, ast.FunctionDef):  # a helper the stub gives whole (the engine's erf) is not mutated
        given = [n for n in stub.body if isinstance(n, ast.FunctionDef) and n.name == definition.name]
        return set() if given and "NotImplementedError" not in ast.unparse(given[0]) else None
    if not isinstance(definition, ast.ClassDef):
        return None
    blank = {node.name for cls in stub.body if isinstance(cls, ast.ClassDef) and cls.name == definition.name
             for node in cls.body if isinstance(node, ast.FunctionDef)
             and any(isinstance(n, ast.Raise) and "NotImplementedError" in ast.unparse(n) for n in ast.walk(node))}
    methods = [node for node in definition.body if isinstance(node, ast.FunctionDef)]
    if not blank or len(blank) == len(methods):
        return None
    return {id(n) for method in methods if method.name in blank for n in ast.walk(method)}


def _spread(mine: list[tuple[str, int, ast.AST]], most: int) -> list[tuple[str, int, ast.AST]]:
    """At most `most` mutants: every one of the rare kinds (steps reordered, < for <=, an axis or a shape counted
    from the front, a bound or a condition dropped), then others evenly spaced."""
    rare = [m for m in mine if any(f" {kind}" in m[0] for kind in ("moved later", "comparison:", "from the front",
                                                                    "bound dropped", "condition dropped"))]
    common = [m for m in mine if m not in rare]
    room = max(0, most - len(rare))
    step = max(1.0, len(common) / room) if room else float("inf")
    chosen = rare[:most] + [common[int(k * step)] for k in range(min(room, len(common)))]
    return sorted(chosen, key=mine.index)


def survivors(lecture: str, cap: int = CAP) -> tuple[int, list[str]]:
    """(how many mutants were made, the descriptions of those the checkers passed) for one lecture."""
    made = mutants(lecture, cap)
    return len(made), [m.description for m in made if grade(m.exercise, m.answer).passed]
