#!/usr/bin/env bash
# bench_pretrain.sh TOKENIZER_DIR CORPUS [CONFIGS...] — times `neodb pretrain`
# steps for several model shapes, to choose the default model's depth/width.
# A CONFIG is LAYERSxHIDDENxHEADS (intermediate = 4·hidden, so the FFN width
# is round8(8·hidden/3) as in NeoBERT). Prints tokens/s of steps 2..N (the
# first step pays allocation), tokens per CPU-second (what a dedicated core
# would do, roughly) and the machine load, which matters on a
# shared machine. Uses the first 8,000 lines of CORPUS.
#   env: NEODB (binary), STEPS (default 4), BATCH_TOKENS (4096), SEQ_LEN (128),
#        THREADS (OpenBLAS threads, default 1)
set -euo pipefail
if [[ $# -lt 2 ]]; then sed -n '2,10p' "$0"; exit 2; fi
TOK=$1; CORPUS=$2; shift 2
CONFIGS=("$@")
[[ ${#CONFIGS[@]} -gt 0 ]] || CONFIGS=(4x256x4 6x256x4 4x384x6 6x384x6 8x384x6 4x512x8 6x512x8)
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
NEODB=${NEODB:-$ROOT/build/tools/neodb/neodb}
STEPS=${STEPS:-4}; BATCH_TOKENS=${BATCH_TOKENS:-4096}; SEQ_LEN=${SEQ_LEN:-128}; THREADS=${THREADS:-1}
[[ -f $TOK/tokenizer.model ]] || { echo "bench_pretrain: no $TOK/tokenizer.model" >&2; exit 1; }
[[ -f $CORPUS ]] || { echo "bench_pretrain: no corpus $CORPUS" >&2; exit 1; }
VOCAB=$(wc -l < "$TOK/tokenizer.vocab")
TMP=$(mktemp -d); trap 'rm -rf "$TMP"' EXIT
head -8000 "$CORPUS" > "$TMP/corpus.txt"
echo "# $(date -u +%FT%TZ) $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg), vocab $VOCAB, batch $BATCH_TOKENS tokens, seq $SEQ_LEN, $THREADS threads"
printf '%-10s %12s %14s %14s %12s\n' config enc_params wall_tok_per_s tok_per_cpu_s s_per_step
for cfg in "${CONFIGS[@]}"; do
  IFS=x read -r L C H <<< "$cfg"
  M=$TMP/m_$cfg; mkdir -p "$M"; cp "$TOK/tokenizer.model" "$M/"
  printf '{"model_type":"neobert","hidden_size":%d,"num_hidden_layers":%d,"num_attention_heads":%d,"intermediate_size":%d,"vocab_size":%d,"max_length":512,"pad_token_id":0,"norm_eps":1e-05}\n' \
    "$C" "$L" "$H" $((4 * C)) "$VOCAB" > "$M/config.json"
  "$NEODB" pretrain --model "$M" --corpus "$TMP/corpus.txt" --out "$TMP/o_$cfg" --steps 100 \
    --stop-after "$STEPS" --batch-tokens "$BATCH_TOKENS" --seq-len "$SEQ_LEN" --threads "$THREADS" \
    --checkpoint-dir "$TMP/s_$cfg" --log-every 1000 > "$TMP/log_$cfg" 2>&1 ||
    { echo "bench_pretrain: $cfg failed:"; tail -3 "$TMP/log_$cfg"; continue; }
  params=$(grep -o '[0-9]* encoder' "$TMP/log_$cfg" | cut -d' ' -f1)
  # Wall and CPU throughput over all steps of the run (the final log line),
  # seconds per step from loss.csv skipping step 1 (allocation).
  read -r wall cpu < <(sed -n 's/.*(\([0-9]*\) tok\/s wall), [0-9.]* CPU-s (\([0-9]*\) tok per CPU-s).*/\1 \2/p' "$TMP/log_$cfg")
  awk -F, -v cfg="$cfg" -v p="$params" -v w="$wall" -v c="$cpu" 'NR>1 {s+=$7; n++} END {printf "%-10s %12d %14d %14d %12.2f\n", cfg, p, w, c, s/n}' "$TMP/s_$cfg/loss.csv"
done
