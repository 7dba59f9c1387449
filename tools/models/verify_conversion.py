#!/usr/bin/env python3
"""Checks a model directory written by onnx_to_safetensors.py against the ONNX
file it came from, on a fixed set of English sentences, in two steps (the ONNX
side and the transformers side usually live in different virtual environments):

  1. python verify_conversion.py onnx --onnx FILE.onnx --tokenizer tokenizer.json \
         --dir CONVERTED --save ref.npz
     tokenizes with the package's own tokenizer.json (tokenizers), runs the ONNX
     graph in onnxruntime, pools as CONVERTED's 1_Pooling/modules.json say
     (CLS or masked mean, then L2-normalize if a Normalize module is listed) and
     saves token ids and embeddings.
  2. python verify_conversion.py hf --dir CONVERTED --ref ref.npz [--other DIR]
     loads CONVERTED with transformers' BertModel and AutoTokenizer, checks the
     token ids are identical, pools the same way and prints, per sentence, the
     cosine between the two embeddings; exits 1 if any is below --min-cos
     (default 0.99999). --other compares every tensor with a second checkpoint
     of the same model (e.g. an HF safetensors of all-MiniLM-L6-v2).
"""
import argparse
import json
import os
import sys

import numpy as np

SENTENCES = [
    "The quick brown fox jumps over the lazy dog.",
    "query: how much protein should a female eat",
    "passage: As a general guideline, the CDC's average requirement of protein for women "
    "ages 19 to 70 is 46 grams per day.",
    "Represent this sentence for searching relevant passages: what is a vector database?",
    "A vector database stores embeddings and answers nearest-neighbour queries quickly.",
    "Résumé of the naïve café owner: 12 years' experience, fluent in Français & English!",
    "PostgreSQL 16.2 crashed with SIGSEGV at 03:14 UTC; see ticket #4521 (priority P1).",
    "I love it.",
    "Transformers apply self-attention over token sequences; BERT uses WordPiece tokens, "
    "learned absolute position embeddings, and a post-LayerNorm encoder stack that was "
    "pre-trained with masked language modelling on BooksCorpus and English Wikipedia, "
    "then fine-tuned by many groups for retrieval with contrastive objectives.",
    "東京 is the capital of Japan, and Zürich is in Switzerland.",
    "def add(a, b):\n    return a + b  # simple Python function",
    "北京是中国的首都，也是一座历史悠久的城市。",
    "如何在Python中反转一个列表？",
    # Long enough to be cut at max_seq_length, so every position embedding is used.
    " ".join(f"Paragraph {i}: the index rebuild finished after {i * 7} seconds, and the "
             f"operator noted that shard {i % 5} lagged behind its replicas." for i in range(40)),
]


def pooling_of(d):
    mods = json.load(open(os.path.join(d, "modules.json")))
    normalize = any(m["type"].endswith(".Normalize") for m in mods)
    pdir = next(m["path"] for m in mods if m["type"].endswith(".Pooling"))
    pc = json.load(open(os.path.join(d, pdir, "config.json")))
    mode = "cls" if pc.get("pooling_mode_cls_token") else "mean"
    msl = json.load(open(os.path.join(d, "sentence_bert_config.json")))["max_seq_length"]
    return mode, normalize, msl


def pool(hidden, mask, mode, normalize):
    hidden = hidden.astype(np.float64)
    if mode == "cls":
        v = hidden[:, 0]
    else:
        m = mask[:, :, None].astype(np.float64)
        v = (hidden * m).sum(1) / np.maximum(m.sum(1), 1e-9)
    if normalize:
        v = v / np.linalg.norm(v, axis=1, keepdims=True)
    return v


