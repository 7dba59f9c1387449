#!/usr/bin/python3
"""Replays hybrid fusion rules over saved keyword and vector legs.

    research/fusion/fusion_study.py NAME=DATA:RUNDIR [NAME=DATA:RUNDIR ...] [--rules r1,r2]

Each RUNDIR holds run_keyword.tsv and run_vector.tsv written by
research/eval_search_modes.py (query-id doc-id score, the top 100 of each leg
as the server returned it) and DATA is the BEIR directory whose
qrels/test.tsv scores them. For every rule it prints nDCG@10 per run, the
paired difference to the better single leg with a 95% bootstrap interval
(2,000 resamples of the queries, seed 7), and the mean vector share.

The fusion arithmetic is the server's (index/keyword/fusion.cc: min-max per
leg over the returned list, a missing document gets 0 from that leg, ties by
id), so a rule can be chosen here on many collections and models before it
is written in C++; `hybrid` in the server must then equal this script's
figure for the rule it implements.
"""

import argparse
import math
import random
import sys
from collections import defaultdict


def load_run(path):
    run = defaultdict(list)
    with open(path) as f:
        for line in f:
            q, d, s = line.split()
            run[q].append((d, float(s)))
    for q in run:
        run[q].sort(key=lambda x: (-x[1], x[0]))
    return run


def load_qrels(data):
    qrels = defaultdict(dict)
    with open(data + "/qrels/test.tsv") as f:
        for line in f:
            p = line.rstrip("\n").split("\t")
            if len(p) >= 3 and p[0] != "query-id" and int(p[2]) > 0:
                qrels[p[0]][p[1]] = int(p[2])
    return qrels


def ndcg10(ranked, rel):
    dcg = sum((2 ** rel.get(d, 0) - 1) / math.log2(i + 2) for i, d in enumerate(ranked[:10]))
    ideal = sorted(rel.values(), reverse=True)[:10]
    idcg = sum((2 ** g - 1) / math.log2(i + 2) for i, g in enumerate(ideal))
    return dcg / idcg if idcg else 0.0


def minmax(leg):
    if not leg:
        return {}
    hi, lo = leg[0][1], leg[-1][1]
    return {d: (1.0 if hi == lo else (s - lo) / (hi - lo)) for d, s in leg}


def weighted(kw, vec, alpha):
    if not kw:
        return [d for d, _ in vec]
    if not vec:
        return [d for d, _ in kw]
    nk, nv = minmax(kw), minmax(vec)
    docs = set(nk) | set(nv)
    scored = [((1 - alpha) * nk.get(d, 0.0) + alpha * nv.get(d, 0.0), d) for d in docs]
    scored.sort(key=lambda x: (-x[0], x[1]))
    return [d for _, d in scored]


def agreement(kw, vec, depth):
    if not kw or not vec:
        return 0.0
    d = min(depth, len(kw), len(vec))
    return len({x for x, _ in kw[:d]} & {x for x, _ in vec[:d]}) / d


def cross_recall(kw, vec, depth, deep):
    """Share of each leg's top `depth` found in the other's top `deep`, averaged."""
    if not kw or not vec:
        return 0.0
    kd, vd = [x for x, _ in kw[:depth]], [x for x, _ in vec[:depth]]
    kdeep, vdeep = {x for x, _ in kw[:deep]}, {x for x, _ in vec[:deep]}
    return 0.5 * (sum(x in vdeep for x in kd) / len(kd) + sum(x in kdeep for x in vd) / len(vd))


RULES = {
    "keyword": lambda kw, vec: 0.0,
    "vector": lambda kw, vec: 1.0,
    "w0.3": lambda kw, vec: 0.3,
    "w0.4": lambda kw, vec: 0.4,
    "w0.5": lambda kw, vec: 0.5,
    "w0.6": lambda kw, vec: 0.6,
    "adaptive": lambda kw, vec: 0.5 * agreement(kw, vec, 10),
}


def add_param_rules():
    for t in (0.2, 0.3, 0.4, 0.5):
        RULES["agree/%.1f" % t] = (lambda t: lambda kw, vec: 0.5 * min(1.0, agreement(kw, vec, 10) / t))(t)
    for deep in (30, 100):
        for t in (0.3, 0.4, 0.5, 0.6, 0.7):
            RULES["xrec%d/%.1f" % (deep, t)] = (lambda deep, t: lambda kw, vec: 0.5 * min(
                1.0, cross_recall(kw, vec, 10, deep) / t))(deep, t)


def ramp(x, lo, hi):
    return min(1.0, max(0.0, (x - lo) / (hi - lo)))


