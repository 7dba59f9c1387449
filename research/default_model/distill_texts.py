"""Unlabelled texts for distilling a default-model student (issue 45).

    distill_texts.py N_GENERAL SCIFACT_CORPUS MLM_TXT OUT

SciFact's corpus (title + abstract; never its queries) and a seeded sample of
the packaged corpus (research/corpus/gather.sh's mlm.txt), cut into pieces of
at most 90 words at word boundaries (pieces under 8 words dropped), shuffled
with seed 6, one per line. distill_pilot.md says what the first run gave.
"""
import json
import random
import sys

N_GENERAL, CORPUS, MLM, OUT = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]
rng = random.Random(6)


def pieces(text, n=90):
    w = text.split()
    for i in range(0, len(w), n):
        p = " ".join(w[i:i + n])
        if len(p.split()) >= 8:
            yield p


out = []
for line in open(CORPUS):
    d = json.loads(line)
    out.extend(pieces((d.get("title", "") + ". " + d.get("text", "")).strip()))
sci = len(out)
lines = open(MLM, encoding="utf-8").read().split("\n")
rng.shuffle(lines)
gen = []
for line in lines:
    gen.extend(pieces(line))
    if len(gen) >= N_GENERAL:
        break
out.extend(gen)
rng.shuffle(out)
with open(OUT, "w") as f:
    for t in out:
        f.write(t.replace("\n", " ") + "\n")
print("scifact pieces", sci, "general pieces", len(gen), "total", len(out),
      "words", sum(len(t.split()) for t in out))
