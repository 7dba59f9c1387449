#!/usr/bin/python3
"""BEIR-style retrieval metrics over a whole corpus, and a BM25 reference run.

usage:
  beir_eval.py bm25 DATASET_DIR [--split test] [--run-out RUN.tsv]
                    [--stem | --analyzer english|simple|none]
  beir_eval.py score DATASET_DIR RUN.tsv [--split test]
  beir_eval.py dense DATASET_DIR --model MODEL_DIR [--neodb BIN] [--name NAME]
                     [--run-out RUN.tsv]

DATASET_DIR is BEIR layout (corpus.jsonl, queries.jsonl, qrels/SPLIT.tsv), e.g.
../shared/data/scifact (test_queries.jsonl / test_qrels.tsv are accepted too).
A run file is TSV `query-id  doc-id  score` (any order; the top 100 per query
by score are used). Prints nDCG@10 and Recall@10 (BEIR's definitions: graded
gains from qrels, log2 discount, ideal DCG from the qrels; recall = relevant
found in the top 10 / relevant, averaged over the split's queries; a query
with no retrieved relevant document scores 0).

bm25 uses Okapi BM25 (k1 = 0.9, b = 0.4, Lucene's idf) over lower-cased
alphanumeric tokens minus English stop words; --stem adds a crude suffix
stripper. It lands near, not exactly on, the published Elasticsearch
figure (≈ 0.665 nDCG@10 on SciFact), whose analyzer differs.
--analyzer instead tokenises exactly as neodb's keyword index does
(index/keyword/: NFKC + case folding, Unicode segmentation with joined
hyphen compounds and CJK pairs, possessive 's stripped, Lucene's 33 stop
words, Snowball English via PyStemmer, query-term frequency weighting), so
its run is the Python reference for research/keyword_eval (python3-stemmer is
needed for english).
dense embeds every document ("title text") and query with `neodb embed
--normalize --chunk` (mean pooling; a text over the model's max_length is
split into windows whose vectors are averaged, never cut) and ranks the whole
corpus by cosine similarity (numpy). bm25 and score use the standard library
only.
"""

import argparse
import collections
import json
import math
import os
import re
import sys

STOP = set("""a an and are as at be but by for if in into is it no not of on or such that the
their then there these they this to was will with from has have had were which who whom what
when where why how all any both each few more most other some than too very can just should
now we our you your he she his her its them i me my""".split())
_TOKEN = re.compile(r"[a-z0-9]+")


def fail(msg):
    sys.exit("beir_eval: " + msg)


def stem(w):
    for suffix in ("ational", "ization", "fulness", "ousness", "iveness", "ingly", "ations",
                   "ation", "ments", "ment", "ness", "ities", "ity", "ing", "edly", "ed", "ies",
                   "es", "s", "ly"):
        if w.endswith(suffix) and len(w) - len(suffix) >= 3:
            return w[: -len(suffix)]
    return w


def tokens(text, use_stem):
    out = [t for t in _TOKEN.findall(text.lower()) if t not in STOP]
    return [stem(t) for t in out] if use_stem else out


def read_qrels(path):
    """query -> {doc: grade > 0}. Rows are "query doc grade" (BEIR) or "query 0
    doc grade" (TREC), tab- or space-separated. A first row whose grade is not
    an integer is a header ("query-id corpus-id score") and is skipped; any
    other malformed row is an error, never a silently dropped judgment."""
    qrels = collections.defaultdict(dict)
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            fields = line.split()
            if not fields:
                continue
            if len(fields) == 4:
                fields = [fields[0], fields[2], fields[3]]
            if len(fields) != 3:
                fail("%s line %d: expected 'query doc grade', got %r" % (path, number, line.rstrip("\n")))
            q, d, s = fields
            try:
                grade = int(s)
            except ValueError:
                if number == 1:
                    continue  # header
                fail("%s line %d: grade %r is not an integer" % (path, number, s))
            if grade > 0:
                qrels[q][d] = grade
    return qrels


# --- neodb's keyword analyzers (index/keyword/), mirrored --------------------

