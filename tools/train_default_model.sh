#!/usr/bin/env bash
# train_default_model.sh — trains neodb's default model end to end with neodb's
# own tools (issue 6). See tools/train_default_model.md for the measured times
# and the chosen configuration.
#
#   tools/train_default_model.sh [WORK_DIR]        (default: run/default_model)
#
# Stages, each skipped when its output exists (delete the output to redo it;
# FORCE_STAGES="tokenizer pretrain" redoes those), each timed into
# WORK_DIR/TIMES.tsv:
#   gather     tools/corpus/gather.sh        → WORK/corpus/mlm.txt, PROVENANCE.md
#   pairs      tools/corpus/make_pairs.py    → WORK/corpus/pairs/general_pairs.jsonl
#   tokenizer  neodb tokenizer train         → WORK/tokenizer/tokenizer.model
#   init       config.json + tokenizer       → WORK/init/ (weights drawn by pretrain)
#   pretrain   neodb pretrain (MLM)          → WORK/pretrained/   (resumable: --resume)
#   finetune   neodb finetune (general pairs)→ WORK/finetuned/
#   eval       SciFact test split            → WORK/eval/
#   card       model card                    → WORK/model/ (what would ship as
#                                               encoder/default_model/)
# Stages that need a command this build does not have yet stop the script
# with a message naming the missing piece (pretrain needs `neodb pretrain`).
#
# Settings (environment): NEODB (binary, default build/tools/neodb/neodb),
# SCIFACT (default ../shared/data/scifact), and the model/training knobs
# below. Defaults are the configuration recommended in train_default_model.md.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
WORK=${1:-$ROOT/run/default_model}
mkdir -p "$WORK"
WORK=$(cd "$WORK" && pwd)
NEODB=${NEODB:-$ROOT/build/tools/neodb/neodb}
SCIFACT=${SCIFACT:-$ROOT/../shared/data/scifact}
PY=/usr/bin/python3

# Tokenizer.
VOCAB_SIZE=${VOCAB_SIZE:-12000}
TOKENIZER_TYPE=${TOKENIZER_TYPE:-unigram}
# Architecture (NeoBERT's, scaled down).
LAYERS=${LAYERS:-6}
HIDDEN=${HIDDEN:-256}
HEADS=${HEADS:-4}
INTERMEDIATE=${INTERMEDIATE:-1024}  # FFN width = round8(2·1024/3) = 688
MAX_LENGTH=${MAX_LENGTH:-512}
# Pre-training.
PRETRAIN_STEPS=${PRETRAIN_STEPS:-5000}  # × 8192 tokens ≈ 2 epochs of the 20M-token corpus
PRETRAIN_BATCH_TOKENS=${PRETRAIN_BATCH_TOKENS:-8192}
PRETRAIN_SEQ_LEN=${PRETRAIN_SEQ_LEN:-128}
PRETRAIN_LR=${PRETRAIN_LR:-1e-3}
PRETRAIN_CHECKPOINT_EVERY=${PRETRAIN_CHECKPOINT_EVERY:-50}
THREADS=${THREADS:-0}  # OpenBLAS threads for pretrain/finetune (0 = OpenBLAS default)
SEED=${SEED:-1}
# Contrastive fine-tuning on general pairs.
FINETUNE_STEPS=${FINETUNE_STEPS:-2000}
FINETUNE_BATCH=${FINETUNE_BATCH:-64}
FINETUNE_LR=${FINETUNE_LR:-1e-4}
FINETUNE_MAX_LENGTH=${FINETUNE_MAX_LENGTH:-128}

TIMES=$WORK/TIMES.tsv
[[ -f $TIMES ]] || printf 'stage\tseconds\tfinished_utc\n' > "$TIMES"

log() { echo "[train_default_model $(date -u +%H:%M:%S)] $*"; }
die() { echo "train_default_model: $*" >&2; exit 1; }
forced() { [[ " ${FORCE_STAGES:-} " == *" $1 "* ]]; }
# run_stage NAME OUTPUT FUNCTION: runs FUNCTION unless OUTPUT exists.
run_stage() {
  local name=$1 output=$2 fn=$3
  if [[ -e $output ]] && ! forced "$name"; then
    log "$name: $output exists, skipped"
    return
  fi
  log "$name: start"
  local t0=$SECONDS
  "$fn"
  printf '%s\t%d\t%s\n' "$name" $((SECONDS - t0)) "$(date -u +%FT%TZ)" >> "$TIMES"
  log "$name: done in $((SECONDS - t0)) s"
}
need_cmd() {
  [[ -x $NEODB ]] || die "$NEODB not found; build it: cmake --build build --target neodb"
  # A known subcommand's help starts its usage line with the subcommand path.
  "$NEODB" "$@" --help 2>&1 | grep -qF " $* [OPTIONS]" ||
    die "this neodb has no \`neodb $*\` yet (see tools/train_default_model.md, 'What remains')"
}

stage_gather() { "$ROOT/tools/corpus/gather.sh" "$WORK/corpus"; }

stage_pairs() { "$PY" "$ROOT/tools/corpus/make_pairs.py" "$WORK/corpus" --seed "$SEED"; }

stage_tokenizer() {
  need_cmd tokenizer train
  "$NEODB" tokenizer train --input "$WORK/corpus/mlm.txt" --vocab-size "$VOCAB_SIZE" \
    --model-type "$TOKENIZER_TYPE" --out "$WORK/tokenizer" --force \
    --input-sentence-size 2000000 --threads "$(nproc)"
}

