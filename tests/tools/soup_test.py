#!/usr/bin/python3
"""research/glove/soup.py: the weight average of two checkpoints is (1 - a) * A + a *
B in every tensor, keeps the checkpoint layout and the exact zeros, and refuses
what is not two fine-tunes of one model (another config or tokenizer, a weight
outside [0, 1], a missing tensor) with a message and a non-zero exit."""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

import numpy as np

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
sys.path.insert(0, os.path.join(ROOT, "research", "glove"))
sys.path.insert(0, os.path.join(ROOT, "research", "reference"))
import glove_channel  # noqa: E402
import neobert_ref  # noqa: E402

SOUP = os.path.join(ROOT, "research", "glove", "soup.py")
CONFIG = {"model_type": "neobert", "hidden_size": 8, "num_attention_heads": 2,
          "num_hidden_layers": 1, "vocab_size": 10, "intermediate_size": 12}


def tensors(seed):
    """A tiny NeoBERT checkpoint's tensors, random but with the same block of exact
    zeros in every seed (as the channel's blocks are in both refines)."""
    rng = np.random.default_rng(seed)
    c, v, f = 8, 10, 8  # SwiGLU width: (int(2 * 12 / 3) + 7) // 8 * 8
    shapes = {"model.encoder.weight": (v, c), "model.layer_norm.weight": (c,),
              "decoder.weight": (v, c), "decoder.bias": (v,),
              "model.transformer_encoder.0.attention_norm.weight": (c,),
              "model.transformer_encoder.0.qkv.weight": (3 * c, c),
              "model.transformer_encoder.0.wo.weight": (c, c),
              "model.transformer_encoder.0.ffn_norm.weight": (c,),
              "model.transformer_encoder.0.ffn.w12.weight": (2 * f, c),
              "model.transformer_encoder.0.ffn.w3.weight": (c, f)}
    out = {n: rng.standard_normal(s).astype(np.float32) for n, s in shapes.items()}
    out["model.transformer_encoder.0.qkv.weight"][:, 6:] = 0.0
    return out


class Soup(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, self.dir)
        self.a = self.checkpoint("a", tensors(1))
        self.b = self.checkpoint("b", tensors(2))

    def checkpoint(self, name, t, config=CONFIG, tokenizer=b"pieces"):
        path = os.path.join(self.dir, name)
        os.makedirs(path)
        with open(os.path.join(path, "config.json"), "w", encoding="utf-8") as f:
            json.dump(config, f)
        with open(os.path.join(path, "tokenizer.model"), "wb") as f:
            f.write(tokenizer)
        glove_channel.write_safetensors(os.path.join(path, "model.safetensors"), t)
        return path

    def soup(self, a, b, alpha):
        out = os.path.join(self.dir, "out")
        p = subprocess.run([sys.executable, SOUP, a, b, str(alpha), out], capture_output=True, text=True)
        return p, out

    def test_every_tensor_is_the_weighted_average(self):
        p, out = self.soup(self.a, self.b, 0.25)
        self.assertEqual(p.returncode, 0, p.stderr)
        got = neobert_ref.read_safetensors(os.path.join(out, "model.safetensors"))
        ta, tb = tensors(1), tensors(2)
        self.assertEqual(sorted(got), sorted(ta))  # the layout: "decoder." unprefixed
        for name, x in ta.items():
            want = 0.75 * x.astype(np.float64) + 0.25 * tb[name].astype(np.float64)
            # One rounding to F32 of the F64 average: within half an F32 ulp.
            np.testing.assert_allclose(got[name], want, rtol=2 ** -24, atol=0, err_msg=name)
        self.assertTrue(np.all(got["model.transformer_encoder.0.qkv.weight"][:, 6:] == 0.0))
        with open(os.path.join(out, "tokenizer.model"), "rb") as f:
            self.assertEqual(f.read(), b"pieces")
        with open(os.path.join(out, "config.json"), encoding="utf-8") as f:
            self.assertEqual(json.load(f), CONFIG)

    def test_the_ends_are_the_two_models(self):
        for alpha, seed in ((0, 1), (1, 2)):
            p, out = self.soup(self.a, self.b, alpha)
            self.assertEqual(p.returncode, 0, p.stderr)
            got = neobert_ref.read_safetensors(os.path.join(out, "model.safetensors"))
            for name, x in tensors(seed).items():
                np.testing.assert_array_equal(got[name], x, err_msg=name)

    def test_refuses_a_weight_outside_0_1(self):
        for alpha in (-0.1, 1.5, float("nan")):
            p, out = self.soup(self.a, self.b, alpha)
            self.assertNotEqual(p.returncode, 0)
            self.assertIn("ALPHA must be in [0, 1]", p.stderr)
            self.assertFalse(os.path.exists(out))

    def test_refuses_another_model(self):
        other = dict(CONFIG, norm_eps=1e-6)
        cases = [(self.checkpoint("cfg", tensors(2), config=other), "different config.json"),
                 (self.checkpoint("tok", tensors(2), tokenizer=b"other"), "tokenizer.model differs")]
        missing = tensors(2)
        del missing["decoder.bias"]
        cases.append((self.checkpoint("missing", missing), "decoder.bias is missing"))
        for path, message in cases:
            p, out = self.soup(self.a, path, 0.5)
            self.assertNotEqual(p.returncode, 0, path)
            self.assertIn(message, p.stderr)
            self.assertFalse(os.path.exists(out))


if __name__ == "__main__":
    unittest.main()