LUCENE_STOP = set("""a an and are as at be but by for if in into is it no not of on or such that
the their then there these they this to was will with""".split())
MAX_TERM_BYTES = 128
# Default_Ignorable_Code_Point (utf8proc's IGNORE option removes these).
_IGNORABLE = [(0xAD, 0xAD), (0x34F, 0x34F), (0x61C, 0x61C), (0x115F, 0x1160), (0x17B4, 0x17B5),
              (0x180B, 0x180F), (0x200B, 0x200F), (0x202A, 0x202E), (0x2060, 0x206F),
              (0x3164, 0x3164), (0xFE00, 0xFE0F), (0xFEFF, 0xFEFF), (0xFFA0, 0xFFA0),
              (0xFFF0, 0xFFF8), (0x1BCA0, 0x1BCA3), (0x1D173, 0x1D17A), (0xE0000, 0xE0FFF)]
_IDEOGRAPHIC = [(0x3040, 0x30FF), (0x31F0, 0x31FF), (0x3400, 0x4DBF), (0x4E00, 0x9FFF),
                (0xF900, 0xFAFF), (0x20000, 0x3134F)]
SEP, LETTER, DIGIT, MARK, IDEO, JOINER, APOS, NUMSEP, IGNORE = range(9)


def _in(ranges, c):
    return any(lo <= c <= hi for lo, hi in ranges)


def char_class(ch):
    import unicodedata
    c = ord(ch)
    if ch in "'\u2019":
        return APOS
    if ch in ".,":
        return NUMSEP
    if c == 0x200B:
        return SEP
    cat = unicodedata.category(ch)
    if cat[0] == "L":
        return IDEO if _in(_IDEOGRAPHIC, c) else LETTER
    if cat[0] == "M":
        return MARK
    if cat[0] == "N":
        return DIGIT
    if cat in ("Pc", "Pd"):
        return JOINER
    if cat == "Cf":
        return IGNORE
    return SEP


def _bounded(word, ch):
    """word + ch if it stays within MAX_TERM_BYTES of UTF-8."""
    return word + ch if len((word + ch).encode("utf-8")) <= MAX_TERM_BYTES else word


def segment(text):
    """(term, overlap) pairs, as index/keyword/segmenter.cc."""
    cls = [char_class(ch) for ch in text]
    n, i, out = len(text), 0, []
    at = lambda j: cls[j] if j < n else SEP
    while i < n:
        if cls[i] == IDEO:
            prev = None
            while i < n and cls[i] == IDEO:
                out.append((text[i], False))
                if prev is not None:
                    out.append((prev + text[i], True))
                prev = text[i]
                i += 1
        elif cls[i] in (LETTER, DIGIT):
            parts = []
            while True:
                word, last = "", SEP
                while i < n:
                    c = cls[i]
                    if c in (LETTER, DIGIT):
                        word, last = _bounded(word, text[i]), c
                    elif c == MARK:
                        word = _bounded(word, text[i])
                    elif c == IGNORE:
                        pass
                    elif c == APOS and last == LETTER and at(i + 1) == LETTER:
                        word = _bounded(word, "'")
                    elif c == NUMSEP and last == DIGIT and at(i + 1) == DIGIT:
                        word = _bounded(word, text[i])
                    else:
                        break
                    i += 1
                parts.append(word)
                if at(i) == JOINER and at(i + 1) in (LETTER, DIGIT):
                    i += 1
                    continue
                break
            out.extend((p, False) for p in parts)
            if len(parts) > 1:
                joined = ""
                for ch in "".join(parts):
                    joined = _bounded(joined, ch)
                out.append((joined, True))
        else:
            i += 1
    return out


_STEMMER = None


def analyze(text, kind):
    """(term, overlap) pairs for analyzer `kind` (english, simple, none)."""
    import unicodedata
    global _STEMMER
    if kind != "none":
        text = unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", text).casefold())
        text = "".join(ch for ch in text if not _in(_IGNORABLE, ord(ch)))
    toks = segment(text)
    if kind != "english":
        return toks
    if _STEMMER is None:
        try:
            import Stemmer
        except ImportError:
            fail("--analyzer english needs PyStemmer (apt-get install python3-stemmer)")
        _STEMMER = Stemmer.Stemmer("english")
    toks = [(t[:-2] if len(t) > 2 and t.endswith("'s") else t, o) for t, o in toks]
    return [(_STEMMER.stemWord(t), o) for t, o in toks if o or t not in LUCENE_STOP]


