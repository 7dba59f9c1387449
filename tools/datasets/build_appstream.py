#!/usr/bin/python3
"""A known-item retrieval set in BEIR format from Debian's AppStream catalogue.

    tools/datasets/build_appstream.py --out DIR [--components FILE] [--queries 500]

Debian publishes, beside each release's package index, the AppStream
metadata of every desktop application, add-on and font it ships
(dists/<release>/main/dep11/Components-amd64.yml.gz; apt keeps it under
/var/lib/apt/lists after `apt-get update`). Each component with an English
("C") description of at least 20 words is one document: its title is the
component's name, its text the description. Its query is the component's
one-line summary ("Real-time strategy game of ancient warfare"), which is
never part of the document. Components that share a summary are all relevant
to it. Queries are a deterministic sample (sha1 of the summary); meta.json
records the catalogue's origin and time stamp, which fix the set.

Why this set: short everyday queries over software descriptions, a domain
and a style unlike SciFact's claims and the manual pages' API prose.
"""

import argparse
import glob
import gzip
import hashlib
import html
import json
import os
import re
import sys

import yaml


def english(field):
    if isinstance(field, dict):
        return field.get("C") or field.get("en") or ""
    return field or ""


def plain(markup):
    text = re.sub(r"<[^>]+>", " ", markup)
    return " ".join(html.unescape(text).split())


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--components", default="")
    ap.add_argument("--queries", type=int, default=500)
    a = ap.parse_args()
    path = a.components or (sorted(glob.glob(
        "/var/lib/apt/lists/*_debian_dists_*_main_dep11_Components-amd64.yml.gz")) or [""])[0]
    if not os.path.isfile(path):
        sys.exit("build_appstream: no Components-amd64.yml.gz (run apt-get update, or --components)")

    with gzip.open(path, "rt", encoding="utf-8") as f:
        stream = list(yaml.load_all(f, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader)))
    header, components = stream[0], [c for c in stream[1:] if c]

    docs, by_summary, shown, seen = [], {}, {}, set()
    for c in components:
        cid = c.get("ID", "")
        name = english(c.get("Name"))
        summary = " ".join(english(c.get("Summary")).split())
        text = plain(english(c.get("Description")))
        if not cid or cid in seen or len(summary.split()) < 3 or len(text.split()) < 20:
            continue
        if summary.lower() in text.lower():  # the query would be a substring of its answer
            continue
        seen.add(cid)
        docs.append({"_id": cid, "title": name, "text": text})
        shown.setdefault(summary.lower(), summary)
        by_summary.setdefault(summary.lower(), []).append(cid)

    summaries = sorted(by_summary, key=lambda s: hashlib.sha1(s.encode()).hexdigest())
    chosen = summaries[:a.queries]
    os.makedirs(os.path.join(a.out, "qrels"), exist_ok=True)
    with open(os.path.join(a.out, "corpus.jsonl"), "w", encoding="utf-8") as f:
        for d in docs:
            f.write(json.dumps(d, ensure_ascii=False) + "\n")
    with open(os.path.join(a.out, "queries.jsonl"), "w", encoding="utf-8") as fq, \
            open(os.path.join(a.out, "qrels", "test.tsv"), "w", encoding="utf-8") as fr:
        fr.write("query-id\tcorpus-id\tscore\n")
        for i, s in enumerate(chosen):
            qid = "q%d" % i
            fq.write(json.dumps({"_id": qid, "text": shown[s]}, ensure_ascii=False) + "\n")
            for d in by_summary[s]:
                fr.write("%s\t%s\t1\n" % (qid, d))
    with open(os.path.join(a.out, "meta.json"), "w") as f:
        json.dump({"source": os.path.basename(path), "origin": header.get("Origin"),
                   "time": str(header.get("Time")), "documents": len(docs),
                   "queries": len(chosen)}, f, indent=1)
    print("appstream: %d documents, %d queries (%s %s)" % (
        len(docs), len(chosen), header.get("Origin"), header.get("Time")))


if __name__ == "__main__":
    sys.exit(main())
