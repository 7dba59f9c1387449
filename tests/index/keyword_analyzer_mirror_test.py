#!/usr/bin/python3
"""beir_eval.py's Python mirror of the keyword analyzers must give the C++
goldens (tests/testdata/keyword/analyzer_golden.txt) for every hand-written
case, so that `beir_eval.py bm25 --analyzer` stays a fair reference for
research/keyword_eval. (The generated every-category cases are left out: Python's
unicodedata and utf8proc may carry different Unicode versions.)
Exit 77 (skipped) without PyStemmer."""

import os
import sys

ROOT = os.environ.get("NEODB_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "research", "corpus"))
try:
    import Stemmer  # noqa: F401
except ImportError:
    print("SKIPPED: python3-stemmer is not installed")
    sys.exit(77)
import beir_eval  # noqa: E402


def unescape(s):
    out, i = b"", 0
    while i < len(s):
        if s[i] == "\\" and i + 1 < len(s):
            e = s[i + 1]
            if e == "x":
                out += bytes([int(s[i + 2:i + 4], 16)])
                i += 4
                continue
            if e == "u":
                j = s.index("}", i)
                out += chr(int(s[i + 3:j], 16)).encode("utf-8", "surrogatepass")
                i = j + 1
                continue
            out += b"\t" if e == "t" else e.encode()
            i += 2
            continue
        out += s[i].encode()
        i += 1
    return out


def main():
    data = os.path.join(ROOT, "tests", "testdata", "keyword")
    golden = {}
    with open(os.path.join(data, "analyzer_golden.txt"), encoding="utf-8") as f:
        for line in f:
            if not line.startswith("#"):
                name, kind, tokens = line.rstrip("\n").split("\t")
                golden[(name, kind)] = tokens
    failures = checked = 0
    with open(os.path.join(data, "analyzer_cases.txt"), encoding="utf-8") as f:
        for line in f:
            if not line.strip() or line.startswith("#"):
                continue
            name, text = line.rstrip("\n").split("\t", 1)
            # One U+FFFD per invalid sequence here, one per byte in C++: both separate.
            text = unescape(text).decode("utf-8", "replace")
            for kind in ("english", "simple", "none"):
                got = " ".join(("+" if o else "") + t for t, o in beir_eval.analyze(text, kind))
                checked += 1
                if got != golden[(name, kind)]:
                    failures += 1
                    print("MISMATCH %s %s\n  python: %s\n  golden: %s" % (name, kind, got, golden[(name, kind)]))
    print("%d of %d cases differ" % (failures, checked))
    sys.exit(1 if failures or not checked else 0)


if __name__ == "__main__":
    main()