def bm25_analyzer_run(corpus, queries, kind, k1=0.9, b=0.4):
    """BM25 exactly as index/keyword/keyword_index.h defines it."""
    ids = list(corpus)
    postings = collections.defaultdict(list)
    lengths = []
    for i, doc_id in enumerate(ids):
        toks = analyze(corpus[doc_id], kind)
        lengths.append(sum(1 for _, o in toks if not o))
        for term, tf in collections.Counter(t for t, _ in toks).items():
            postings[term].append((i, tf))
    n = len(ids)
    avg = sum(lengths) / max(1, n) or 1.0
    run = {}
    for q, text in queries.items():
        scores = collections.defaultdict(float)
        for term, qtf in collections.Counter(t for t, _ in analyze(text, kind)).items():
            plist = postings.get(term)
            if not plist:
                continue
            idf = math.log(1 + (n - len(plist) + 0.5) / (len(plist) + 0.5))
            for i, tf in plist:
                scores[i] += qtf * idf * tf * (k1 + 1) / (tf + k1 * (1 - b + b * lengths[i] / avg))
        top = sorted(scores.items(), key=lambda x: (-x[1], x[0]))[:100]
        run[q] = {ids[i]: s for i, s in top}
    return run


def load_dataset(d, split):
    corpus_path = os.path.join(d, "corpus.jsonl")
    queries_path = os.path.join(d, "queries.jsonl")
    if not os.path.exists(queries_path) and os.path.exists(os.path.join(d, split + "_queries.jsonl")):
        queries_path = os.path.join(d, split + "_queries.jsonl")
    qrels_path = os.path.join(d, "qrels", split + ".tsv")
    if not os.path.exists(qrels_path):
        qrels_path = os.path.join(d, split + "_qrels.tsv")
    for p in (corpus_path, queries_path, qrels_path):
        if not os.path.exists(p):
            fail("%s is missing (expected a BEIR dataset directory)" % p)
    with open(corpus_path, encoding="utf-8") as f:
        corpus = {}
        for line in f:
            if line.strip():
                doc = json.loads(line)
                corpus[doc["_id"]] = (doc.get("title", "") + " " + doc.get("text", "")).strip()
    with open(queries_path, encoding="utf-8") as f:
        queries = {q["_id"]: q["text"] for q in map(json.loads, filter(str.strip, f))}
    qrels = read_qrels(qrels_path)
    return corpus, {q: queries[q] for q in qrels}, dict(qrels)


def bm25_run(corpus, queries, use_stem, k1=0.9, b=0.4):
    ids = list(corpus)
    postings = collections.defaultdict(list)
    lengths = []
    for i, doc_id in enumerate(ids):
        toks = tokens(corpus[doc_id], use_stem)
        lengths.append(len(toks))
        for term, tf in collections.Counter(toks).items():
            postings[term].append((i, tf))
    n = len(ids)
    avg = sum(lengths) / max(1, n)
    run = {}
    for q, text in queries.items():
        scores = collections.defaultdict(float)
        for term in set(tokens(text, use_stem)):
            plist = postings.get(term)
            if not plist:
                continue
            idf = math.log(1 + (n - len(plist) + 0.5) / (len(plist) + 0.5))
            for i, tf in plist:
                scores[i] += idf * tf * (k1 + 1) / (tf + k1 * (1 - b + b * lengths[i] / avg))
        top = sorted(scores.items(), key=lambda x: -x[1])[:100]
        run[q] = {ids[i]: s for i, s in top}
    return run


def load_run(path):
    run = collections.defaultdict(dict)
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            parts = line.split()
            if len(parts) != 3:
                fail("%s:%d: expected 'query-id doc-id score'" % (path, n))
            try:
                run[parts[0]][parts[1]] = float(parts[2])
            except ValueError:
                fail("%s:%d: score %r is not a number" % (path, n, parts[2]))
    return run


