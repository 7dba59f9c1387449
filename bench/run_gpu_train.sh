#!/usr/bin/env bash
# Issue 50's proof on a GPU machine: training on CUDA (encoder/train/cuda/).
# The steps, in order:
#   1. the device (nvidia-smi), and --device resolution with the device hidden
#      (CUDA_VISIBLE_DEVICES=-1: "no CUDA device to train on", never the CPU);
#   2. cuda_train_kernels_test: each training kernel and the training GEMM
#      against its CPU body (F32, relative error <= 1e-5);
#   3. cuda_train_test: NeoBERT (2 layers; full size, 28 x 768) and BERT
#      gradients of every parameter tensor against the CPU's F64 ones
#      (<= 1e-4; 1e-3 at full size), two backward passes bit-identical, and
#      4 trainer steps on CUDA against the CPU's losses;
#   4. the CLI: `neodb finetune` and `neodb pretrain --device cuda` on a small
#      random NeoBERT (model init --preset small: 4 heads of 64);
#   5. fine-tuning throughput: train_bench --device cuda, full NeoBERT, the
#      whole contrastive step (GradCache: forward without activations, InfoNCE,
#      recompute + backward per chunk, clipping, AdamW) at 128 and 512 tokens;
#   6. inference throughput on the same device and weights' shape:
#      cuda_encoder_bench in F32 (training's precision) and BF16 (serving's);
#   7. one table of the two, in OUTDIR/table.md.
# Expected device time: about 5 minutes (step 3's full-size F64 CPU
# reference and step 4 are the longest); every step has its own timeout.
#
#   bash bench/run_gpu_train.sh [OUTDIR]            on the GPU machine, from the
#       repo root, with .device-carry/train.tar.gz (bench/pack_gpu_train.sh);
#       OUTDIR defaults to $OUT/train (the device tool's $OUT).
#   bash bench/run_gpu_train.sh --dry-run [BUILD]   here, without a GPU: prints
#       every step, then runs it from BUILD (default build) on the CPU — the
#       GPU tests skip with "no CUDA device", the throughput steps run a tiny
#       model on the CPU, and a step that cannot run without a GPU says so.
set -uo pipefail
cd "$(dirname "$0")/.."
DRY=0
if [[ "${1:-}" == "--dry-run" ]]; then
  DRY=1
  BUILD=${2:-build}
  OUTDIR=$(mktemp -d /tmp/neodb_train_dry.XXXXXX)
  BIN_TESTS=$BUILD/tests/encoder
  BIN_BENCH=$BUILD/bench
  NEODB=$BUILD/tools/neodb/neodb
else
  OUTDIR=${1:-${OUT:-/tmp}/train}
  mkdir -p /tmp/neodb_train
  [[ -f .device-carry/train.tar.gz ]] ||
    { echo "missing .device-carry/train.tar.gz: run bench/pack_gpu_train.sh" >&2; exit 1; }
  tar -C /tmp/neodb_train -xzf .device-carry/train.tar.gz
  BIN_TESTS=/tmp/neodb_train/train/bin
  BIN_BENCH=/tmp/neodb_train/train/bin
  NEODB=/tmp/neodb_train/train/bin/neodb
  LT=$(ls /usr/local/cuda/lib64/libcublasLt.so.13 2>/dev/null ||
       find / -name 'libcublasLt.so.13' -not -path '/proc/*' 2>/dev/null | head -1)
  export LD_LIBRARY_PATH=/tmp/neodb_train/train/lib:$(dirname "${LT:-/nonexistent/x}")
  export OPENBLAS_NUM_THREADS=${OPENBLAS_NUM_THREADS:-16}
fi
mkdir -p "$OUTDIR"
LOG=$OUTDIR/steps.txt
: > "$LOG"
FAILED=0

# step NAME TIMEOUT_S COMMAND...: prints the step, runs it (output to the log
# and the terminal), and records a failure without stopping the rest.
step() {
  local name=$1 limit=$2
  shift 2
  echo "=== step: $name (timeout ${limit}s)" | tee -a "$LOG"
  echo "\$ $*" | tee -a "$LOG"
  local start=$SECONDS
  timeout "$limit" "$@" 2>&1 | tee -a "$LOG"
  local rc=${PIPESTATUS[0]}
  echo "=== $name: rc $rc, $((SECONDS - start)) s" | tee -a "$LOG"
  [[ $rc -eq 0 ]] || FAILED=1
}

# A GPU test step: on the device a skipped test is a failure (the point is
# to run them); in a dry run the skips ("no CUDA device") are what we expect.
gpu_test() {
  local before
  before=$(wc -l < "$LOG")
  step "$@"
  if [[ $DRY -eq 0 ]] && tail -n +"$((before + 1))" "$LOG" | grep -q '^\[  SKIPPED \]'; then
    echo "=== $1: tests were skipped on the GPU machine: counted as a failure" | tee -a "$LOG"
    FAILED=1
  fi
}

