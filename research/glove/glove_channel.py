#!/usr/bin/python3
"""Adds a "GloVe channel" to a trained NeoBERT checkpoint (issue 21): an
analytic construction, no training.

usage:
  glove_channel.py BASE_DIR GLOVE.npz PC.npy OUT_DIR [options]

BASE_DIR is a NeoBERT checkpoint with D-dim heads (config.json,
model.safetensors with the MLM head, tokenizer.model); GLOVE.npz is
`sif.py convert`'s output; PC.npy the SIF common component (`sif.py
teacher`'s OUT.pc.npy). OUT_DIR gets an F32 checkpoint of hidden size
C + G (G = --dims rounded up to whole heads of the base's head size D; the
dims past --dims stay zero) that:

  * computes the base model exactly on dims 0..C-1 (the "old channel"): every
    weight that reads the residual stream has zero columns for the new dims,
    every weight that writes it has zero rows there, and the extra head's
    q/k/v rows are zero. RMSNorm averages over C + G dims, so the old
    channel's norm weights are multiplied by sqrt((C + G·share) / (C + G))
    to give the same scale (share = the new dims' mean square relative to
    the old ones' in the embeddings, --share; it shrinks with depth as the
    residual stream grows, so the correction is exact to within share·G/C);
  * carries, on dims C..C+G-1, a per-piece vector that no layer reads or
    writes: the residual stream passes it through unchanged, and the final
    RMSNorm's weight (--lam / sqrt(share)) brings it back: at the output the
    new dims are --lam × (the channel at the old embeddings' magnitude) / RMS,
    which sets their share of the mean-pooled sentence vector;
  * keeps the MLM head's logits: decoder columns for the new dims are zero.

The per-piece vectors are solved so that the sum of a word's pieces
approximates its SIF-weighted GloVe vector with the common component
removed (research/glove/sif.py's teacher, word by word): the GloVe vocabulary's
most frequent --words alphanumeric words are tokenized by `neodb tokenize`
with the base model's tokenizer (one word per line, so a word gets the "▁"
prefix it has after a space in running text), and the frequency-weighted
ridge least-squares problem
    min_V  Σ_w p(w)^power ‖Σ_{piece ∈ w} V[piece] − sif(w)·(g_w − (g_w·pc)pc)‖² + ridge‖V‖²
is solved through its normal equations (vocab × vocab). The solution is
projected onto its G leading principal directions (frequency-weighted).
With --rms-texts, each piece vector is also multiplied by the base model's
mean final-layer RMS of that piece in running text (relative to the mean
over all tokens): the final RMSNorm divides each token by its own RMS,
which the old channel dominates, and this folds the average of that factor
back out. Pieces no word uses, and the special tokens, get zero.

Options: --words N (200000), --dims (100 = all of GloVe, two heads; 64 fits
one head), --share (0.01), --lam (600), --sif-a (3e-4: the SIF weight
a / (a + p(w)); smaller than sif.py's 1e-3), --power (1.0), --ridge (1e-4, relative to the mean diagonal), --rms-texts
FILE (one text per line) and --rms-lines N (2000), --zero-channel (the new
dims all zero: for checking that the old channel is reproduced), --neodb BIN,
--pieces-out FILE.npz (the solved piece table, for inspection).
numpy only; writes F32 (convert with `neodb model convert --dtype f16`).
"""

import argparse
import json
import math
import os
import re
import shutil
import struct
import subprocess
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "reference"))
import neobert_ref  # noqa: E402
import sif as sifmod  # noqa: E402

_ALNUM = re.compile(r"^[a-z0-9]+$")
_LAYER_NAMES = ("attention_norm.weight", "qkv.weight", "wo.weight", "ffn_norm.weight",
                "ffn.w12.weight", "ffn.w3.weight")


def fail(msg):
    sys.exit("glove_channel: " + msg)