def metrics(run, qrels, k=10):
    ndcg = recall = 0.0
    for q, rel in qrels.items():
        ranked = sorted(run.get(q, {}).items(), key=lambda x: -x[1])[:k]
        dcg = sum((2 ** rel.get(d, 0) - 1) / math.log2(i + 2) for i, (d, _) in enumerate(ranked))
        ideal = sorted(rel.values(), reverse=True)[:k]
        idcg = sum((2 ** g - 1) / math.log2(i + 2) for i, g in enumerate(ideal))
        ndcg += dcg / idcg if idcg > 0 else 0.0
        recall += sum(1 for d, _ in ranked if d in rel) / len(rel)
    return ndcg / len(qrels), recall / len(qrels)


def embed(neodb, model, texts, precision="f32"):
    """Unit vectors [len(texts), dim] from `neodb embed` (one text per line)."""
    import subprocess
    import numpy as np
    data = "".join(t.replace("\n", " ").replace("\r", " ") + "\n" for t in texts).encode("utf-8")
    cmd = [neodb, "embed", "--model", model, "--normalize", "--chunk", "--threads", "1",
           "--precision", precision]
    proc = subprocess.run(cmd, input=data, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if proc.returncode != 0:
        fail("%s failed: %s" % (" ".join(cmd), proc.stderr.decode("utf-8", "replace").strip()))
    rows = [json.loads(line)["embedding"] for line in proc.stdout.decode("utf-8").splitlines()]
    if len(rows) != len(texts):
        fail("neodb embed returned %d vectors for %d texts" % (len(rows), len(texts)))
    return np.asarray(rows, dtype=np.float32)


def dense_run(corpus, queries, neodb, model, precision="f32"):
    import numpy as np
    doc_ids, q_ids = list(corpus), list(queries)
    docs = embed(neodb, model, [corpus[d] for d in doc_ids], precision)
    qs = embed(neodb, model, [queries[q] for q in q_ids], precision)
    scores = qs @ docs.T
    run = {}
    for i, q in enumerate(q_ids):
        top = np.argsort(-scores[i], kind="stable")[:100]
        run[q] = {doc_ids[j]: float(scores[i, j]) for j in top}
    return run


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("mode", choices=["bm25", "score", "dense"])
    ap.add_argument("dataset")
    ap.add_argument("run", nargs="?")
    ap.add_argument("--split", default="test")
    ap.add_argument("--run-out")
    ap.add_argument("--stem", action="store_true")
    ap.add_argument("--analyzer", choices=["english", "simple", "none"],
                    help="bm25: tokenise as neodb's keyword index does (see above)")
    ap.add_argument("--model", help="dense: the checkpoint directory")
    ap.add_argument("--neodb", default="build/tools/neodb/neodb", help="dense: the neodb binary")
    ap.add_argument("--precision", default="f32", choices=["f32", "bf16", "int8"],
                    help="dense: the encoder's matmul precision (neodb embed --precision)")
    ap.add_argument("--name", help="the row's name in the output (default: the mode or run file)")
    args = ap.parse_args()
    if not os.path.isdir(args.dataset):
        fail("dataset directory %s not found" % args.dataset)
    corpus, queries, qrels = load_dataset(args.dataset, args.split)
    if args.mode == "bm25":
        if args.analyzer:
            run = bm25_analyzer_run(corpus, queries, args.analyzer)
            name = "bm25 analyzer=" + args.analyzer
        else:
            run = bm25_run(corpus, queries, args.stem)
            name = "bm25" + ("+stem" if args.stem else "")
    elif args.mode == "dense":
        if not args.model:
            fail("dense needs --model DIR")
        run = dense_run(corpus, queries, args.neodb, args.model, args.precision)
        name = "dense " + args.model
    else:
        if not args.run:
            fail("score needs a RUN.tsv")
        run = load_run(args.run)
        name = os.path.basename(args.run)
    if args.run_out and args.mode != "score":  # score reads its run; bm25 and dense make one
        with open(args.run_out, "w") as f:
            for q, docs in run.items():
                for d, score in docs.items():
                    f.write("%s\t%s\t%.6f\n" % (q, d, score))
    if args.name:
        name = args.name
    ndcg, recall = metrics(run, qrels)
    print("%s\t%s\t%d queries\t%d docs\tnDCG@10 %.4f\tRecall@10 %.4f"
          % (name, args.split, len(qrels), len(corpus), ndcg, recall))


if __name__ == "__main__":
    main()