# What runs only where there is a GPU: in a dry run, printed, not run.
gpu_step() {
  if [[ $DRY -eq 1 ]]; then
    echo "=== step: $1 (needs a GPU; dry run prints it only)" | tee -a "$LOG"
    shift 2
    echo "\$ $*" | tee -a "$LOG"
    return
  fi
  step "$@"
}

if [[ $DRY -eq 1 ]]; then
  SEQS=32 PAIRS=4 CHUNK=4 PRESET=tiny DEVICE=cpu STEPS=2
else
  SEQS=128,512 PAIRS=16 CHUNK=16 PRESET=full DEVICE=cuda STEPS=3
fi

gpu_step "device" 30 nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm \
  --format=csv
echo "cublasLt: ${LT:-(dry run)}" | tee -a "$LOG"
step "--device without a visible device" 60 env CUDA_VISIBLE_DEVICES=-1 \
  "$BIN_TESTS/train_device_test"
gpu_test "training kernels vs their CPU bodies" 300 "$BIN_TESTS/cuda_train_kernels_test"
gpu_test "model gradients vs the CPU's F64" 600 "$BIN_TESTS/cuda_train_test"
# The CLI on a small random model, with the data it needs written here.
CLI=$(mktemp -d /tmp/neodb_train_cli.XXXXXX)
python3 - "$CLI" <<'PY'
import sys
d = sys.argv[1]
words = ["red", "green", "blue", "apple", "sky", "grass", "fruit", "color", "the", "is", "and"]
special = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
open(f"{d}/vocab.txt", "w").write("\n".join(special + [chr(c) for c in range(97, 123)] + words) + "\n")
pairs = [("red fruit", "apple"), ("blue", "sky"), ("green", "grass"), ("color", "red green blue")]
with open(f"{d}/pairs.jsonl", "w") as f:
    for q, p in pairs:
        f.write(f'{{"query": "{q}", "positive": "{p}"}}\n')
open(f"{d}/corpus.txt", "w").write("the sky is blue and the grass is green\nred fruit\n" * 20)
PY
step "neodb model init (preset small: 4 heads of 64)" 60 "$NEODB" model init --preset small \
  --vocab "$CLI/vocab.txt" --out "$CLI/model"
step "neodb finetune --device $DEVICE" 120 "$NEODB" finetune --model "$CLI/model" \
  --train "$CLI/pairs.jsonl" --out "$CLI/finetuned" --steps 3 --batch-size 2 --device "$DEVICE"
step "neodb pretrain --device $DEVICE" 120 "$NEODB" pretrain --model "$CLI/model" \
  --corpus "$CLI/corpus.txt" --out "$CLI/pretrained" --steps 2 --batch-tokens 32 --seq-len 16 \
  --micro-batch-tokens 32 --device "$DEVICE"

step "fine-tune throughput ($DEVICE)" 400 "$BIN_BENCH/train_bench" --preset "$PRESET" \
  --seq "$SEQS" --pairs "$PAIRS" --chunk-size "$CHUNK" --steps "$STEPS" --train-layers 0 \
  --device "$DEVICE"
gpu_step "inference throughput (F32)" 200 "$BIN_BENCH/cuda_encoder_bench" --lengths "$SEQS" \
  --tokens 16384 --min_seconds 2 --dtype f32 --json "$OUTDIR/infer_f32.json"
gpu_step "inference throughput (BF16)" 200 "$BIN_BENCH/cuda_encoder_bench" --lengths "$SEQS" \
  --tokens 16384 --min_seconds 2 --dtype bf16 --json "$OUTDIR/infer_bf16.json"

# The table: training rows from train_bench, inference from the JSON files.
python3 - "$LOG" "$OUTDIR" <<'PY' | tee "$OUTDIR/table.md"
import json, os, re, sys
log, outdir = open(sys.argv[1]).read(), sys.argv[2]
infer = {}
for dtype in ("f32", "bf16"):
    path = os.path.join(outdir, f"infer_{dtype}.json")
    if os.path.exists(path):
        for r in json.load(open(path))["rows"]:
            infer[(dtype, r["length"])] = r["tokens_per_s"]
print("| seq | pairs/step | fine-tune tokens/s | inference F32 tokens/s | inference BF16 tokens/s | fine-tune / F32 inference |")
print("|---:|---:|---:|---:|---:|---:|")
for m in re.finditer(r"^\| (\d+) \| (\d+) \| [^|]+ \| ([\d.]+) \| ([\d.]+) \|", log, re.M):
    seq, pairs, tps = int(m.group(1)), int(m.group(2)), float(m.group(4))
    f32, bf16 = infer.get(("f32", seq)), infer.get(("bf16", seq))
    fmt = lambda v: f"{v:,.0f}" if v else "n/a"
    ratio = f"{tps / f32:.2f}" if f32 else "n/a"
    print(f"| {seq} | {pairs} | {tps:,.0f} | {fmt(f32)} | {fmt(bf16)} | {ratio} |")
PY
echo "log: $LOG; table: $OUTDIR/table.md"
if [[ $FAILED -ne 0 ]]; then echo "SOME STEPS FAILED" | tee -a "$LOG"; exit 1; fi
echo "ALL STEPS PASSED" | tee -a "$LOG"
