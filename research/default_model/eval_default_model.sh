#!/usr/bin/env bash
# eval_default_model.sh — the default model's evaluation on SciFact (BEIR test
# split: 300 claims ranked against all 5,183 abstracts; nDCG@10, Recall@10),
# in one command, with the model card's four rows:
#   1. BM25 (research/corpus/beir_eval.py bm25; ≈ 0.665 nDCG@10 published)
#   2. MODEL zero-shot (never trained on SciFact)
#   3. a random-initialised model of MODEL's shape and tokenizer
#   4. MODEL after `neodb finetune` on SciFact's train claims (disjoint from
#      the test claims; research/default_model/scifact_pairs.py)
#
#   research/default_model/eval_default_model.sh [MODEL_DIR] [OUT_DIR] [SCIFACT_DIR]
#
# MODEL_DIR defaults to encoder/default_model, OUT_DIR to run/eval_default_model
# (git-ignored; holds the random and fine-tuned models and the run files),
# SCIFACT_DIR to ../shared/data/scifact. Writes OUT_DIR/results.md and prints it.
# Environment: NEODB (binary, default build/tools/neodb/neodb), SCIFACT_STEPS
# (150), SCIFACT_BATCH (32), SCIFACT_LR (2e-4) for row 4; THREADS (1).
# Rows 2 and 3 run beside row 4 (two processes, one thread each).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
MODEL=${1:-$ROOT/encoder/default_model}
OUT=${2:-$ROOT/run/eval_default_model}
SCIFACT=${3:-$ROOT/../shared/data/scifact}
NEODB=${NEODB:-$ROOT/build/tools/neodb/neodb}
PY=/usr/bin/python3
[[ -f $MODEL/config.json ]] || { echo "eval_default_model: $MODEL is not a checkpoint directory" >&2; exit 1; }
[[ -d $SCIFACT ]] || { echo "eval_default_model: SciFact not found at $SCIFACT" >&2; exit 1; }
[[ -x $NEODB ]] || { echo "eval_default_model: $NEODB not found; build it first (tools/build.sh)" >&2; exit 1; }
mkdir -p "$OUT"
log() { echo "[eval_default_model $(date -u +%H:%M:%S)] $*" >&2; }
row() {  # row NAME MODEL_DIR: one dense row
  "$PY" "$ROOT/research/corpus/beir_eval.py" dense "$SCIFACT" --model "$2" --neodb "$NEODB" \
    --name "$1" --run-out "$OUT/run_$(echo "$1" | tr -c 'a-z0-9\n' '_').tsv"
}

t0=$SECONDS
# Rows 2 and 3 embed while row 4 fine-tunes: separate processes use both
# vCPUs (one thread each).
log "BM25, zero-shot and random-init rows in the background; fine-tuning on SciFact train"
"$PY" "$ROOT/research/corpus/beir_eval.py" bm25 "$SCIFACT" --name "BM25 (stdlib, k1 0.9, b 0.4)" > "$OUT/row1.tsv"
row "default model, zero-shot" "$MODEL" > "$OUT/row2.tsv" &
zero_shot=$!
"$NEODB" model init --like "$MODEL" --seed 1 --out "$OUT/random_init" --force >&2
{ row "random init, same shape" "$OUT/random_init" > "$OUT/row3.tsv"; } &
random_row=$!
"$PY" "$ROOT/research/default_model/scifact_pairs.py" --data "$SCIFACT" --out "$OUT/scifact_pairs" >&2
rm -rf "$OUT/scifact_finetuned" "$OUT/scifact_finetuned.work"
"$NEODB" finetune --model "$MODEL" --train "$OUT/scifact_pairs/train.jsonl" \
  --out "$OUT/scifact_finetuned" --steps "${SCIFACT_STEPS:-150}" --batch-size "${SCIFACT_BATCH:-32}" \
  --lr "${SCIFACT_LR:-2e-4}" --warmup 15 --seed 1 --threads "${THREADS:-1}" > "$OUT/scifact_finetune.log" 2>&1 ||
  { tail -20 "$OUT/scifact_finetune.log" >&2; exit 1; }
row "default model + finetune on SciFact train (${SCIFACT_STEPS:-150} steps)" "$OUT/scifact_finetuned" > "$OUT/row4.tsv"
wait "$zero_shot" || { echo "eval_default_model: the zero-shot row failed" >&2; exit 1; }
wait "$random_row" || { echo "eval_default_model: the random-init row failed" >&2; exit 1; }
cat "$OUT/row1.tsv" "$OUT/row2.tsv" "$OUT/row3.tsv" "$OUT/row4.tsv" > "$OUT/rows.tsv"

{
  echo "| model | nDCG@10 | Recall@10 |"
  echo "|---|---:|---:|"
  awk -F'\t' '{ sub(/nDCG@10 /, "", $5); sub(/Recall@10 /, "", $6); printf "| %s | %s | %s |\n", $1, $5, $6 }' "$OUT/rows.tsv"
  echo
  echo "SciFact test split: $(awk -F'\t' 'NR==1{print $3", "$4}' "$OUT/rows.tsv"); $((SECONDS - t0)) s."
} > "$OUT/results.md"
cat "$OUT/results.md"
