#!/usr/bin/python3
"""adapt/compare_runs.py: B - A per query, paired; an exact interval where every
query moves alike; a clear exit 2 when the two runs did not measure the same queries or
a file is not adapt's."""
import json
import os
import subprocess
import tempfile
import unittest

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
TOOL = os.path.join(ROOT, "adapt", "compare_runs.py")


def write_run(directory, figures, relevant=("d1",)):
    """figures: {(set, query): (vector, hybrid)} of the new model, as adapt writes them."""
    os.makedirs(directory, exist_ok=True)
    with open(os.path.join(directory, "adapt_queries.jsonl"), "w") as f:
        for (s, q), (v, h) in figures.items():
            f.write(json.dumps({"set": s, "query": q, "relevant": list(relevant),
                                "old": {"vector": 0.0, "hybrid": 0.0},
                                "new": {"vector": v, "hybrid": h}}) + "\n")
    return directory


def run(*args):
    return subprocess.run(["/usr/bin/python3", TOOL, *args], capture_output=True, text=True)


class CompareRunsTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.base = {("held_out", f"q{i}"): (i / 10, 0.1 + i / 20) for i in range(5)}
        self.base.update({("test", f"t{i}"): (0.5, 0.5) for i in range(3)})

    def tearDown(self):
        self.tmp.cleanup()

    def rows(self, out):
        return {tuple(line.split()[:2]): line.split() for line in out.splitlines()[1:]}

    def test_a_shift_of_every_query_is_exact(self):
        a = write_run(os.path.join(self.tmp.name, "a"), self.base)
        b = write_run(os.path.join(self.tmp.name, "b"),
                      {k: (v + 0.1, h - 0.05) for k, (v, h) in self.base.items()})
        r = run(a, b, "--resamples", "200")
        self.assertEqual(r.returncode, 0, r.stderr)
        rows = self.rows(r.stdout)
        self.assertEqual(set(rows), {("held_out", "vector"), ("held_out", "hybrid"),
                                     ("test", "vector"), ("test", "hybrid")})
        v = rows[("held_out", "vector")]
        self.assertEqual(v[2], "5")
        self.assertEqual(v[3:6], ["0.2000", "0.3000", "+0.1000"])
        self.assertEqual(v[6:8], ["(+0.1000", ".."])
        self.assertEqual(v[8], "+0.1000)")
        self.assertEqual(v[9:], ["5", "/", "0"])
        h = rows[("test", "hybrid")]
        self.assertEqual(h[5], "-0.0500")
        self.assertEqual(h[9:], ["0", "/", "3"])
        # The adapt_queries.jsonl files themselves are accepted too.
        r2 = run(os.path.join(a, "adapt_queries.jsonl"), os.path.join(b, "adapt_queries.jsonl"),
                 "--resamples", "200")
        self.assertEqual(r2.stdout, r.stdout)

    def test_one_gain_of_four_has_a_wide_interval(self):
        four = {("held_out", f"q{i}"): (0.0, 0.0) for i in range(4)}
        a = write_run(os.path.join(self.tmp.name, "a"), four)
        b = write_run(os.path.join(self.tmp.name, "b"),
                      {**four, ("held_out", "q0"): (1.0, 0.0)})
        r = run(a, b)
        self.assertEqual(r.returncode, 0, r.stderr)
        v = self.rows(r.stdout)[("held_out", "vector")]
        # Resampled means are k/4, k ~ Binomial(4, 1/4): percentiles 2.5 and 97.5 are 0
        # and 3/4 (P(k <= 2) = 0.949, P(k <= 3) = 0.996), whatever the seed.
        self.assertEqual(v[5:9], ["+0.2500", "(+0.0000", "..", "+0.7500)"])

    def test_several_seeds_per_side_are_averaged_per_query(self):
        a1 = write_run(os.path.join(self.tmp.name, "a1"), self.base)
        a2 = write_run(os.path.join(self.tmp.name, "a2"),
                       {k: (v + 0.2, h) for k, (v, h) in self.base.items()})
        # B equals A1 on every query: against A1 alone it is level; against the mean of
        # A1 and A2 it is 0.1 lower on every query's vector leg, so the interval is exact.
        b = write_run(os.path.join(self.tmp.name, "b"), self.base)
        r = run(f"{a1},{a2}", b, "--resamples", "200")
        self.assertEqual(r.returncode, 0, r.stderr)
        v = self.rows(r.stdout)[("held_out", "vector")]
        self.assertEqual(v[3:9], ["0.3000", "0.2000", "-0.1000", "(-0.1000", "..", "-0.1000)"])
        self.assertEqual(v[9:], ["0", "/", "5"])
        self.assertEqual(self.rows(r.stdout)[("test", "hybrid")][5], "+0.0000")
        self.assertIn("the mean of 2 run(s) in A and 1 in B", r.stdout)
        # Both sides averaged: B1,B2 the same as A1,A2 is level everywhere.
        r = run(f"{a1},{a2}", f"{a1},{a2}", "--resamples", "200")
        self.assertEqual(self.rows(r.stdout)[("held_out", "vector")][5:9],
                         ["+0.0000", "(+0.0000", "..", "+0.0000)"])
        # The runs of one side must have measured the same queries, relevant documents too.
        other = dict(self.base)
        del other[("held_out", "q0")]
        a3 = write_run(os.path.join(self.tmp.name, "a3"), other)
        r = run(f"{a1},{a3}", b)
        self.assertEqual(r.returncode, 2)
        self.assertIn("A: ", r.stderr)
        self.assertIn("measured different queries", r.stderr)
        a4 = write_run(os.path.join(self.tmp.name, "a4"), self.base, ("d9",))
        r = run(a1, f"{b},{a4}")
        self.assertEqual(r.returncode, 2)
        self.assertIn("B: query", r.stderr)
        r = run(f"{a1},", b)
        self.assertEqual(r.returncode, 2)
        self.assertIn("an empty run path", r.stderr)

    def test_different_queries_or_bad_files_exit_2(self):
        a = write_run(os.path.join(self.tmp.name, "a"), self.base)
        other = dict(self.base)
        del other[("test", "t0")]
        b = write_run(os.path.join(self.tmp.name, "b"), other)
        r = run(a, b)
        self.assertEqual(r.returncode, 2)
        self.assertIn("different queries (1 only in A, 0 only in B)", r.stderr)
        self.assertEqual(r.stdout, "")
        # The same queries with other relevant documents: other pairs, not comparable.
        r = run(a, write_run(os.path.join(self.tmp.name, "c"), self.base, ("d1", "d2")))
        self.assertEqual(r.returncode, 2)
        self.assertIn("has other relevant documents in B", r.stderr)
        bad = os.path.join(self.tmp.name, "bad")
        os.makedirs(bad)
        with open(os.path.join(bad, "adapt_queries.jsonl"), "w") as f:
            f.write('{"set": "held_out", "query": "q", "new": {"vector": 0.5}}\n')
        r = run(a, bad)
        self.assertEqual(r.returncode, 2)
        self.assertIn("adapt_queries.jsonl:1: not an adapt_queries.jsonl line", r.stderr)
        with open(os.path.join(bad, "adapt_queries.jsonl"), "w") as f:
            f.write(json.dumps({"set": "s", "query": "q", "relevant": ["d"],
                                "new": {"vector": 1.5, "hybrid": 0}}) + "\n")
        self.assertIn("outside [0, 1]", run(a, bad).stderr)
        r = run(a, os.path.join(self.tmp.name, "missing"))
        self.assertEqual(r.returncode, 2)
        self.assertIn("No such file", r.stderr)


if __name__ == "__main__":
    unittest.main()
