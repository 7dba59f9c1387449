#!/usr/bin/python3
"""SciFact (BEIR) → fine-tuning pairs and full-corpus evaluation inputs.

usage: scifact_pairs.py SCIFACT_DIR OUT_DIR

SCIFACT_DIR holds corpus.jsonl, queries.jsonl, qrels/train.tsv and
qrels/test.tsv (e.g. ../shared/data/scifact). Writes to OUT_DIR:
  train_pairs.jsonl   {"query": claim, "positive": title + " " + text}, one per
                      relevant (claim, abstract) of qrels/train.tsv
  test_pairs.jsonl    the same for qrels/test.tsv (for `neodb eval`; never train
                      on it)
  test_queries.jsonl  BEIR-style {"_id", "text"} of the test claims only
  test_qrels.tsv      BEIR qrels of the test split (header kept)
  corpus.jsonl        the 5,183 abstracts {"_id", "title", "text"} (copy), so
                      OUT_DIR alone is a complete BEIR test-split dataset
Train and test claims are disjoint (checked). The positives are not cut: the
trainer rejects texts longer than its --max-length rather than truncating,
so pick --max-length from the printed token-free word statistics or filter.
Standard library only. The licence of SciFact is CC BY-NC 2.0: outputs are
for evaluation and research, not for redistribution with the model.
"""

import json
import os
import shutil
import sys


def fail(message):
    sys.exit("scifact_pairs: " + message)


def load_jsonl(path):
    rows = []
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                rows.append(json.loads(line))
            except json.JSONDecodeError as e:
                fail("%s:%d: invalid JSON (%s)" % (path, n, e))
    return rows


def load_qrels(path):
    rows = []
    with open(path, encoding="utf-8") as f:
        header = f.readline()
        if not header.startswith("query-id"):
            fail("%s: expected a BEIR header line 'query-id corpus-id score'" % path)
        for n, line in enumerate(f, 2):
            parts = line.rstrip("\n").split("\t")
            if len(parts) != 3:
                fail("%s:%d: expected 3 tab-separated fields" % (path, n))
            if int(parts[2]) > 0:
                rows.append((parts[0], parts[1], int(parts[2])))
    return header, rows


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    data, out = sys.argv[1], sys.argv[2]
    if not os.path.isdir(data):
        fail("SciFact directory %s not found (expected ../shared/data/scifact)" % data)
    for name in ("corpus.jsonl", "queries.jsonl", "qrels/train.tsv", "qrels/test.tsv"):
        if not os.path.isfile(os.path.join(data, name)):
            fail("%s is missing" % os.path.join(data, name))
    corpus = {d["_id"]: d for d in load_jsonl(os.path.join(data, "corpus.jsonl"))}
    queries = {q["_id"]: q["text"] for q in load_jsonl(os.path.join(data, "queries.jsonl"))}
    _, train = load_qrels(os.path.join(data, "qrels", "train.tsv"))
    test_header, test = load_qrels(os.path.join(data, "qrels", "test.tsv"))
    overlap = {q for q, _, _ in train} & {q for q, _, _ in test}
    if overlap:
        fail("train and test share %d claims (e.g. %s)" % (len(overlap), sorted(overlap)[0]))
    for q, d, _ in train + test:
        if q not in queries:
            fail("qrels claim %s is not in queries.jsonl" % q)
        if d not in corpus:
            fail("qrels document %s is not in corpus.jsonl" % d)

    def doc_text(doc_id):
        doc = corpus[doc_id]
        return (doc.get("title", "").strip() + " " + doc.get("text", "").strip()).strip()

    os.makedirs(out, exist_ok=True)
    for name, rows in (("train_pairs.jsonl", train), ("test_pairs.jsonl", test)):
        with open(os.path.join(out, name), "w", encoding="utf-8") as f:
            for q, d, _ in rows:
                f.write(json.dumps({"query": queries[q], "positive": doc_text(d)},
                                   ensure_ascii=False) + "\n")
    test_ids = sorted({q for q, _, _ in test}, key=lambda x: (len(x), x))
    with open(os.path.join(out, "test_queries.jsonl"), "w", encoding="utf-8") as f:
        for q in test_ids:
            f.write(json.dumps({"_id": q, "text": queries[q]}, ensure_ascii=False) + "\n")
    with open(os.path.join(out, "test_qrels.tsv"), "w", encoding="utf-8") as f:
        f.write(test_header)
        for q, d, s in test:
            f.write("%s\t%s\t%d\n" % (q, d, s))
    shutil.copyfile(os.path.join(data, "corpus.jsonl"), os.path.join(out, "corpus.jsonl"))

    words = sorted(len(doc_text(d).split()) for d in corpus)
    print("scifact_pairs: %d train pairs (%d claims), %d test pairs (%d claims), %d documents"
          % (len(train), len({q for q, _, _ in train}), len(test), len(test_ids), len(corpus)))
    print("scifact_pairs: document words median %d, p95 %d, max %d"
          % (words[len(words) // 2], words[int(len(words) * 0.95)], words[-1]))
    print("scifact_pairs: wrote %s" % out)


if __name__ == "__main__":
    main()
