#!/usr/bin/env bash
# Fine-tunes a checkpoint on SciFact's train claims and reports retrieval
# metrics (nDCG@10 among them) on the held-out test claims before and after.
#
#   research/default_model/finetune_scifact.sh MODEL_DIR OUT_DIR [DATA_DIR] [-- extra finetune flags]
#
# MODEL_DIR: a checkpoint directory (config.json, model.safetensors, vocab.txt).
# DATA_DIR:  BEIR SciFact, default ../shared/data/scifact.
# Settings come from the environment: STEPS (300), BATCH (32), LR (5e-5),
# WARMUP (30), MAXLEN (512), TRAIN_LAYERS (0 = all), NEODB (the binary);
# FULL_CORPUS=1 evaluates against the whole 5,183-abstract corpus.
# By default the eval pool is every relevant test abstract plus 3 random
# distractors per test pair (research/default_model/scifact_pairs.py), not the full corpus, so
# its numbers are not comparable with BEIR's published nDCG@10.
set -euo pipefail
if [[ $# -lt 2 ]]; then
  sed -n '2,14p' "$0"
  exit 2
fi
MODEL=$1
OUT=$2
shift 2
DATA=../shared/data/scifact
if [[ $# -gt 0 && $1 != "--" ]]; then DATA=$1; shift; fi
[[ $# -gt 0 && $1 == "--" ]] && shift
[[ -d $DATA ]] || { echo "finetune_scifact: data directory $DATA not found" >&2; exit 1; }
[[ -f $MODEL/config.json ]] || { echo "finetune_scifact: $MODEL is not a checkpoint directory" >&2; exit 1; }
NEODB=${NEODB:-build/tools/neodb/neodb}
PAIRS=$(mktemp -d)
trap 'rm -rf "$PAIRS"' EXIT
/usr/bin/python3 "$(dirname "$0")/scifact_pairs.py" --data "$DATA" --out "$PAIRS" \
  ${FULL_CORPUS:+--full-corpus}
"$NEODB" finetune --model "$MODEL" --train "$PAIRS/train.jsonl" --eval "$PAIRS/eval.jsonl" \
  --out "$OUT" --steps "${STEPS:-300}" --batch-size "${BATCH:-32}" --lr "${LR:-5e-5}" \
  --warmup "${WARMUP:-30}" --max-length "${MAXLEN:-512}" --train-layers "${TRAIN_LAYERS:-0}" \
  --checkpoint-every 50 "$@"