def add_ramp_rules():
    for lo in (0.0, 0.1, 0.2):
        for hi in (0.3, 0.4, 0.5, 0.6):
            RULES["ragree%.1f-%.1f" % (lo, hi)] = (lambda lo, hi: lambda kw, vec: 0.5 * ramp(
                agreement(kw, vec, 10), lo, hi))(lo, hi)
    for lo in (0.2, 0.3, 0.4):
        for hi in (0.6, 0.7, 0.8, 0.9):
            RULES["rxrec%.1f-%.1f" % (lo, hi)] = (lambda lo, hi: lambda kw, vec: 0.5 * ramp(
                cross_recall(kw, vec, 10, 100), lo, hi))(lo, hi)


def paired(scores, base):
    """Mean of scores - base and its 95% bootstrap interval (2,000 resamples, seed 7)."""
    n = len(scores)
    diffs = [s - b for s, b in zip(scores, base)]
    rng = random.Random(7)
    boots = sorted(sum(diffs[rng.randrange(n)] for _ in range(n)) / n for _ in range(2000))
    return sum(diffs) / n, boots[50], boots[1949]


def table(specs):
    print("| run | queries | keyword | vector | adaptive | Δ best leg | weighted 0.5 | Δ best leg |")
    print("|---|---:|---:|---:|---:|---|---:|---|")
    for spec in specs:
        name, rest = spec.split("=", 1)
        data, rundir = rest.split(":", 1)
        qrels = load_qrels(data)
        kwr, vecr = load_run(rundir + "/run_keyword.tsv"), load_run(rundir + "/run_vector.tsv")
        cols = {r: [] for r in ("keyword", "vector", "adaptive", "w0.5")}
        for q, rel in qrels.items():
            kw, vec = kwr.get(q, []), vecr.get(q, [])
            for r in cols:
                cols[r].append(ndcg10(weighted(kw, vec, RULES[r](kw, vec)), rel))
        n = len(qrels)
        mean = {r: sum(v) / n for r, v in cols.items()}
        best = cols["keyword"] if mean["keyword"] >= mean["vector"] else cols["vector"]
        cells = []
        for r in ("adaptive", "w0.5"):
            d, lo, hi = paired(cols[r], best)
            cells += ["%.4f" % mean[r], "%+.3f [%+.3f, %+.3f]" % (d, lo, hi)]
        print("| %s | %d | %.4f | %.4f | %s |" % (name, n, mean["keyword"], mean["vector"],
                                                   " | ".join(cells)))
    return 0


def main():
    add_param_rules()
    add_ramp_rules()
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("runs", nargs="+")
    ap.add_argument("--rules", default="")
    ap.add_argument("--stats", action="store_true", help="print per-run agreement statistics")
    ap.add_argument("--table", action="store_true",
                    help="a markdown row per run: keyword, vector, adaptive, weighted 0.5 and the "
                         "last two against the better leg with their 95%% intervals")
    a = ap.parse_args()
    rules = a.rules.split(",") if a.rules else list(RULES)
    if a.table:
        return table(a.runs)
    sets = []
    for spec in a.runs:
        name, rest = spec.split("=", 1)
        data, rundir = rest.split(":", 1)
        sets.append((name, load_qrels(data), load_run(rundir + "/run_keyword.tsv"),
                     load_run(rundir + "/run_vector.tsv")))
    print("%-14s" % "rule" + "".join("%24s" % s[0] for s in sets) + "   worst-vs-best-leg")
    for rule in rules:
        f = RULES[rule]
        cells, worst = [], 1.0
        for name, qrels, kwr, vecr in sets:
            scores, best_leg, alphas = [], [], []
            for q, rel in qrels.items():
                kw, vec = kwr.get(q, []), vecr.get(q, [])
                alpha = f(kw, vec)
                alphas.append(alpha)
                scores.append(ndcg10(weighted(kw, vec, alpha), rel))
                best_leg.append((ndcg10([d for d, _ in kw], rel), ndcg10([d for d, _ in vec], rel)))
            n = len(scores)
            kw_mean = sum(b[0] for b in best_leg) / n
            vec_mean = sum(b[1] for b in best_leg) / n
            leg = 0 if kw_mean >= vec_mean else 1
            d, lo, _ = paired(scores, [b[leg] for b in best_leg])
            worst = min(worst, d)
            cells.append("%.4f %+.3f[%+.3f] a%.2f" % (sum(scores) / n, d, lo, sum(alphas) / n))
        print("%-14s" % rule + "".join("%24s" % c for c in cells) + "   %+.4f" % worst)
    if a.stats:
        for name, qrels, kwr, vecr in sets:
            ag = [agreement(kwr.get(q, []), vecr.get(q, []), 10) for q in qrels]
            xr = [cross_recall(kwr.get(q, []), vecr.get(q, []), 10, 100) for q in qrels]
            print("%s: agreement@10 mean %.3f, cross-recall@10/100 mean %.3f" % (
                name, sum(ag) / len(ag), sum(xr) / len(xr)))


if __name__ == "__main__":
    sys.exit(main())
