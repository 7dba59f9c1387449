#!/usr/bin/python3
"""Gives the K English words that the model's tokenizer splits worst a piece of
their own, so the GloVe channel can carry their vectors whole (issue 21).

usage:
  extend_vocab.py BASE GLOVE.npz PC.npy OUT [--add 8000] [--words 30000]
                  [--sif-a 1e-3] [--neodb BIN]

Why: the channel's per-piece table cannot give a word split into several
pieces its own direction (a one-piece word keeps 0.96 of its SIF-GloVe
direction, a two-piece word 0.74, longer ones 0.59), and with a 12,000-piece
tokenizer 22,202 of GloVe's 30,000 most frequent words are split. Solving the
table with K more whole-word pieces measures what that costs (the numpy
channel alone on the dev sentences; train_default_model.md).

Which words: the split ones among GloVe's most frequent alphanumeric words,
ranked by how much of the table's weighted fit error they carry (frequency
p(w) times the squared residual of the sum of their pieces, the table solved
as glove_channel.py solves it for --words words, --sif-a).

The tokenizer: each new piece is "▁word" with a score just above the sum of
the scores of the pieces the unigram model used for the word, so the Viterbi
segmentation changes only where those pieces stood for the word at a word
start: a bonus of 0.01 per piece merged breaks the tie towards the whole word,
and towards the longer of two new words that share a start. The
self-test samples, which the new pieces may re-segment, are dropped.

The model (any NeoBERT checkpoint with its MLM head): the new rows of the
input embedding and of the decoder are the mean of the word's old pieces'
rows; the decoder bias of a new piece is the lowest old bias, so the MLM head
does not start predicting them before training has seen them. vocab_size
grows by K; nothing else changes.
"""

import argparse
import os
import struct
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import glove_channel  # noqa: E402
import sif as sifmod  # noqa: E402

SPACE = "\u2581"


def fail(msg):
    sys.exit("extend_vocab: " + msg)


# ---------------------------------------------------------------- protobuf wire format
def _varint(buf, i):
    out, shift = 0, 0
    while True:
        if i >= len(buf):
            raise ValueError("truncated varint")
        b = buf[i]
        i += 1
        out |= (b & 0x7F) << shift
        if not b & 0x80:
            return out, i
        shift += 7
        if shift > 63:
            raise ValueError("varint too long")


def _enc_varint(n):
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        out.append(b | (0x80 if n else 0))
        if not n:
            return bytes(out)


def fields(buf):
    """[(field number, wire type, raw bytes of the whole field, payload)] of one message."""
    out, i = [], 0
    while i < len(buf):
        start = i
        key, i = _varint(buf, i)
        num, wt = key >> 3, key & 7
        if wt == 0:
            val, i = _varint(buf, i)
        elif wt == 1:
            val, i = buf[i:i + 8], i + 8
        elif wt == 2:
            n, i = _varint(buf, i)
            val, i = buf[i:i + n], i + n
        elif wt == 5:
            val, i = buf[i:i + 4], i + 4
        else:
            raise ValueError("wire type %d" % wt)
        if i > len(buf):
            raise ValueError("truncated field %d" % num)
        out.append((num, wt, buf[start:i], val))
    return out


def read_pieces(model_bytes):
    """(top-level fields, [(piece, score)]) of a SentencePiece ModelProto."""
    top = fields(model_bytes)
    pieces = []
    for num, wt, _, val in top:
        if num == 1 and wt == 2:
            piece, score = None, 0.0
            for n, w, _, v in fields(val):
                if n == 1 and w == 2:
                    piece = v.decode("utf-8")
                elif n == 2 and w == 5:
                    score = struct.unpack("<f", v)[0]
            if piece is None:
                raise ValueError("a piece without its string")
            pieces.append((piece, score))
    return top, pieces


def piece_message(piece, score):
    p = piece.encode("utf-8")
    body = b"\x0a" + _enc_varint(len(p)) + p + b"\x15" + struct.pack("<f", score)
    return b"\x0a" + _enc_varint(len(body)) + body


