#!/usr/bin/python3
"""Two `neodb adapt` runs compared query by query: is B's new model better than A's?

    adapt/compare_runs.py A B [--resamples 10000] [--seed 1]
    adapt/compare_runs.py A1,A2 B1,B2     # several training seeds of each

A and B are adapt output directories (or their adapt_queries.jsonl files), made from the
same collection and the same held-out / test pairs: say the in-batch run (A) and the
mined-negatives run (B). A side may be several runs of one configuration joined by commas
(other --seed values): each query's figure is then their mean, which takes most of one
training seed's luck out of the comparison (the interval still resamples only queries).
For each set (held_out, test) and mode (vector; hybrid as each model would be served) it
prints A's and B's mean nDCG@10 and B - A with its 95% paired bootstrap interval (queries
resampled with replacement, the pair kept together) and how many queries B does better and
worse on. One split's means differ by chance: the interval says by how much they could.

Exit 2, with the reason, when a file is missing or malformed or the two runs did not
measure the same queries with the same relevant documents (a run's per-query figures only
pair with another's on the same queries)."""
import argparse
import json
import math
import os
import random
import sys

MODES = ("vector", "hybrid")


def fail(message):
    print(f"compare_runs: {message}", file=sys.stderr)
    sys.exit(2)


def read_run(path):
    """{(set, query): ({mode: new model's nDCG@10}, relevant ids)} and the sets in file
    order."""
    if os.path.isdir(path):
        path = os.path.join(path, "adapt_queries.jsonl")
    try:
        with open(path, encoding="utf-8") as f:
            lines = f.read().splitlines()
    except OSError as e:
        fail(f"{path}: {e.strerror}")
    run, sets = {}, []
    for n, line in enumerate(lines, 1):
        try:
            q = json.loads(line)
            key = (q["set"], q["query"])
            figures = {m: float(q["new"][m]) for m in MODES}
            relevant = sorted(str(r) for r in q["relevant"])
        except (ValueError, KeyError, TypeError) as e:
            fail(f"{path}:{n}: not an adapt_queries.jsonl line ({type(e).__name__}: {e})")
        if not all(0 <= v <= 1 for v in figures.values()):
            fail(f"{path}:{n}: an nDCG@10 outside [0, 1]")
        if key in run:
            fail(f"{path}:{n}: query repeated in set {key[0]}: {key[1]!r}")
        run[key] = (figures, relevant)
        if key[0] not in sets:
            sets.append(key[0])
    if not run:
        fail(f"{path}: no queries")
    return run, sets


def require_same_queries(x, y, name_x, name_y, prefix=""):
    """Exit 2 unless runs x and y measured the same queries with the same relevant documents:
    per-query figures pair only then (between the two sides, and between one side's runs)."""
    if x.keys() != y.keys():
        only_x, only_y = len(x.keys() - y.keys()), len(y.keys() - x.keys())
        fail(f"{prefix}the runs measured different queries ({only_x} only in {name_x}, {only_y} "
             f"only in {name_y}): compare runs made with the same pairs, split and --test")
    for k in x:
        if x[k][1] != y[k][1]:
            fail(f"{prefix}query {k[1]!r} of set {k[0]} has other relevant documents in "
                 f"{name_y}: the runs were made from different pairs")


def read_side(spec, name):
    """One side of the comparison: a run, or the per-query mean of several runs of one
    configuration (comma-separated), which must have measured the same queries."""
    paths = spec.split(",")
    if any(not p for p in paths):
        fail(f"{name}: an empty run path in {spec!r}")
    first, sets = read_run(paths[0])
    sums = {k: dict(figures) for k, (figures, _) in first.items()}
    for path in paths[1:]:
        run, _ = read_run(path)
        require_same_queries(first, run, paths[0], path, f"{name}: ")
        for k, (figures, _) in run.items():
            for m in MODES:
                sums[k][m] += figures[m]
    side = {k: ({m: v / len(paths) for m, v in sums[k].items()}, first[k][1]) for k in first}
    return side, sets, len(paths)


def paired_bootstrap(a, b, resamples, seed):
    """Mean of b - a, its 95% percentile interval (nearest rank), queries better, worse."""
    diff = [y - x for x, y in zip(a, b)]
    n = len(diff)
    rng = random.Random(seed)
    means = sorted(sum(diff[rng.randrange(n)] for _ in range(n)) / n for _ in range(resamples))

    def at(p):
        rank = math.ceil(round(p * resamples, 9))  # round: 0.975 * n is not exact in binary
        return means[min(max(rank, 1), resamples) - 1]

    return (sum(diff) / n, at(0.025), at(0.975), sum(d > 0 for d in diff),
            sum(d < 0 for d in diff))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("a", help="baseline run: adapt --out directory or its adapt_queries.jsonl "
                    "(or several runs of one configuration, comma-separated, averaged)")
    ap.add_argument("b", help="the run compared with it (the same forms)")
    ap.add_argument("--resamples", type=int, default=10000)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    if args.resamples < 1:
        fail("--resamples must be >= 1")
    a, sets, runs_a = read_side(args.a, "A")
    b, _, runs_b = read_side(args.b, "B")
    require_same_queries(a, b, "A", "B")
    print(f"{'set':<9} {'mode':<7} {'queries':>7} {'A':>8} {'B':>8} {'B - A':>8}  "
          f"{'95% interval':<19} better / worse")
    for s in sets:
        keys = [k for k in a if k[0] == s]
        for m in MODES:
            xa, xb = [a[k][0][m] for k in keys], [b[k][0][m] for k in keys]
            mean, lo, hi, better, worse = paired_bootstrap(xa, xb, args.resamples, args.seed)
            print(f"{s:<9} {m:<7} {len(keys):>7} {sum(xa) / len(xa):8.4f} "
                  f"{sum(xb) / len(xb):8.4f} {mean:+8.4f}  ({lo:+.4f} .. {hi:+.4f})  "
                  f"{better} / {worse}")
    if runs_a > 1 or runs_b > 1:
        print(f"each query's figure is the mean of {runs_a} run(s) in A and {runs_b} in B")


if __name__ == "__main__":
    main()