# ---------------------------------------------------------------- checkpoint I/O
def load_base(base):
    try:
        with open(os.path.join(base, "config.json"), encoding="utf-8") as f:
            cfg = json.load(f)
        tensors = neobert_ref.read_safetensors(os.path.join(base, "model.safetensors"))
    except (OSError, ValueError, KeyError) as e:
        fail("cannot read the checkpoint in %s: %s" % (base, e))
    if cfg.get("model_type") != "neobert":
        fail("%s: model_type is %r, not neobert" % (base, cfg.get("model_type")))
    for k in ("hidden_size", "num_attention_heads", "num_hidden_layers", "vocab_size", "intermediate_size"):
        if not isinstance(cfg.get(k), int) or cfg[k] <= 0:
            fail("%s: config key %s is missing or not a positive integer" % (base, k))
    # Accept names with or without "model."; the output always has the prefix.
    t = {(n[len("model."):] if n.startswith("model.") else n): v for n, v in tensors.items()}
    c, v, layers = cfg["hidden_size"], cfg["vocab_size"], cfg["num_hidden_layers"]
    heads = cfg["num_attention_heads"]
    if c % heads:
        fail("%s: hidden_size %d is not divisible by num_attention_heads %d" % (base, c, heads))
    f = (int(2 * cfg["intermediate_size"] / 3) + 7) // 8 * 8
    want = {"encoder.weight": (v, c), "layer_norm.weight": (c,), "decoder.weight": (v, c),
            "decoder.bias": (v,)}
    for i in range(layers):
        p = "transformer_encoder.%d." % i
        want.update({p + "attention_norm.weight": (c,), p + "qkv.weight": (3 * c, c),
                     p + "wo.weight": (c, c), p + "ffn_norm.weight": (c,),
                     p + "ffn.w12.weight": (2 * f, c), p + "ffn.w3.weight": (c, f)})
    for n, shape in want.items():
        if n not in t:
            fail("%s: tensor %s is missing (the MLM head must be there too)" % (base, n))
        if t[n].shape != shape:
            fail("%s: %s has shape %s, expected %s" % (base, n, t[n].shape, shape))
        if not np.all(np.isfinite(t[n])):
            fail("%s: %s has non-finite values" % (base, n))
    extra = set(t) - set(want)
    if extra:
        fail("%s: unexpected tensors %s" % (base, sorted(extra)[:5]))
    return cfg, t


def write_safetensors(path, tensors):
    """F32, names sorted; the format NEOBERT.md §2 describes."""
    header, offset, blobs = {"__metadata__": {"format": "pt"}}, 0, []
    for name in sorted(tensors):
        a = np.ascontiguousarray(tensors[name], dtype="<f4")
        header[name] = {"dtype": "F32", "shape": list(a.shape), "data_offsets": [offset, offset + a.nbytes]}
        offset += a.nbytes
        blobs.append(a.tobytes())
    h = json.dumps(header, separators=(",", ":")).encode("utf-8")
    h += b" " * (-len(h) % 8)  # keep the data 8-byte aligned
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)))
        f.write(h)
        for b in blobs:
            f.write(b)