def write_model(top, new_pieces):
    """The ModelProto with new_pieces appended after the last piece and the
    self-test samples (field 4) dropped."""
    last = max(i for i, f in enumerate(top) if f[0] == 1)
    out = bytearray()
    for i, (num, _, raw, _) in enumerate(top):
        if num == 4:
            continue
        out += raw
        if i == last:
            for piece, score in new_pieces:
                out += piece_message(piece, score)
    return bytes(out)


# ---------------------------------------------------------------- choice of words
def choose(sif, pc, neodb, base, n_words, sif_a, add):
    words, pieces, targets, p, v, _ = glove_channel.fit_table(sif, pc, neodb, base, n_words, sif_a)
    cost = []
    for i in range(len(words)):
        if len(pieces[i]) >= 2:
            r = v[pieces[i]].sum(0) - targets[i]
            cost.append((p[i] * float(r @ r), i))
    cost.sort(reverse=True)
    chosen = [i for _, i in cost[:add]]
    share = sum(c for c, _ in cost[:add]) / max(sum(c for c, _ in cost), 1e-30)
    return [(words[i], pieces[i]) for i in chosen], len(cost), share


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    glove_channel.checkpoint_args(ap)
    ap.add_argument("--add", type=int, default=8000)
    ap.add_argument("--words", type=int, default=30000)
    ap.add_argument("--sif-a", type=float, default=1e-3)
    ap.add_argument("--neodb", default=os.path.join(HERE, "..", "..", "build", "tools", "neodb", "neodb"))
    a = ap.parse_args()
    if a.add < 1 or a.words < 1000 or a.sif_a <= 0:
        fail("need --add >= 1, --words >= 1000, --sif-a > 0")
    cfg, t = glove_channel.load_base(a.base)
    vocab = cfg["vocab_size"]
    try:
        with open(os.path.join(a.base, "tokenizer.model"), "rb") as f:
            top, pieces = read_pieces(f.read())
    except (OSError, ValueError, UnicodeDecodeError) as e:
        fail("cannot read %s/tokenizer.model: %s" % (a.base, e))
    if len(pieces) != vocab:
        fail("tokenizer.model has %d pieces, config.json vocab_size %d" % (len(pieces), vocab))
    sif = sifmod.Sif(a.glove)
    pc = sifmod.load_pc(a.pc, sif.dim)
    chosen, n_split, share = choose(sif, pc, a.neodb, a.base, a.words, a.sif_a, a.add)
    known = {piece for piece, _ in pieces}
    new_pieces, rows = [], []
    for word, ids in chosen:
        piece = SPACE + word
        if piece in known:  # the unigram model preferred a split over its own piece
            continue
        new_pieces.append((piece, sum(pieces[j][1] for j in ids) + 0.01 * len(ids)))
        rows.append(ids)
    k = len(new_pieces)
    print("extend_vocab: %d of the %d split words among the top %d get a piece (%.3f of the "
          "table's weighted fit error)" % (k, n_split, a.words, share))

    def grow(m, bias_fill=None):
        extra = np.stack([m[ids].mean(0) for ids in rows]) if m.ndim == 2 else np.full(k, bias_fill)
        return np.concatenate([m, extra.astype(m.dtype)])

    out = {("model." + n if not n.startswith("decoder.") else n): v for n, v in t.items()}
    out["model.encoder.weight"] = grow(t["encoder.weight"])
    out["decoder.weight"] = grow(t["decoder.weight"])
    out["decoder.bias"] = grow(t["decoder.bias"], float(t["decoder.bias"].min()))
    new_cfg = dict(cfg)
    new_cfg["vocab_size"] = vocab + k

    def check(tmp):  # each new word must now tokenize to its own piece
        got = glove_channel.tokenize(a.neodb, tmp, [p[len(SPACE):] for p, _ in new_pieces])
        whole = sum(1 for j, ids in enumerate(got) if ids[1:-1] == [vocab + j])
        if whole != k:
            fail("only %d of %d new words tokenize to their new piece" % (whole, k))

    glove_channel.write_checkpoint(a.out, new_cfg, out, a.base,
                                   files={"tokenizer.model": write_model(top, new_pieces)}, check=check)
    print("extend_vocab: wrote %s (vocab %d -> %d)" % (a.out, vocab, vocab + k))


if __name__ == "__main__":
    main()
