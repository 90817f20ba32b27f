"""Scaling curves: training compute, a power law fitted to loss against compute, and where it crosses a target.

Lecture 07 §5 asks how much compute a GPT needs to pass a counting model. The runs that answer it are made by
tutorials/builders/scaling_runs.py and shipped as JSON (tutorials/records/scaling.json); this file holds the arithmetic:

- **Compute.** A training step on one token costs about three forward passes (forward, then backward twice as
  dear), and a forward pass costs two floating-point operations (a multiply and an add) per weight of every
  matrix product, plus the attention scores and their weighted sum (Kaplan et al. 2020, "Scaling laws for neural
  language models", Table 1):

      C_token = 6 N + 6 n_layer T d,   N = 12 n_layer d^2 + d V,

  where N counts the weights of the matrix products (attention's four d x d, the MLP's two d x 4d, per layer,
  and the output layer's d x V; the embeddings are looked up, not multiplied), T is the context and d the width.
  Biases, LayerNorm, softmax and GELU are a few percent more and left out, as Kaplan leaves them out.
- **The curve.** Per model size, the validation loss against compute C is fitted by

      L(C) = L_inf + A C^(-alpha),

  the loss this size would reach with unlimited data (L_inf) plus a term that shrinks as a power of compute.
  For a fixed L_inf the model is linear in log space, log(L - L_inf) = log A - alpha log C, so `fit_power_law`
  scans L_inf on a grid below the lowest loss seen, solves the rest by least squares, and keeps the L_inf with
  the smallest squared error in L itself.
- **The crossing.** `crossing` inverts the fit: C = (A / (target - L_inf))^(1/alpha), or None when the fitted
  floor L_inf is not below the target (this size never gets there, however long it trains).
- **The confirming run.** The prediction names a GPT (its width) and a training length; `long_run_flags` turns
  them into one `minigpt train` command, run once, far longer than a lecture (tutorials/builders/kneser_ney_run.py
  scores it on the yardstick, writes tutorials/records/kneser_ney_run.json, and ships the trained weights, without
  the optimizer's state, in tutorials/pretrained/kneser_ney/; `load_long_run_gpt` reads them back, so lectures 07
  and 09 score that GPT themselves and compare it window by window with their own Kneser-Ney).
Read next: tutorials/builders/scaling_runs.py, which makes the records, and 07_summary.py §5, which draws them.
"""

from __future__ import annotations

import hashlib
import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

import minigrad as mg
from minigpt.model import GPT, GPTConfig

RECORDS = Path(__file__).resolve().parent / "records"
SCALING = RECORDS / "scaling.json"
# the run that tests the predicted crossing (scored and written by tutorials/builders/kneser_ney_run.py)
LONG_RUN = RECORDS / "kneser_ney_run.json"
# its weights (no optimizer state), its model config and its tokenizer
LONG_RUN_GPT = Path(__file__).resolve().parent / "pretrained" / "kneser_ney"


def matmul_weights(n_layer: int, n_embd: int, vocab_size: int) -> int:
    """N: the weights a token is multiplied by, 12 n_layer d^2 (attention 4 d^2, MLP 8 d^2) + d V (the output)."""
    return 12 * n_layer * n_embd**2 + n_embd * vocab_size


def flops_per_token(n_layer: int, n_embd: int, block_size: int, vocab_size: int) -> float:
    """Training FLOPs per token: C_token = 6 N + 6 n_layer T d (forward 2N + 2 n_layer T d, backward twice that)."""
    return 6.0 * matmul_weights(n_layer, n_embd, vocab_size) + 6.0 * n_layer * block_size * n_embd


@dataclass(frozen=True)
class PowerLaw:
    """L(C) = floor + scale * C^(-alpha), and how well it fits: the root-mean-square error in nats."""

    floor: float  # L_inf
    scale: float  # A
    alpha: float
    rmse: float

    def __call__(self, compute: Any) -> np.ndarray:
        """The fitted loss at `compute` FLOPs (a number or an array)."""
        return self.floor + self.scale * np.asarray(compute, dtype=np.float64) ** -self.alpha


