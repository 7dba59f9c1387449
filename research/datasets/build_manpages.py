#!/usr/bin/python3
"""A known-item retrieval set in BEIR format from Debian's Linux manual pages.

    research/datasets/build_manpages.py --out DIR [--packages manpages,manpages-dev]
                                     [--queries 500] [--words 300]

Every page the packages install (dpkg -L; `.so` redirects skipped) is one
document: its title is the page name and section ("open(2)"), its text the
DESCRIPTION section, cut to --words words. Its query is the page's NAME
summary ("open and possibly create a file"), which the page's text
paraphrases but rarely repeats, and is never part of the document. Pages
that share a summary are all relevant to it. Queries are a deterministic
sample (sha1 of the summary), so the set is the same on every machine with
the same package versions, recorded in meta.json.

Why this set: it is technical prose about a domain far from SciFact's
biomedical abstracts, its queries are short descriptions a user would type,
and it comes from a Debian package, with no download at run time.
"""

import argparse
import gzip
import os
import re
import subprocess
import sys

from known_items import KnownItems

ESCAPES = [
    (re.compile(r"\\f(\[[^\]]*\]|\(..|.)"), ""),  # font changes
    (re.compile(r"\\s[+-]?\d"), ""),               # size changes
    (re.compile(r"\\\(em|\\\(en"), " - "),
    (re.compile(r"\\\((aq|cq|oq)"), "'"),
    (re.compile(r"\\\((dq|lq|rq)"), '"'),
    (re.compile(r"\\\(.."), ""),
    (re.compile(r"\\\[[^\]]*\]"), ""),
    (re.compile(r"\\[-e]"), lambda m: "-" if m.group(0) == "\\-" else "\\"),
    (re.compile(r"\\[&|^~0 ]"), " "),
    (re.compile(r"\\\*\(..|\\\*."), ""),
    (re.compile(r'\\"'), ""),
]


def unescape(text):
    for pattern, repl in ESCAPES:
        text = pattern.sub(repl, text)
    return text


def page_lines(path):
    with gzip.open(path, "rt", encoding="utf-8", errors="replace") as f:
        return f.read().splitlines()


def sections(lines):
    """{section name: [text lines]} from groff man source."""
    out, name = {}, None
    for line in lines:
        if line.startswith(".SH"):
            name = line[3:].strip().strip('"').upper()
            out.setdefault(name, [])
            continue
        if name is None or line.startswith(".\\\"") or line.startswith("'\\\""):
            continue
        if line.startswith("."):
            macro, _, rest = line[1:].partition(" ")
            # Font macros carry text; every other request is layout.
            if macro in ("B", "I", "BR", "IR", "RB", "RI", "BI", "IB", "SM", "SB", "TP", "IP",
                         "TQ"):
                parts = re.findall(r'"[^"]*"|\S+', rest)
                text = "".join(p.strip('"') for p in parts) if macro in (
                    "BR", "IR", "RB", "RI", "BI", "IB") else " ".join(p.strip('"') for p in parts)
                if macro == "IP" and parts:
                    text = parts[0].strip('"')
                if macro == "TP":
                    text = ""
                out[name].append(unescape(text))
            continue
        out[name].append(unescape(line))
    return out


def words(lines):
    return " ".join(" ".join(lines).split()).split(" ")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--packages", default="manpages,manpages-dev")
    ap.add_argument("--queries", type=int, default=500)
    ap.add_argument("--words", type=int, default=300)
    a = ap.parse_args()

    versions, files = {}, []
    for pkg in a.packages.split(","):
        versions[pkg] = subprocess.run(["dpkg-query", "-W", "-f=${Version}", pkg],
                                       check=True, capture_output=True, text=True).stdout
        listing = subprocess.run(["dpkg", "-L", pkg], check=True, capture_output=True,
                                 text=True).stdout.split()
        files += sorted(p for p in listing if re.search(r"/man/man\d/[^/]+\.gz$", p)
                        and os.path.isfile(p) and not os.path.islink(p))

    items = KnownItems()
    for path in files:
        lines = page_lines(path)
        if any(l.startswith(".so ") for l in lines[:5]):
            continue
        secs = sections(lines)
        name_text = " ".join(secs.get("NAME", []))
        if " - " not in name_text:
            continue
        names, summary = name_text.split(" - ", 1)
        summary = " ".join(summary.split())
        body = words(secs.get("DESCRIPTION", []))
        if len(summary.split()) < 3 or len(body) < 20:
            continue
        base = os.path.basename(path)[:-3]
        page, section = base.rsplit(".", 1)
        doc_id = "%s.%s" % (page, section)
        items.add(doc_id, "%s(%s)" % (page, section), " ".join(body[:a.words]), summary)

    n = items.write(a.out, a.queries, {"source": "Debian packages", "packages": versions,
                                       "words": a.words})
    print("manpages: %d documents, %d queries (%s)" % (len(items.docs), n, versions))


if __name__ == "__main__":
    sys.exit(main())
