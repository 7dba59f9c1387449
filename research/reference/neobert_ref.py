#!/usr/bin/python3
"""Independent numpy reference of the NeoBERT encoder forward pass.

Written from NEOBERT.md (sections 1-3, 5), not from the C++ code. Reads a
checkpoint directory (config.json + model.safetensors, or model.safetensors.zst
through the zstd tool) with json + numpy alone, and computes last_hidden_state
plus [CLS] and mean pooling.

Numerics: weights are read as float32 (F16/BF16 are widened), everything else
is float64, except the RoPE angles, which follow the reference recipe in F32:
inv_freq = float32(1 / theta ** (float32(2i) / float32(D))), angle =
float32(position) * inv_freq in F32; cos/sin of that F32 angle in float64.

Usage as a tool:
  neobert_ref.py CHECKPOINT_DIR 101 7592 2088 102   # prints pooled vectors
"""
import json
import os
import struct
import subprocess
import sys

import numpy as np

_DTYPES = {"F32": np.float32, "F16": np.float16, "F64": np.float64, "I32": np.int32}


def parse_safetensors(data):
    """Returns {name: float32 ndarray} from safetensors bytes. Validates the header's offsets."""
    (n,) = struct.unpack("<Q", data[:8])
    if n > len(data) - 8:
        raise ValueError("header length past end of file")
    header = json.loads(data[8:8 + n].decode("utf-8"))
    body = data[8 + n:]
    out = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        begin, end = info["data_offsets"]
        shape = tuple(info["shape"])
        raw = body[begin:end]
        if info["dtype"] == "BF16":
            u16 = np.frombuffer(raw, dtype="<u2").astype(np.uint32) << 16
            arr = u16.view(np.float32)
        else:
            arr = np.frombuffer(raw, dtype=np.dtype(_DTYPES[info["dtype"]]).newbyteorder("<"))
        if arr.size != int(np.prod(shape, dtype=np.int64)):
            raise ValueError(f"{name}: size does not match shape")
        out[name] = arr.reshape(shape).astype(np.float32)
    return out


def read_safetensors(path):
    """Returns {name: float32 ndarray} from a .safetensors file. When `path` is absent but
    `path`.zst exists (how the default model ships), decompresses that with the zstd
    command-line tool, as the C++ loader does with libzstd."""
    if not os.path.exists(path) and os.path.exists(path + ".zst"):
        zstd = subprocess.run(["zstd", "-dc", path + ".zst"], capture_output=True, check=True)
        return parse_safetensors(zstd.stdout)
    with open(path, "rb") as f:
        return parse_safetensors(f.read())


class NeoBert:
    def __init__(self, checkpoint_dir):
        with open(f"{checkpoint_dir}/config.json") as f:
            cfg = json.load(f)
        self.hidden = int(cfg["hidden_size"])
        self.layers = int(cfg["num_hidden_layers"])
        self.heads = int(cfg["num_attention_heads"])
        self.eps = float(cfg.get("norm_eps", 1e-5))
        self.theta = float(cfg.get("rope_theta", 10000.0))
        self.max_length = int(cfg.get("max_length", cfg.get("max_position_embeddings", 4096)))
        inter = int(cfg["intermediate_size"])
        f = int(2 * inter / 3)
        self.ffn = (f + 7) // 8 * 8
        tensors = read_safetensors(f"{checkpoint_dir}/model.safetensors")
        # Accept names with or without the "model." prefix.
        self.w = {}
        for name, arr in tensors.items():
            key = name[len("model."):] if name.startswith("model.") else name
            self.w[key] = arr.astype(np.float64)
        self.head_dim = self.hidden // self.heads

    def _rms(self, x, weight):
        return x / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + self.eps) * weight

    def _rope(self, x):
        """x: [T, D] for one head; rotates adjacent pairs by position."""
        t, d = x.shape
        idx = np.arange(0, d, 2, dtype=np.float32)
        inv_freq = (1.0 / (self.theta ** (idx / np.float32(d)).astype(np.float64))).astype(np.float32)
        angle = np.arange(t, dtype=np.float32)[:, None] * inv_freq[None, :]  # F32 product
        angle = angle.astype(np.float64)
        cos, sin = np.cos(angle), np.sin(angle)
        x0, x1 = x[:, 0::2], x[:, 1::2]
        out = np.empty_like(x)
        out[:, 0::2] = x0 * cos - x1 * sin
        out[:, 1::2] = x0 * sin + x1 * cos
        return out

    def last_hidden_state(self, ids):
        """ids: list of ints for ONE sequence ([CLS] ... [SEP]). Returns [T, C] float64."""
        ids = np.asarray(ids, dtype=np.int64)
        if len(ids) < 1 or len(ids) > self.max_length:
            raise ValueError("sequence length out of range")
        x = self.w["encoder.weight"][ids]
        d, h = self.head_dim, self.heads
        for i in range(self.layers):
            p = f"transformer_encoder.{i}."
            a = self._rms(x, self.w[p + "attention_norm.weight"])
            y = a @ self.w[p + "qkv.weight"].T  # [T, 3C], per head: q | k | v blocks of D
            y = y.reshape(len(ids), h, 3 * d)
            heads_out = []
            for hh in range(h):
                q = self._rope(y[:, hh, 0:d])
                k = self._rope(y[:, hh, d:2 * d])
                v = y[:, hh, 2 * d:3 * d]
                s = q @ k.T / np.sqrt(d)
                s = np.exp(s - s.max(axis=-1, keepdims=True))
                s /= s.sum(axis=-1, keepdims=True)
                heads_out.append(s @ v)
            o = np.concatenate(heads_out, axis=-1)  # o[:, D*h + e]
            x = x + o @ self.w[p + "wo.weight"].T
            f = self._rms(x, self.w[p + "ffn_norm.weight"])
            u = f @ self.w[p + "ffn.w12.weight"].T
            g, lin = u[:, :self.ffn], u[:, self.ffn:]
            x = x + (g / (1.0 + np.exp(-g)) * lin) @ self.w[p + "ffn.w3.weight"].T
        return self._rms(x, self.w["layer_norm.weight"])

    def pooled(self, ids):
        hs = self.last_hidden_state(ids)
        return {"cls": hs[0], "mean": hs.mean(axis=0), "hidden": hs}


def main(argv):
    model = NeoBert(argv[1])
    out = model.pooled([int(t) for t in argv[2:]])
    print(json.dumps({"cls": out["cls"].tolist(), "mean": out["mean"].tolist()}))


if __name__ == "__main__":
    main(sys.argv)