def fit_power_law(compute: Any, loss: Any, floors: int = 400) -> PowerLaw:
    """Least-squares fit of L = L_inf + A C^-alpha to (compute, loss) points (at least 3, compute > 0).

    For each candidate L_inf (a grid from 0 to just below min(loss)), log(L - L_inf) is a straight line in log C,
    fitted by least squares; the candidate whose curve has the smallest squared error in L wins.
    """
    c, y = np.asarray(compute, dtype=np.float64), np.asarray(loss, dtype=np.float64)
    if c.shape != y.shape or c.ndim != 1 or len(c) < 3:
        raise ValueError(f"fit_power_law: need at least 3 (compute, loss) pairs of one dimension, got {c.shape} "
                         f"and {y.shape}")
    if np.any(c <= 0):
        raise ValueError("fit_power_law: compute must be positive")
    log_c = np.log(c)
    best: PowerLaw | None = None
    for floor in np.linspace(0.0, y.min(), floors, endpoint=False):
        slope, intercept = np.polyfit(log_c, np.log(y - floor), 1)
        if slope >= 0:  # a loss that does not fall with compute is not this law
            continue
        law = PowerLaw(float(floor), float(math.exp(intercept)), float(-slope), 0.0)
        rmse = float(np.sqrt(np.mean((law(c) - y) ** 2)))
        if best is None or rmse < best.rmse:
            best = PowerLaw(law.floor, law.scale, law.alpha, rmse)
    if best is None:
        raise ValueError("fit_power_law: the loss does not fall with compute")
    return best


def crossing(law: PowerLaw, target: float) -> float | None:
    """The compute at which the fitted curve reaches `target`, or None if its floor is not below it."""
    if law.floor >= target:
        return None
    return float((law.scale / (target - law.floor)) ** (1.0 / law.alpha))


@dataclass(frozen=True)
class JointLaw:
    """L(N, D) = E + A N^(-alpha) + B D^(-beta): every size's curve from one law (Hoffmann et al. 2022, eq. 2).

    E is the loss no model reaches (the text's own uncertainty), A N^-alpha what a model of N weights lacks however
    long it trains, B D^-beta what D training characters leave unlearnt. For one size, with D = C / C_token, this is
    a `PowerLaw` in compute whose floor and scale come from the shared constants (`for_size`).
    """

    E: float
    A: float
    alpha: float
    B: float
    beta: float
    rmse: float

    def __call__(self, n: Any, d: Any) -> np.ndarray:
        """The fitted loss of a model of `n` weights after `d` training characters (numbers or arrays)."""
        n, d = np.asarray(n, dtype=np.float64), np.asarray(d, dtype=np.float64)
        return self.E + self.A * n**-self.alpha + self.B * d**-self.beta

    def for_size(self, n: float, per_token: float) -> PowerLaw:
        """This law for a model of `n` weights at `per_token` FLOPs a character: L(C) = floor + scale C^-beta."""
        return PowerLaw(self.E + self.A * n**-self.alpha, self.B * per_token**self.beta, self.beta, self.rmse)


EXPONENTS = np.linspace(0.05, 1.5, 59)  # the grid of alpha and beta that fit_joint searches


