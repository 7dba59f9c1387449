#!/usr/bin/env bash
# Runs the CUDA encoder bench and the PyTorch baseline on the same random
# weights and prints one table. Run on the GPU machine from the repo root:
#   bash bench/run_gpu_bench.sh [OUTDIR]
# Environment: BENCH (path of cuda_encoder_bench, default
# .device-carry/bin/cuda_encoder_bench), PYTHON (default python3),
# LENGTHS (default 128,512,1024,2048,4096,8192), TOKENS (default 16384),
# BENCH_ARGS (extra cuda_encoder_bench flags, e.g. "--chunk 4096"),
# TORCH_ARGS (extra torch_baseline.py flags, e.g. "--f32_residual").
set -euo pipefail
OUTDIR=${1:-${OUT:-/tmp}/neodb_bench}
BENCH=${BENCH:-.device-carry/bin/cuda_encoder_bench}
PYTHON=${PYTHON:-python3}
LENGTHS=${LENGTHS:-128,512,1024,2048,4096,8192}
TOKENS=${TOKENS:-16384}
BENCH_ARGS=${BENCH_ARGS:-}
TORCH_ARGS=${TORCH_ARGS:-}
HERE=$(cd "$(dirname "$0")" && pwd)
CKPT=/tmp/neodb_bench_ckpt
mkdir -p "$OUTDIR" "$CKPT/dump"

"$BENCH" --lengths "$LENGTHS" --tokens "$TOKENS" --write_checkpoint "$CKPT" \
  --dump "$CKPT/dump" --json "$OUTDIR/neodb.json" $BENCH_ARGS 2>&1 | tee "$OUTDIR/neodb.txt"
PYTHONUNBUFFERED=1 "$PYTHON" "$HERE/torch_baseline.py" --checkpoint "$CKPT" --lengths "$LENGTHS" \
  --tokens "$TOKENS" --compare "$CKPT/dump" --json "$OUTDIR/torch.json" $TORCH_ARGS 2>&1 |
  tee "$OUTDIR/torch.txt"

"$PYTHON" - "$OUTDIR/neodb.json" "$OUTDIR/torch.json" <<'PY' | tee "$OUTDIR/table.md"
import json, sys
ours = json.load(open(sys.argv[1]))
theirs = json.load(open(sys.argv[2]))
t = {r["length"]: r["tokens_per_s"] for r in theirs["rows"]}
print(f"device: {ours['device']}, {ours['date']}; measured cuBLASLt BF16 GEMM "
      f"{ours['gemm_bf16_tflops']:.0f} TFLOP/s; neodb {ours['dtype']}, slices {ours['chunk']}, attention {ours['attention']}; "
      f"torch {theirs['torch']} (residual {theirs['residual']}); "
      f"torch F32 vs neodb CUDA worst cosine {theirs.get('compare_worst_cosine', float('nan')):.6f}")
print()
print("| length | batch | neodb CUDA tokens/s | % of BF16 GEMM | PyTorch SDPA tokens/s | speed-up |")
print("|---:|---:|---:|---:|---:|---:|")
for r in ours["rows"]:
    pt = t.get(r["length"])
    up = f"{r['tokens_per_s'] / pt:.2f}x" if pt else "n/a"
    pts = f"{pt:,.0f}" if pt else "OOM/n.a."
    print(f"| {r['length']} | {r['batch']} | {r['tokens_per_s']:,.0f} | "
          f"{100 * r['gemm_fraction']:.1f}% | {pts} | {up} |")
PY
