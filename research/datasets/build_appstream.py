#!/usr/bin/python3
"""A known-item retrieval set in BEIR format from Debian's AppStream catalogue.

    research/datasets/build_appstream.py --out DIR [--components FILE] [--queries 500]

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
import html
import os
import re
import sys

import yaml

from known_items import KnownItems


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

    items, seen = KnownItems(), set()
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
        items.add(cid, name, text, summary)

    n = items.write(a.out, a.queries, {"source": os.path.basename(path),
                                       "origin": header.get("Origin"),
                                       "time": str(header.get("Time"))})
    print("appstream: %d documents, %d queries (%s %s)" % (
        len(items.docs), n, header.get("Origin"), header.get("Time")))


if __name__ == "__main__":
    sys.exit(main())