def fit_joint(n: Any, d: Any, loss: Any, exponents: Any = EXPONENTS) -> JointLaw:
    """Least-squares fit of L = E + A N^-alpha + B D^-beta to points of several sizes at once.

    For each pair (alpha, beta) on the grid `exponents` x `exponents` the law is linear in (E, A, B), solved by least
    squares; pairs that need a negative constant are skipped, and the pair with the smallest error wins. Sharing E
    and the exponents across sizes is what pins each size's floor down: one short curve alone cannot tell a low floor
    from a slow fall (fit_power_law on one run can).
    """
    n, d, y = (np.asarray(v, dtype=np.float64) for v in (n, d, loss))
    if not (n.shape == d.shape == y.shape) or len(y) < 4 or len(np.unique(n)) < 2:
        raise ValueError("fit_joint: need matching arrays of at least 4 points from at least 2 sizes")
    best: JointLaw | None = None
    for alpha in exponents:
        for beta in exponents:
            design = np.stack([np.ones_like(y), n**-alpha, d**-beta], axis=1)
            (e, a, b), *_ = np.linalg.lstsq(design, y, rcond=None)
            if min(e, a, b) < 0:
                continue
            rmse = float(np.sqrt(np.mean((design @ np.array([e, a, b]) - y) ** 2)))
            if best is None or rmse < best.rmse:
                best = JointLaw(float(e), float(a), float(alpha), float(b), float(beta), rmse)
    if best is None:
        raise ValueError("fit_joint: no law with non-negative constants fits these points")
    return best


def cheapest_crossing(law: JointLaw, target: float, n_layer: int, widths: Any, block_size: int,
                      vocab_size: int) -> tuple[float, int] | None:
    """(compute, width) of the cheapest GPT of `n_layer` layers, among `widths`, whose curve reaches `target`."""
    options = []
    for width in widths:
        n, per_token = matmul_weights(n_layer, int(width), vocab_size), flops_per_token(n_layer, int(width),
                                                                                         block_size, vocab_size)
        c = crossing(law.for_size(n, per_token), target)
        if c is not None:
            options.append((c, int(width)))
    return min(options) if options else None


def load_records(path: Path = SCALING) -> dict[str, Any]:
    """The shipped scaling runs (see tutorials/builders/scaling_runs.py for the schema)."""
    return json.loads(Path(path).read_text(encoding="utf-8"))


def fit_run(run: dict[str, Any], skip_tokens: float = 0.0) -> PowerLaw:
    """Fit one recorded run's validation loss against its compute, leaving out the points before `skip_tokens`
    (the first steps, still in warmup, follow no power law)."""
    points = [p for p in run["points"] if p["tokens"] > skip_tokens]
    return fit_power_law([p["flops"] for p in points], [p["val_loss"] for p in points])


def long_run_flags(width: int, iters: int) -> dict[str, int | float]:
    """The predicted crossing as `minigpt train` flags: a 4-layer GPT `width` wide (32 channels a head) trained for
    `iters` steps of 32 windows of 64 characters, with the crossing recipe's learning rate and warmup."""
    return {"n-layer": 4, "n-embd": width, "n-head": width // 32, "block-size": 64, "batch-size": 32, "lr": 0.003,
            "warmup-iters": 100, "max-iters": iters, "eval-interval": 1000}


def long_run_command(width: int, iters: int) -> str:
    """`long_run_flags` as one line to type (add --device cuda on a GPU)."""
    flags = " ".join(f"--{flag} {value}" for flag, value in long_run_flags(width, iters).items())
    return f"python -m minigpt train --out-dir out/kneser-ney {flags}"


def load_long_run() -> dict[str, Any]:
    """The shipped record of the confirming run: its command, machine, time, evaluations and yardstick scores."""
    return json.loads(LONG_RUN.read_text(encoding="utf-8"))


def load_long_run_gpt(folder: Path = LONG_RUN_GPT) -> GPT:
    """The confirming run's GPT, in eval mode, from the weights the course ships, the way a PyTorch user loads a
    state_dict: build the model from its config, then `load_state_dict`. The weights file must be the one the run
    wrote (its SHA-256 is in the record), so a score computed from it is that run's score."""
    weights = folder / "model.safetensors"
    expected = load_long_run()["model_sha256"]
    found = hashlib.sha256(weights.read_bytes()).hexdigest()
    if found != expected:
        raise ValueError(f"{weights}: SHA-256 {found[:16]}..., but the long run recorded in {LONG_RUN.name} wrote "
                         f"{expected[:16]}...: not that run's weights")
    model = GPT(GPTConfig(**json.loads((folder / "config.json").read_text(encoding="utf-8"))))
    model.load_state_dict(mg.load(weights))
    model.eval()
    return model