stage_init() {
  rm -rf "$WORK/init.tmp" && mkdir -p "$WORK/init.tmp"
  cp "$WORK/tokenizer/tokenizer.model" "$WORK/tokenizer/special_tokens_map.json" "$WORK/init.tmp/"
  # config.json as Hugging Face writes NeoBERT's; `neodb pretrain` draws the
  # weights (uniform ±0.02, norms at 1, NEOBERT.md §6) when the directory has
  # no model.safetensors.
  cat > "$WORK/init.tmp/config.json" <<EOF
{
  "architectures": ["NeoBERTLMHead"],
  "model_type": "neobert",
  "hidden_size": $HIDDEN,
  "num_hidden_layers": $LAYERS,
  "num_attention_heads": $HEADS,
  "intermediate_size": $INTERMEDIATE,
  "vocab_size": $VOCAB_SIZE,
  "max_length": $MAX_LENGTH,
  "pad_token_id": 0,
  "norm_eps": 1e-05,
  "torch_dtype": "float32"
}
EOF
  mv "$WORK/init.tmp" "$WORK/init"
}

stage_pretrain() {
  need_cmd pretrain
  local resume=()
  [[ -f $WORK/pretrain_state/checkpoint/state.json ]] && resume=(--resume)
  "$NEODB" pretrain --model "$WORK/init" --corpus "$WORK/corpus/mlm.txt" \
    --out "$WORK/pretrained" --checkpoint-dir "$WORK/pretrain_state" \
    --steps "$PRETRAIN_STEPS" --batch-tokens "$PRETRAIN_BATCH_TOKENS" \
    --seq-len "$PRETRAIN_SEQ_LEN" --lr "$PRETRAIN_LR" --seed "$SEED" --threads "$THREADS" \
    --checkpoint-every "$PRETRAIN_CHECKPOINT_EVERY" --force "${resume[@]}" \
    2>&1 | tee -a "$WORK/pretrain.log"
}

stage_finetune() {
  need_cmd finetune
  local resume=()
  [[ -d $WORK/finetune_state ]] && resume=(--resume)
  "$NEODB" finetune --model "$WORK/pretrained" \
    --train "$WORK/corpus/pairs/general_pairs.jsonl" \
    --eval "$WORK/corpus/pairs/general_eval.jsonl" --out "$WORK/finetuned" \
    --steps "$FINETUNE_STEPS" --batch-size "$FINETUNE_BATCH" --lr "$FINETUNE_LR" \
    --warmup 100 --max-length "$FINETUNE_MAX_LENGTH" --seed "$SEED" \
    --checkpoint-every 200 --threads "$THREADS" "${resume[@]}" 2>&1 | tee -a "$WORK/finetune.log"
}

stage_eval() {
  [[ -d $SCIFACT ]] || die "SciFact not found at $SCIFACT (set SCIFACT=...)"
  need_cmd eval
  rm -rf "$WORK/eval.tmp" && mkdir -p "$WORK/eval.tmp"
  "$PY" "$ROOT/tools/corpus/scifact_pairs.py" "$SCIFACT" "$WORK/eval.tmp/scifact"
  # The reference row: BM25 over the whole corpus (0.6611 nDCG@10 when measured).
  "$PY" "$ROOT/tools/corpus/beir_eval.py" bm25 "$SCIFACT" | tee "$WORK/eval.tmp/bm25.txt"
  # TODO(next session): full-corpus BEIR nDCG@10 / Recall@10 over all 5,183
  # abstracts (neodb eval on the pair file ranks the pair pool only), plus the
  # random-init, SciFact-fine-tuned and BM25 rows of the model card.
  "$NEODB" eval --model "$WORK/finetuned" --pairs "$WORK/eval.tmp/scifact/test_pairs.jsonl" \
    --max-length "$MAX_LENGTH" 2>&1 | tee "$WORK/eval.tmp/finetuned_pairs.txt"
  mv "$WORK/eval.tmp" "$WORK/eval"
}

stage_card() {
  rm -rf "$WORK/model.tmp" && cp -r "$WORK/finetuned" "$WORK/model.tmp"
  {
    echo "# neodb default model"
    echo
    echo "NeoBERT architecture: $LAYERS layers, hidden $HIDDEN, $HEADS heads, intermediate"
    echo "$INTERMEDIATE, vocabulary $VOCAB_SIZE ($TOKENIZER_TYPE SentencePiece, case-folded),"
    echo "max length $MAX_LENGTH. Trained by tools/train_default_model.sh."
    echo
    echo "## Data"
    sed '1,2d' "$WORK/corpus/PROVENANCE.md"
    echo
    cat "$WORK/corpus/pairs/COUNTS.md" | sed '1s/^# /### /'
    echo
    echo "## Training time per stage (seconds)"
    echo
    echo '```'
    cat "$TIMES"
    echo '```'
    echo
    echo "## Evaluation (SciFact test split)"
    echo
    echo '```'
    cat "$WORK/eval/"*.txt
    echo '```'
  } > "$WORK/model.tmp/README.md"
  rm -rf "$WORK/model" && mv "$WORK/model.tmp" "$WORK/model"
}

run_stage gather "$WORK/corpus/mlm.txt" stage_gather
run_stage pairs "$WORK/corpus/pairs/general_pairs.jsonl" stage_pairs
run_stage tokenizer "$WORK/tokenizer/tokenizer.model" stage_tokenizer
run_stage init "$WORK/init/config.json" stage_init
run_stage pretrain "$WORK/pretrained/model.safetensors" stage_pretrain
run_stage finetune "$WORK/finetuned/model.safetensors" stage_finetune
run_stage eval "$WORK/eval" stage_eval
run_stage card "$WORK/model/README.md" stage_card
log "done; times in $TIMES"
