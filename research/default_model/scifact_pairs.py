#!/usr/bin/python3
"""Builds contrastive pair files from BEIR SciFact (../shared/data/scifact).

train.jsonl: one line per relevant (claim, abstract) of qrels/train.tsv:
  {"query": claim, "positive": title + ". " + abstract}
eval.jsonl: one line per relevant pair of qrels/test.tsv (claims disjoint from
train), each with --distractors random non-relevant abstracts as
"negatives", so the evaluation pool is the test positives plus distractors;
with --full-corpus the pool is the whole corpus instead (BEIR's setting).
Abstracts are cut to --max-words words so that they fit the model length.
Deterministic for a --seed. --with-ids writes {"query", "positive_id"} lines
instead (the corpus _id; no texts, no distractors): pairs for `neodb adapt`.
"""
import argparse
import json
import os
import random
import sys


def load_jsonl(path):
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def load_qrels(path):
    rows = []
    with open(path, encoding="utf-8") as f:
        next(f)  # header
        for line in f:
            parts = line.strip().split("\t")
            if len(parts) == 3 and int(parts[2]) > 0:
                rows.append((parts[0], parts[1]))
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--data", required=True, help="the scifact directory")
    ap.add_argument("--out", required=True, help="directory for train.jsonl and eval.jsonl")
    ap.add_argument("--max-words", type=int, default=120)
    ap.add_argument("--distractors", type=int, default=3)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--with-ids", action="store_true",
                    help="add \"positive_id\" (the corpus _id) to every line: the form "
                         "`neodb adapt` reads against a collection ingested with those ids")
    ap.add_argument("--full-corpus", action="store_true",
                    help="eval pool = the whole corpus (BEIR setting): the first eval line "
                         "carries every other abstract as a negative")
    args = ap.parse_args()
    for name in ("corpus.jsonl", "queries.jsonl", "qrels/train.tsv", "qrels/test.tsv"):
        if not os.path.exists(os.path.join(args.data, name)):
            sys.exit(f"scifact_pairs: {os.path.join(args.data, name)} is missing")
    corpus = {d["_id"]: d for d in load_jsonl(os.path.join(args.data, "corpus.jsonl"))}
    queries = {q["_id"]: q["text"] for q in load_jsonl(os.path.join(args.data, "queries.jsonl"))}

    def doc_text(doc_id):
        d = corpus[doc_id]
        words = (d["title"].strip().rstrip(".") + ". " + d["text"].strip()).split()
        return " ".join(words[: args.max_words])

    rng = random.Random(args.seed)
    doc_ids = sorted(corpus)
    os.makedirs(args.out, exist_ok=True)
    counts = {}
    for split, fname in (("train", "train.jsonl"), ("test", "eval.jsonl")):
        qrels = load_qrels(os.path.join(args.data, "qrels", split + ".tsv"))
        relevant = {}
        for q, d in qrels:
            relevant.setdefault(q, set()).add(d)
        n = 0
        first = True
        with open(os.path.join(args.out, fname), "w", encoding="utf-8") as f:
            for q, d in qrels:
                if q not in queries or d not in corpus:
                    continue
                rec = {"query": queries[q], "positive": doc_text(d)}
                if args.with_ids:
                    rec = {"query": queries[q], "positive_id": d}
                elif split == "test" and args.full_corpus:
                    if first:
                        rec["negatives"] = [doc_text(x) for x in doc_ids if x not in relevant[q]]
                elif split == "test" and args.distractors > 0:
                    negs = []
                    while len(negs) < args.distractors:
                        cand = rng.choice(doc_ids)
                        if cand not in relevant[q]:
                            negs.append(doc_text(cand))
                    rec["negatives"] = negs
                f.write(json.dumps(rec, ensure_ascii=False) + "\n")
                first = False
                n += 1
        counts[split] = n
    print(f"scifact_pairs: {counts['train']} train pairs, {counts['test']} eval pairs -> {args.out}")


if __name__ == "__main__":
    main()
