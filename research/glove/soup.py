#!/usr/bin/python3
"""Weight average of two fine-tunes of one checkpoint ("model soup", WiSE-FT):
OUT = (1 - a) * A + a * B, tensor by tensor, written as an F32 checkpoint.

usage: soup.py A B ALPHA OUT

A and B must be two NeoBERT checkpoints of one shape with the same tokenizer
and config (for the default model: the refine with the GloVe channel free and
the same refine with it frozen, research/default_model/train_default_model.sh). An average of
two unrelated models is meaningless, so a different tokenizer or config is
refused. Entries that are exactly 0 in both (the blocks that keep the channel
apart) stay exactly 0, since (1 - a) * 0 + a * 0 = 0.
"""

import argparse
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import glove_channel  # noqa: E402


def fail(msg):
    sys.exit("soup: " + msg)


def same_file(a, b, name):
    pa, pb = os.path.join(a, name), os.path.join(b, name)
    if not os.path.exists(pa) and not os.path.exists(pb):
        return True
    try:
        with open(pa, "rb") as fa, open(pb, "rb") as fb:
            return fa.read() == fb.read()
    except OSError:
        return False


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("a", help="checkpoint directory A (weight 1 - ALPHA)")
    ap.add_argument("b", help="checkpoint directory B (weight ALPHA)")
    ap.add_argument("alpha", type=float, help="B's weight, in [0, 1]")
    ap.add_argument("out", help="directory to write; replaced as a whole")
    args = ap.parse_args()
    if not 0.0 <= args.alpha <= 1.0:
        fail("ALPHA must be in [0, 1], got %r" % args.alpha)
    cfg_a, ta = glove_channel.load_base(args.a)
    cfg_b, tb = glove_channel.load_base(args.b)
    if cfg_a != cfg_b:
        fail("%s and %s have different config.json; only fine-tunes of one model average" % (args.a, args.b))
    for name in ("tokenizer.model", "special_tokens_map.json"):
        if not same_file(args.a, args.b, name):
            fail("%s differs between %s and %s" % (name, args.a, args.b))
    a = args.alpha
    out = {}
    for name, x in ta.items():  # load_base checked that both have exactly these tensors
        y = tb[name]
        # The checkpoint layout (NEOBERT.md): the MLM head unprefixed, the encoder under "model.".
        key = name if name.startswith("decoder.") else "model." + name
        out[key] = ((1.0 - a) * x.astype(np.float64) + a * y.astype(np.float64)).astype(np.float32)
    glove_channel.write_checkpoint(args.out, cfg_a, out, args.a)
    print("soup: %s = %.4g * %s + %.4g * %s" % (args.out, 1.0 - a, args.a, a, args.b))


if __name__ == "__main__":
    main()