# ---------------------------------------------------------------- piece vectors
def tokenize(neodb, model, lines):
    """Token ids of each line ([CLS] … [SEP]), from the model's own tokenizer."""
    data = "".join(x + "\n" for x in lines).encode("utf-8")
    p = subprocess.run([neodb, "tokenize", "--model", model], input=data,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if p.returncode != 0:
        fail("neodb tokenize failed: %s" % p.stderr.decode("utf-8", "replace").strip())
    out = [json.loads(x) for x in p.stdout.decode("utf-8").splitlines()]
    if len(out) != len(lines):
        fail("neodb tokenize returned %d lines for %d" % (len(out), len(lines)))
    return out


def word_targets(sif, pc, n_words, a):
    """(words, targets [n, dims], weights p(w)) for the n most frequent alphanumeric
    GloVe words: the SIF-weighted (weight a / (a + p(w))) vector with the common
    component removed."""
    words, idx = [], []
    for i, w in enumerate(sif.words):
        if _ALNUM.match(w):
            words.append(w)
            idx.append(i)
            if len(words) == n_words:
                break
    idx = np.asarray(idx)
    g = sif.vectors[idx].astype(np.float64)
    g -= np.outer(g @ pc, pc)
    n = len(sif.words)
    p = 1.0 / ((idx + 2.7) * math.log(n))  # sif.py's Zipf estimate
    return words, g * (a / (a + p))[:, None], p


def solve_pieces(pieces, targets, weights, vocab, ridge):
    """Ridge least squares: Σ_w weights[w]·‖Σ_{p∈pieces[w]} V[p] − targets[w]‖² + λ‖V‖²,
    λ = ridge × mean of the Gram matrix's non-zero diagonal."""
    rows, cols, vals = [], [], []
    for w, ps in enumerate(pieces):
        for a in ps:
            for b in ps:
                rows.append(a)
                cols.append(b)
                vals.append(weights[w])
    gram = np.zeros(vocab * vocab)
    np.add.at(gram, np.asarray(rows, dtype=np.int64) * vocab + np.asarray(cols, dtype=np.int64),
              np.asarray(vals))
    gram = gram.reshape(vocab, vocab)
    rhs = np.zeros((vocab, targets.shape[1]))
    flat_w = np.repeat(np.arange(len(pieces)), [len(ps) for ps in pieces])
    flat_p = np.concatenate([np.asarray(ps, dtype=np.int64) for ps in pieces])
    np.add.at(rhs, flat_p, targets[flat_w] * weights[flat_w, None])
    diag = np.diag(gram).copy()
    used = diag > 0
    lam = ridge * diag[used].mean()
    sub = gram[np.ix_(used, used)]
    sub[np.diag_indices_from(sub)] += lam
    v = np.zeros_like(rhs)
    v[used] = np.linalg.solve(sub, rhs[used])
    piece_weight = np.zeros(vocab)  # how often each piece occurs, word-frequency weighted
    np.add.at(piece_weight, flat_p, weights[flat_w])
    return v, piece_weight


def fit_table(sif, pc, neodb, base, n_words, sif_a, power=1.0, ridge=1e-4):
    """The piece table for the n_words most frequent words, tokenized by base's
    tokenizer (words with no piece dropped): (words, pieces, targets, p, v,
    piece_weight), the first four per kept word, v and piece_weight per piece."""
    with open(os.path.join(base, "config.json"), encoding="utf-8") as f:
        vocab = json.load(f)["vocab_size"]
    words, targets, p = word_targets(sif, pc, n_words, sif_a)
    pieces = [ids[1:-1] for ids in tokenize(neodb, base, words)]
    keep = [i for i, ps in enumerate(pieces) if ps]
    pieces = [pieces[i] for i in keep]
    targets, p = targets[keep], p[keep]
    v, piece_weight = solve_pieces(pieces, targets, p ** power, vocab, ridge)
    return [words[i] for i in keep], pieces, targets, p, v, piece_weight


def pca_basis(v, piece_weight, dims):
    """The dims leading directions of Σ_p weight_p v_p v_pᵀ (uncentred, as sif.py)."""
    m = (v * piece_weight[:, None]).T @ v
    evals, evecs = np.linalg.eigh(m)
    order = np.argsort(-evals)
    kept = float(evals[order[:dims]].sum() / evals.sum())
    return evecs[:, order[:dims]], kept


class _RmsProbe(neobert_ref.NeoBert):
    """The numpy reference, remembering the RMS of the last RMSNorm's input (the final one)."""

    def _rms(self, x, weight):
        self.last_rms = np.sqrt(np.mean(x * x, axis=-1) + self.eps)
        return super()._rms(x, weight)


def final_rms_per_piece(base, neodb, texts, vocab):
    """Mean final-RMSNorm input RMS of each piece over texts, relative to the mean of
    all tokens (1 for pieces never seen)."""
    ref = _RmsProbe(base)
    total, count = np.zeros(vocab), np.zeros(vocab)
    for ids in tokenize(neodb, base, texts):
        ids = ids[: ref.max_length - 1] + ids[-1:]
        ref.last_hidden_state(ids)
        np.add.at(total, ids, ref.last_rms)
        np.add.at(count, ids, 1)
    mean_all = total.sum() / count.sum()
    out = np.ones(vocab)
    seen = count > 0
    out[seen] = total[seen] / count[seen] / mean_all
    return out, float(mean_all)


# ---------------------------------------------------------------- widening
def widen(cfg, t, channel, lam, share):
    """The (C+G)-dim checkpoint of the module docstring; channel [vocab, G] is
    already scaled to the embedding's magnitude; the final norm weight of the
    new dims is lam / scale, scale being passed in as channel's scale."""
    c, g = cfg["hidden_size"], channel.shape[1]
    heads = cfg["num_attention_heads"]
    d = c // heads
    if g % d:
        fail("the new channel must be whole heads wide (a multiple of %d dims), got %d" % (d, g))
    n = c + g
    # RMSNorm over n dims of [old, new], mean_n(x²) = k·mean_c(x²) with
    # k = (c + g·share) / n, equals the old model's over c dims when the
    # weights are multiplied by sqrt(k) and eps by k (the embeddings' mean
    # square is ~5e-4, so eps = 1e-5 is not negligible there).
    ratio = (c + g * share) / n
    comp = math.sqrt(ratio)
    out = {}
    out["model.encoder.weight"] = np.concatenate([t["encoder.weight"], channel], axis=1)
    for i in range(cfg["num_hidden_layers"]):
        p = "transformer_encoder.%d." % i
        for k in ("attention_norm.weight", "ffn_norm.weight"):
            out["model." + p + k] = np.concatenate([t[p + k] * comp, np.zeros(g)])
        # qkv: per head 3·d rows (q, k, v); the new head's rows are zero.
        qkv = np.zeros((3 * n, n))
        qkv[: 3 * c, :c] = t[p + "qkv.weight"]
        out["model." + p + "qkv.weight"] = qkv
        wo = np.zeros((n, n))
        wo[:c, :c] = t[p + "wo.weight"]
        out["model." + p + "wo.weight"] = wo
        w12 = t[p + "ffn.w12.weight"]
        out["model." + p + "ffn.w12.weight"] = np.concatenate([w12, np.zeros((w12.shape[0], g))], axis=1)
        w3 = t[p + "ffn.w3.weight"]
        out["model." + p + "ffn.w3.weight"] = np.concatenate([w3, np.zeros((g, w3.shape[1]))], axis=0)
    out["model.layer_norm.weight"] = np.concatenate([t["layer_norm.weight"] * comp, np.full(g, lam)])
    out["decoder.weight"] = np.concatenate([t["decoder.weight"], np.zeros((cfg["vocab_size"], g))], axis=1)
    out["decoder.bias"] = t["decoder.bias"]
    new_cfg = dict(cfg)
    new_cfg.update(hidden_size=n, num_attention_heads=heads + g // d, torch_dtype="float32",
                   norm_eps=float(cfg.get("norm_eps", 1e-5)) * ratio)
    if "dim_head" in new_cfg:
        new_cfg["dim_head"] = d
    return new_cfg, out


def write_checkpoint(out_dir, cfg, tensors, base, files=None, check=None):
    """Writes config.json, model.safetensors (F32) and the base's tokenizer files
    (files: {name: bytes} replaces or adds some) into out_dir as one step: all of it
    goes into out_dir.tmp, check(tmp) may veto it (by exiting), then it replaces
    out_dir."""
    tmp = out_dir.rstrip("/") + ".tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    os.makedirs(tmp)
    with open(os.path.join(tmp, "config.json"), "w", encoding="utf-8") as f:
        json.dump(cfg, f, indent=2, sort_keys=True)
        f.write("\n")
    write_safetensors(os.path.join(tmp, "model.safetensors"), tensors)
    for name in ("tokenizer.model", "special_tokens_map.json"):
        if os.path.exists(os.path.join(base, name)):
            shutil.copy(os.path.join(base, name), tmp)
    for name, data in (files or {}).items():
        with open(os.path.join(tmp, name), "wb") as f:
            f.write(data)
    if check:
        check(tmp)
    shutil.rmtree(out_dir, ignore_errors=True)
    os.replace(tmp, out_dir)


def checkpoint_args(ap):
    """The positional arguments every checkpoint-building tool here takes."""
    ap.add_argument("base", help="checkpoint directory to start from (with its MLM head)")
    ap.add_argument("glove", help="GloVe vectors, sif.py convert's npz")
    ap.add_argument("pc", help="the teacher's common component, a unit vector (.npy)")
    ap.add_argument("out", help="directory to write; replaced as a whole")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    checkpoint_args(ap)
    ap.add_argument("--words", type=int, default=200000)
    ap.add_argument("--dims", type=int, default=100)
    ap.add_argument("--share", type=float, default=0.01)
    ap.add_argument("--lam", type=float, default=600.0)
    ap.add_argument("--power", type=float, default=1.0)
    ap.add_argument("--sif-a", type=float, default=3e-4)
    ap.add_argument("--ridge", type=float, default=1e-4)
    ap.add_argument("--rms-texts")
    ap.add_argument("--rms-lines", type=int, default=2000)
    ap.add_argument("--zero-channel", action="store_true")
    ap.add_argument("--neodb", default=os.path.join(HERE, "..", "..", "build", "tools", "neodb", "neodb"))
    ap.add_argument("--pieces-out")
    a = ap.parse_args()
    if a.words < 1000 or not 0 < a.share < 1 or a.lam <= 0 or a.ridge <= 0 or a.dims < 1:
        fail("need --words >= 1000, 0 < --share < 1, --lam > 0, --ridge > 0, --dims >= 1")
    cfg, t = load_base(a.base)
    if not os.path.exists(os.path.join(a.base, "tokenizer.model")):
        fail("%s has no tokenizer.model" % a.base)
    vocab, c = cfg["vocab_size"], cfg["hidden_size"]
    sif = sifmod.Sif(a.glove)
    pc = sifmod.load_pc(a.pc, sif.dim)
    if a.dims > sif.dim:
        fail("--dims %d is more than GloVe's %d" % (a.dims, sif.dim))
    if a.sif_a <= 0:
        fail("--sif-a must be positive")
    head = c // cfg["num_attention_heads"]
    width = -(-a.dims // head) * head  # whole heads; the dims past --dims stay zero

    _, pieces, targets, p, v, piece_weight = fit_table(sif, pc, a.neodb, a.base, a.words, a.sif_a,
                                                       a.power, a.ridge)
    # Fit report: the word-level relative error, token-frequency weighted.
    recon = np.stack([v[ps].sum(0) for ps in pieces])
    err = float((p * ((recon - targets) ** 2).sum(1)).sum() / (p * (targets ** 2).sum(1)).sum())
    basis, kept = pca_basis(v, piece_weight, a.dims)
    channel = np.zeros((vocab, width))
    channel[:, : a.dims] = v @ basis
    print("glove_channel: %d words -> %d pieces with a vector; relative fit error %.3f; "
          "PCA %d -> %d keeps %.3f of the variance" % (len(pieces), int((piece_weight > 0).sum()),
                                                       err, sif.dim, a.dims, kept))
    if a.rms_texts:
        with open(a.rms_texts, encoding="utf-8") as f:
            texts = [line.strip() for _, line in zip(range(a.rms_lines), f) if line.strip()]
        rel, mean_rms = final_rms_per_piece(a.base, a.neodb, texts, vocab)
        channel *= rel[:, None]
        print("glove_channel: final RMS over %d texts: mean %.2f, per-piece factor %.2f..%.2f "
              "(5th..95th percentile of seen pieces)" % (len(texts), mean_rms,
                                                          *np.percentile(rel[rel != 1], [5, 95])))
    if a.pieces_out:
        np.savez(a.pieces_out, full=v, channel=channel, piece_weight=piece_weight)
    # Specials ([PAD] [UNK] [CLS] [SEP] [MASK] = 0..4) stay zero.
    channel[:5] = 0
    old_ms = float((t["encoder.weight"][5:] ** 2).mean())
    new_ms = float((channel[5:, : a.dims] ** 2).mean())
    scale = math.sqrt(a.share * old_ms / new_ms)
    if a.zero_channel:
        channel[:] = 0
    channel *= scale
    # The new dims leave the final norm as lam × (the channel at the old
    # embeddings' mean square) / RMS: lam = 1 gives both channels the same
    # magnitude per dim going in, whatever the GloVe vectors' own scale.
    lam = a.lam / math.sqrt(a.share)
    if lam > 60000:
        fail("the final norm weight %g would overflow F16; raise --share or lower --lam" % lam)
    share = 0.0 if a.zero_channel else a.share * a.dims / width  # over all new dims
    new_cfg, out = widen(cfg, t, channel, lam, share)
    write_checkpoint(a.out, new_cfg, out, a.base)
    print("glove_channel: wrote %s (hidden %d, scale %.4g, final weight of the new dims %.4g)"
          % (a.out, new_cfg["hidden_size"], scale, lam))


if __name__ == "__main__":
    main()
