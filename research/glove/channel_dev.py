#!/usr/bin/python3
"""Development measurements of a GloVe-channel model (glove_channel.py) that
choose its --lam without touching any reported set (issue 21).

usage:
  channel_dev.py MODEL_DIR --old-dims C [--scifact DIR] [--teacher FILE.jsonl]
                 [--sentences FILE.tsv] [--glove GLOVE.npz --pc PC.npy] [--lams 0.5,1,2,...] [--neodb BIN]

MODEL_DIR must have been written with --lam 1: its mean-pooled vector is
[old channel (C dims), new channel], and the new channel is linear in the
final norm's weight, so [old, lam · new] is exactly what the model built with
--lam lam would give. One embedding pass scores every lam.

Dev sets (neither is reported anywhere):
  * SciFact *train* claims against a 2,000-abstract slice (their relevant
    abstracts + others drawn with seed 1, each cut to 150 words), nDCG@10 —
    the development set of research/default_model/train_default_model.md;
  * --teacher: 2,000 random pairs of sif.py teacher texts (corpus paragraphs
    and pair texts, seed 1): Spearman between the model's cosine and the
    SIF-GloVe teacher's cosine — how close the channel is to its teacher;
  * --sentences: a development sentence-similarity file (text1<TAB>text2<TAB>
    score, e.g. research/glove/dev/sentences_dev.tsv, written apart from the
    held-out sets): Spearman between the model's cosine and the scores.
"""

import argparse
import json
import os
import random
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "corpus"))
import beir_eval  # noqa: E402
import heldout_eval  # noqa: E402
import sif as sifmod  # noqa: E402


def fail(msg):
    sys.exit("channel_dev: " + msg)


def embed_raw(neodb, model, texts):
    """Mean-pooled, not normalised: [old, new] stays linear in lam."""
    return heldout_eval.neodb_embed(neodb, model, texts, normalize=False, extra=["--chunk"],
                                    dtype=np.float64)


def combine(m, c, lam):
    """lam = None: the old channel alone; lam = inf: the new channel alone."""
    if lam is None:
        return heldout_eval.unit(m[:, :c])
    if lam == float("inf"):
        return heldout_eval.unit(m[:, c:])
    return heldout_eval.unit(np.concatenate([m[:, :c], lam * m[:, c:]], axis=1))


def scifact_dev(d):
    corpus, queries, qrels = beir_eval.load_dataset(d, "train")
    rng = random.Random(1)
    relevant = sorted({doc for rel in qrels.values() for doc in rel})
    others = sorted(set(corpus) - set(relevant))
    rng.shuffle(others)
    ids = relevant + others[: max(0, 2000 - len(relevant))]
    docs = {i: " ".join(corpus[i].split()[:150]) for i in ids}
    return docs, queries, qrels


def ndcg(q, dvec, q_ids, doc_ids, qrels):
    s = q @ dvec.T
    run = {}
    for i, qi in enumerate(q_ids):
        top = np.argsort(-s[i], kind="stable")[:100]
        run[qi] = {doc_ids[j]: float(s[i, j]) for j in top}
    return beir_eval.metrics(run, qrels)[0]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("model")
    ap.add_argument("--old-dims", type=int, required=True)
    ap.add_argument("--scifact")
    ap.add_argument("--teacher")
    ap.add_argument("--sentences")
    ap.add_argument("--glove")
    ap.add_argument("--pc")
    ap.add_argument("--lams", default="0.25,0.5,1,2,4,8,16")
    ap.add_argument("--neodb", default=os.path.join(HERE, "..", "..", "build", "tools", "neodb", "neodb"))
    a = ap.parse_args()
    lams = [None] + [float(x) for x in a.lams.split(",")] + [float("inf")]
    names = ["old channel"] + ["lam %g" % x for x in lams[1:-1]] + ["new channel alone"]
    cols, table = [], {n: [] for n in names}
    sif = None
    if a.glove:
        sif = sifmod.Sif(a.glove)
        if a.pc:
            sif.pc = sifmod.load_pc(a.pc, sif.dim).astype(np.float32)
        table["SIF-GloVe teacher"] = []
    if a.scifact:
        docs, queries, qrels = scifact_dev(a.scifact)
        doc_ids, q_ids = list(docs), list(queries)
        dm = embed_raw(a.neodb, a.model, [docs[i] for i in doc_ids])
        qm = embed_raw(a.neodb, a.model, [queries[i] for i in q_ids])
        cols.append("SciFact dev nDCG@10 (%d claims, %d abstracts)" % (len(q_ids), len(doc_ids)))
        for n, lam in zip(names, lams):
            table[n].append(ndcg(combine(qm, a.old_dims, lam), combine(dm, a.old_dims, lam),
                                 q_ids, doc_ids, qrels))
        if sif:
            table["SIF-GloVe teacher"].append(ndcg(
                heldout_eval.unit(sif.embed([queries[i] for i in q_ids])),
                heldout_eval.unit(sif.embed([docs[i] for i in doc_ids])), q_ids, doc_ids, qrels))
    if a.teacher:
        with open(a.teacher, encoding="utf-8") as f:
            rows = [json.loads(line) for line in f]
        rng = random.Random(1)
        pairs = [tuple(rng.sample(range(len(rows)), 2)) for _ in range(2000)]
        used = sorted({i for p in pairs for i in p})
        pos = {i: k for k, i in enumerate(used)}
        m = embed_raw(a.neodb, a.model, [rows[i]["text"] for i in used])
        tv = heldout_eval.unit(np.asarray([rows[i]["vector"] for i in used]))
        ia = [pos[p[0]] for p in pairs]
        ib = [pos[p[1]] for p in pairs]
        teacher_cos = (tv[ia] * tv[ib]).sum(1)
        cols.append("Spearman vs teacher cosine (2,000 corpus pairs)")
        for n, lam in zip(names, lams):
            e = combine(m, a.old_dims, lam)
            table[n].append(heldout_eval.spearman((e[ia] * e[ib]).sum(1), teacher_cos))
        if sif:
            table["SIF-GloVe teacher"].append(1.0)
    if a.sentences:
        pairs = heldout_eval.read_pairs(a.sentences)
        gold = [p[2] for p in pairs]
        m = embed_raw(a.neodb, a.model, [p[0] for p in pairs] + [p[1] for p in pairs])
        cols.append("sentences Spearman (%d pairs)" % len(pairs))
        for n, lam in zip(names, lams):
            e = combine(m, a.old_dims, lam)
            table[n].append(heldout_eval.spearman((e[: len(pairs)] * e[len(pairs):]).sum(1), gold))
        if sif:
            table["SIF-GloVe teacher"].append(
                heldout_eval.spearman(heldout_eval.pair_cosines(sif.embed, pairs), gold))
    print("| %s | %s |" % ("embedding", " | ".join(cols)))
    print("|---|%s" % ("---:|" * len(cols)))
    for n, vals in table.items():
        print("| %s | %s |" % (n, " | ".join("%.4f" % v for v in vals)))


if __name__ == "__main__":
    main()
