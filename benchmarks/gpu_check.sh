#!/usr/bin/env bash
# The GPU check: one prepared run, under 8 minutes, on a machine with an NVIDIA GPU, CuPy and PyTorch CUDA.
#
#   bash benchmarks/gpu_check.sh [LOG_DIR]        # or LOG_DIR=... bash benchmarks/gpu_check.sh
#   DRY_RUN=1 bash benchmarks/gpu_check.sh        # on a CPU: check the script, skip the GPU parts
#
# It prints the versions and the GPU, runs the test suite with the cuda parametrisation enabled, trains
# minigpt on the GPU for a few hundred steps of the nanoGPT Shakespeare configuration (6 layers, 6 heads,
# 384 wide, context 256, batch 64) side by side with the PyTorch reference on the same batches, measures
# generation with and without the KV cache, and checks that `minigpt train --device cuda` converges.
# Everything it prints also goes to LOG_DIR/gpu_check.log.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1

log_dir=${1:-${LOG_DIR:-gpu_check_logs}}
mkdir -p "$log_dir"
log="$log_dir/gpu_check.log"
: >"$log"
dry_run=${DRY_RUN:-0}
python=${PYTHON:-python3}
# Use the checkout itself, without installing (the GPU machine may have no network for pip).
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
export PYTHONUNBUFFERED=1 MINIGRAD_HYPOTHESIS_PROFILE=ci MPLBACKEND=Agg

say() { echo "$*" | tee -a "$log"; }
run() {  # run a phase with a time limit, keep going if it fails, remember the failure
    local limit=$1 name=$2
    shift 2
    say ""
    say "== $name"
    local start=$SECONDS
    timeout "$limit" "$@" 2>&1 | tee -a "$log"
    local status=${PIPESTATUS[0]}
    say "-- $name: exit $status in $((SECONDS - start)) s"
    [ "$status" = 0 ] || failures="$failures $name"
}
failures=""

say "== versions"
"$python" - <<'EOF' 2>&1 | tee -a "$log"
import platform, numpy
print("python", platform.python_version(), "numpy", numpy.__version__)
for name in ("cupy", "torch"):
    try:
        module = __import__(name)
        print(name, module.__version__)
    except ImportError:
        print(name, "not installed")
import minigrad as mg
print("minigrad sees a GPU:", mg.cuda.is_available())
EOF
command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv | tee -a "$log"

if [ "$dry_run" = 1 ]; then
    say "DRY_RUN=1: GPU phases skipped; checking that each phase's command parses"
    run 600 "tests (collection only)" "$python" -m pytest -q --collect-only tests
    run 120 "train/generate benchmark (help)" "$python" benchmarks/vs_torch.py --help
    run 120 "minigpt train (help)" "$python" -m minigpt train --help
    say ""
    say "dry run finished; failures:${failures:- none}"
    [ -z "$failures" ]
    exit
fi

# The whole suite, cuda parametrisation included (it is enabled whenever CuPy sees a GPU).
workers=$("$python" -c "import xdist" 2>/dev/null && echo "-n 8" || echo "")
# shellcheck disable=SC2086
run 240 "tests on the GPU" "$python" -m pytest -q -x $workers -m "gpu or not gpu" tests

# Training: minigpt/CuPy against PyTorch CUDA, same weights, same batches, interleaved.
run 150 "training step, nanoGPT Shakespeare config" \
    "$python" benchmarks/vs_torch.py --device cuda --rows gpt-gpu,gpt-small --repeats 30 --warmup 5

# Generation with and without the KV cache.
run 60 "generation" "$python" benchmarks/vs_torch.py --device cuda --rows generate --repeats 10

# Does a real run converge on the GPU? A few hundred iterations on the built-in corpus.
run 120 "minigpt train --device cuda" "$python" -m minigpt train --device cuda --out-dir "$log_dir/run" \
    --max-iters 300 --eval-interval 100 --n-layer 6 --n-head 6 --n-embd 384 --block-size 256 --batch-size 64 \
    --lr 1e-3

say ""
say "gpu check finished; failures:${failures:- none}"
[ -z "$failures" ]
