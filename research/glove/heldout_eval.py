#!/usr/bin/python3
"""Held-out similarity checks of the default model and its GloVe teacher
(issue 21): Spearman correlation between human-written similarity scores and
cosine similarity on research/glove/heldout/words.tsv (52 word pairs) and
sentences.tsv (58 sentence pairs; --sentences heldout/sentences2.tsv for the
second, larger set of 240 pairs, written later without seeing any model's
scores, large enough for the bootstrap to resolve a difference of 0.05;
heldout/sentences3.tsv, 300 pairs in the STS benchmark's three genres
(captions, headlines, forum questions; sentences3.genres.txt), written in
session 15 after the other two had been looked at while choosing models), plus
the dog/puppy/stock-market example. No file is used in any training stage.

usage:
  heldout_eval.py GLOVE.npz [--pc PC.npy] [--model DIR ...] [--neodb BIN]
                  [--sentences FILE] [--bootstrap N]

Rows: "GloVe average" (plain mean of the words' GloVe vectors), "SIF-GloVe"
(the distillation teacher, research/glove/sif.py, with the principal component
PC.npy of its training texts removed when --pc is given), and one row per
--model (`neodb embed --pooling mean --normalize`, cosine).
"""

import argparse
import json
import os
import subprocess
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import sif as sifmod  # noqa: E402

EXAMPLE = ("a dog is running in the park", "a puppy runs across the grass",
           "the stock market fell sharply today")


def fail(msg):
    sys.exit("heldout_eval: " + msg)


def read_pairs(path):
    out = []
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            if not line.strip() or line.startswith("#"):
                continue
            parts = line.rstrip("\n").split("\t")
            if len(parts) != 3:
                fail("%s:%d: expected 'text1<TAB>text2<TAB>score'" % (path, n))
            try:
                out.append((parts[0], parts[1], float(parts[2])))
            except ValueError:
                fail("%s:%d: score %r is not a number" % (path, n, parts[2]))
    if len(out) < 3:
        fail("%s: fewer than 3 pairs" % path)
    return out


def ranks(x):
    x = np.asarray(x, dtype=np.float64)
    order = np.argsort(x, kind="stable")
    r = np.empty(len(x))
    r[order] = np.arange(len(x))
    for v in np.unique(x):  # average ranks of ties
        m = x == v
        r[m] = r[m].mean()
    return r


def spearman(a, b):
    ra, rb = ranks(a), ranks(b)
    ra -= ra.mean()
    rb -= rb.mean()
    return float((ra @ rb) / np.sqrt((ra @ ra) * (rb @ rb)))


def unit(m):
    return m / np.maximum(np.linalg.norm(m, axis=1, keepdims=True), 1e-12)


def neodb_embed(neodb, model, texts, normalize=True, extra=(), dtype=np.float32):
    """Mean-pooled vectors of `texts` from `neodb embed` (one text per line,
    so a text's own line breaks become spaces)."""
    data = "".join(t.replace("\n", " ") + "\n" for t in texts).encode("utf-8")
    cmd = [neodb, "embed", "--model", model, "--pooling", "mean", "--threads", "1"]
    cmd += (["--normalize"] if normalize else []) + list(extra)
    p = subprocess.run(cmd, input=data, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if p.returncode != 0:
        fail("%s failed: %s" % (" ".join(cmd), p.stderr.decode("utf-8", "replace").strip()))
    rows = [json.loads(line)["embedding"] for line in p.stdout.decode("utf-8").splitlines()]
    if len(rows) != len(texts):
        fail("neodb embed returned %d vectors for %d texts" % (len(rows), len(texts)))
    return np.asarray(rows, dtype=dtype)


def glove_average(sif, texts):
    """The plain mean of each text's GloVe word vectors (the issue's baseline)."""
    m = np.zeros((len(texts), sif.dim), dtype=np.float32)
    for r, t in enumerate(texts):
        ids = sif.ids(t)
        if ids:
            m[r] = sif.vectors[ids].mean(0)
    return m


def pair_cosines(embed, pairs):
    a = unit(embed([p[0] for p in pairs]))
    b = unit(embed([p[1] for p in pairs]))
    return (a * b).sum(1)


def example(embed):
    e = unit(embed(list(EXAMPLE)))
    return float(e[0] @ e[1]), float(e[0] @ e[2])


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("glove")
    ap.add_argument("--pc")
    ap.add_argument("--model", action="append", default=[])
    ap.add_argument("--neodb", default=os.path.join(HERE, "..", "..", "build", "tools", "neodb", "neodb"))
    ap.add_argument("--words", default=os.path.join(HERE, "heldout", "words.tsv"))
    ap.add_argument("--sentences", default=os.path.join(HERE, "heldout", "sentences.tsv"))
    ap.add_argument("--bootstrap", type=int, default=0,
                    help="N paired resamples of the sentence pairs: the 95%% interval of each "
                         "embedding's Spearman minus the GloVe average's, and with several "
                         "--model, each later model's minus the first model's")
    a = ap.parse_args()
    words, sents = read_pairs(a.words), read_pairs(a.sentences)
    sif = sifmod.Sif(a.glove)

    if a.pc:
        sif.pc = sifmod.load_pc(a.pc, sif.dim).astype(np.float32)
    rows = [("GloVe average", lambda texts: glove_average(sif, texts)), ("SIF-GloVe" + (" (teacher, PC removed)" if a.pc else ""), sif.embed)]
    for m in a.model:
        rows.append(("model " + m, lambda t, m=m: neodb_embed(a.neodb, m, t)))
    print("| embedding | words Spearman (%d) | sentences Spearman (%d) | dog~puppy | dog~stock market |"
          % (len(words), len(sents)))
    print("|---|---:|---:|---:|---:|")
    word_gold = [p[2] for p in words]
    sent_gold = np.asarray([p[2] for p in sents], dtype=np.float64)
    sent_cosines = []  # per row, kept for --bootstrap (each text embedded once)
    for name, fn in rows:
        ex = example(fn)
        sent_cosines.append(pair_cosines(fn, sents))
        print("| %s | %.3f | %.3f | %.3f | %.3f |" % (name, spearman(pair_cosines(fn, words), word_gold),
                                                      spearman(sent_cosines[-1], sent_gold), ex[0], ex[1]))
        sys.stdout.flush()
    if a.bootstrap > 0:
        names = [name for name, _ in rows]
        bootstrap(names, sent_cosines, sent_gold, a.bootstrap, 0)
        if len(a.model) > 1:  # later models against the first (the models are the last rows)
            bootstrap(names, sent_cosines, sent_gold, a.bootstrap, len(rows) - len(a.model))


def bootstrap(names, cosines, gold, n, base_row):
    """Paired bootstrap over the sentence pairs (seed 1): is each later row's
    Spearman above row base_row's (the GloVe average, or the first --model) by
    more than the pairs' own noise?"""
    base = cosines[base_row]
    rng = np.random.default_rng(1)
    draws = [rng.integers(0, len(gold), len(gold)) for _ in range(n)]
    print("\nsentences, Spearman minus %s's, %d paired resamples:" % (names[base_row], n))
    for name, c in zip(names[base_row + 1:], cosines[base_row + 1:]):
        d = np.asarray([spearman(c[i], gold[i]) - spearman(base[i], gold[i]) for i in draws])
        print("  %s: %+.3f, 95%% interval %+.3f .. %+.3f" % (name, spearman(c, gold) - spearman(base, gold),
                                                          np.percentile(d, 2.5), np.percentile(d, 97.5)))


if __name__ == "__main__":
    main()
