"""A known-item retrieval set being built: documents, each with the summary a
person wrote for it, written out in BEIR format (the part both builders share)."""

import hashlib
import json
import os


class KnownItems:
    def __init__(self):
        self.docs = []
        self.by_summary = {}  # lower-cased summary -> ids of the documents it summarises
        self.shown = {}       # lower-cased summary -> the summary as first written

    def add(self, doc_id, title, text, summary):
        self.docs.append({"_id": doc_id, "title": title, "text": text})
        key = summary.lower()
        self.shown.setdefault(key, summary)
        self.by_summary.setdefault(key, []).append(doc_id)

    def write(self, out, queries, meta):
        """corpus.jsonl, queries.jsonl (a sample of `queries` summaries, ordered by
        sha1, so the same everywhere), qrels/test.tsv and meta.json; returns the
        number of queries written."""
        keys = sorted(self.by_summary, key=lambda s: hashlib.sha1(s.encode()).hexdigest())
        chosen = keys[:queries]
        os.makedirs(os.path.join(out, "qrels"), exist_ok=True)
        with open(os.path.join(out, "corpus.jsonl"), "w", encoding="utf-8") as f:
            for d in self.docs:
                f.write(json.dumps(d, ensure_ascii=False) + "\n")
        with open(os.path.join(out, "queries.jsonl"), "w", encoding="utf-8") as fq, \
                open(os.path.join(out, "qrels", "test.tsv"), "w", encoding="utf-8") as fr:
            fr.write("query-id\tcorpus-id\tscore\n")
            for i, key in enumerate(chosen):
                qid = "q%d" % i
                fq.write(json.dumps({"_id": qid, "text": self.shown[key]}, ensure_ascii=False)
                         + "\n")
                for d in self.by_summary[key]:
                    fr.write("%s\t%s\t1\n" % (qid, d))
        with open(os.path.join(out, "meta.json"), "w") as f:
            json.dump(dict(meta, documents=len(self.docs), queries=len(chosen)), f, indent=1)
        return len(chosen)