def run_onnx(a):
    import onnxruntime as ort
    from tokenizers import Tokenizer
    mode, normalize, msl = pooling_of(a.dir)
    tok = Tokenizer.from_file(a.tokenizer)
    tok.no_padding()
    tok.enable_truncation(msl)
    encs = tok.encode_batch(SENTENCES)
    n = max(len(e.ids) for e in encs)
    ids = np.zeros((len(encs), n), np.int64)
    mask = np.zeros_like(ids)
    for i, e in enumerate(encs):
        ids[i, :len(e.ids)] = e.ids
        mask[i, :len(e.ids)] = 1
    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    sess = ort.InferenceSession(a.onnx, so, providers=["CPUExecutionProvider"])
    feeds = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
    feeds = {i.name: feeds[i.name] for i in sess.get_inputs()}
    outs = sess.get_outputs()
    # The token-level output: [batch, seq, hidden].
    names = [o.name for o in outs]
    res = sess.run(None, feeds)
    hidden = next(r for r in res if r.ndim == 3)
    emb = pool(hidden, mask, mode, normalize)
    extra = {}
    # Graphs that also pool (a whole sentence-transformers export) give [batch, hidden] too.
    pooled = [r for r in res if r.ndim == 2 and r.shape == emb.shape]
    if pooled:
        p = pooled[0].astype(np.float64)
        cos = (p * emb).sum(1) / np.linalg.norm(p, axis=1) / np.linalg.norm(emb, axis=1)
        extra["graph_pooled"] = p
        print(f"graph's own pooled output vs pooling here: min cosine {cos.min():.8f}")
    np.savez(a.save, ids=ids, mask=mask, emb=emb, **extra)
    print(f"onnx: {a.onnx}: outputs {names}; {len(SENTENCES)} sentences, max {n} tokens, "
          f"pooling {mode}, normalize {normalize}, onnxruntime {ort.__version__}; saved {a.save}")


def run_hf(a):
    import torch
    import transformers
    from transformers import AutoTokenizer, BertModel
    torch.set_num_threads(1)
    mode, normalize, msl = pooling_of(a.dir)
    ref = np.load(a.ref)
    tok = AutoTokenizer.from_pretrained(a.dir)
    enc = tok(SENTENCES, padding=True, truncation=True, max_length=msl, return_tensors="np")
    ids_ok = enc["input_ids"].shape == ref["ids"].shape and (enc["input_ids"] == ref["ids"]).all()
    # The slow-path check: vocab.txt alone, as neodb reads it.
    cfg = json.load(open(os.path.join(a.dir, "tokenizer_config.json")))
    vt = transformers.BertTokenizer(os.path.join(a.dir, "vocab.txt"),
                                    do_lower_case=cfg["do_lower_case"],
                                    strip_accents=cfg.get("strip_accents"))
    enc2 = vt(SENTENCES, padding=True, truncation=True, max_length=msl, return_tensors="np")
    vocab_ok = enc2["input_ids"].shape == ref["ids"].shape and (enc2["input_ids"] == ref["ids"]).all()
    model = BertModel.from_pretrained(a.dir, attn_implementation="eager").eval()
    with torch.no_grad():
        out = model(input_ids=torch.tensor(ref["ids"]), attention_mask=torch.tensor(ref["mask"]),
                    token_type_ids=torch.zeros_like(torch.tensor(ref["ids"])))
    emb = pool(out.last_hidden_state.numpy(), ref["mask"], mode, normalize)
    r = ref["emb"]
    cos = (emb * r).sum(1) / np.linalg.norm(emb, axis=1) / np.linalg.norm(r, axis=1)
    maxabs = np.abs(emb - r).max()
    print(f"hf: {a.dir}: transformers {transformers.__version__}, torch {torch.__version__}")
    print(f"token ids identical: tokenizer.json/AutoTokenizer {bool(ids_ok)}, "
          f"vocab.txt/BertTokenizer {bool(vocab_ok)}")
    print("cosine per sentence: " + " ".join(f"{c:.8f}" for c in cos))
    print(f"min cosine {cos.min():.10f} (1 - min = {1 - cos.min():.2e}), max |diff| {maxabs:.3e}")
    ok = ids_ok and vocab_ok and cos.min() >= a.min_cos
    if a.other:
        from safetensors.numpy import load_file
        mine = load_file(os.path.join(a.dir, "model.safetensors"))
        other = {k.removeprefix("bert."): v
                 for k, v in load_file(os.path.join(a.other, "model.safetensors")).items()}
        shared = sorted(set(mine) & set(other))
        worst = max(float(np.abs(mine[k] - other[k]).max()) for k in shared)
        only_other = sorted(set(other) - set(mine))
        print(f"vs {a.other}: {len(shared)} shared tensors, max |diff| {worst:.3e}; "
              f"missing here: {only_other}; extra here: {sorted(set(mine) - set(other))}")
    print("PASS" if ok else "FAIL")
    sys.exit(0 if ok else 1)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    o = sub.add_parser("onnx")
    o.add_argument("--onnx", required=True)
    o.add_argument("--tokenizer", required=True)
    o.add_argument("--dir", required=True)
    o.add_argument("--save", required=True)
    h = sub.add_parser("hf")
    h.add_argument("--dir", required=True)
    h.add_argument("--ref", required=True)
    h.add_argument("--other")
    h.add_argument("--min-cos", type=float, default=0.99999)
    a = ap.parse_args()
    run_onnx(a) if a.cmd == "onnx" else run_hf(a)


if __name__ == "__main__":
    main()
