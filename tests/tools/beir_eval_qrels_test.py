#!/usr/bin/python3
"""beir_eval.read_qrels: a header row is skipped only when it is one; every
judgment of a headerless file is kept; malformed rows fail loudly."""
import os
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "research", "corpus"))
import beir_eval  # noqa: E402


def write(text):
    f = tempfile.NamedTemporaryFile("w", suffix=".tsv", delete=False, encoding="utf-8")
    f.write(text)
    f.close()
    return f.name


class ReadQrels(unittest.TestCase):
    def test_header_is_skipped(self):
        path = write("query-id\tcorpus-id\tscore\n1\td1\t1\n1\td2\t2\n")
        self.assertEqual(beir_eval.read_qrels(path), {"1": {"d1": 1, "d2": 2}})

    def test_headerless_file_keeps_its_first_judgment(self):
        path = write("1\td1\t1\n2\td9\t1\n")
        self.assertEqual(beir_eval.read_qrels(path), {"1": {"d1": 1}, "2": {"d9": 1}})

    def test_trec_four_columns_and_zero_grades(self):
        path = write("q1 0 d1 1\nq1 0 d2 0\n\nq2 Q0 d3 3\n")
        self.assertEqual(beir_eval.read_qrels(path), {"q1": {"d1": 1}, "q2": {"d3": 3}})

    def test_malformed_row_fails(self):
        path = write("1\td1\t1\n1\td2\n")
        with self.assertRaises(SystemExit) as cm:
            beir_eval.read_qrels(path)
        self.assertIn("line 2", str(cm.exception))

    def test_non_integer_grade_after_first_row_fails(self):
        path = write("1\td1\t1\n1\td2\thigh\n")
        with self.assertRaises(SystemExit):
            beir_eval.read_qrels(path)


if __name__ == "__main__":
    unittest.main()
