#!/usr/bin/python3
"""Writes a NeoBERT checkpoint (config.json + model.safetensors, NEOBERT.md §2) as an ONNX
model, for the ONNX Runtime comparison in bench/README.md. Not a test; needs only numpy and
Debian's python3-onnx (no torch).

The graph follows NEOBERT.md §3 with fixed shapes: input `ids` int64 [batch, length] (every
sequence exactly `length` tokens, no padding), output `pooled` F32 [batch, C] = masked-free
mean over the tokens of last_hidden_state (neodb's Pooling::kMean). Q/K/V rows are
regrouped once into [Q | K | V] blocks; RoPE rotates adjacent pairs with angles
position × inverse frequency computed in F32, as the reference does.

    /usr/bin/python3 bench/onnx_export.py --model DIR --batch 8 --length 512 --out m.onnx
"""
import argparse
import json
import struct

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

NP = {"F32": np.float32, "F16": np.float16}


def load_safetensors(path):
    with open(path, "rb") as fp:
        (n,) = struct.unpack("<Q", fp.read(8))
        header = json.loads(fp.read(n))
        data = fp.read()
    out = {}
    for name, meta in header.items():
        if name == "__metadata__":
            continue
        b, e = meta["data_offsets"]
        if meta["dtype"] == "BF16":
            raw = np.frombuffer(data[b:e], dtype=np.uint16).astype(np.uint32) << 16
            arr = raw.view(np.float32)
        else:
            arr = np.frombuffer(data[b:e], dtype=NP[meta["dtype"]]).astype(np.float32)
        key = name[len("model."):] if name.startswith("model.") else name
        out[key] = arr.reshape(meta["shape"])
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", required=True)
    ap.add_argument("--batch", type=int, required=True)
    ap.add_argument("--length", type=int, required=True)
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    cfg = json.load(open(a.model + "/config.json"))
    w = load_safetensors(a.model + "/model.safetensors")
    C, H = cfg["hidden_size"], cfg["num_attention_heads"]
    D, layers, eps = C // H, cfg["num_hidden_layers"], float(cfg.get("norm_eps", 1e-5))
    theta = float(cfg.get("rope_theta", 10000.0))
    B, L = a.batch, a.length
    nodes, inits = [], []
    counter = [0]

    def name(prefix):
        counter[0] += 1
        return f"{prefix}_{counter[0]}"

    def const(arr, prefix="c"):
        n = name(prefix)
        inits.append(numpy_helper.from_array(np.ascontiguousarray(arr), n))
        return n

    def op(kind, inputs, **attrs):
        out = name(kind.lower())
        nodes.append(helper.make_node(kind, inputs, [out], **attrs))
        return out

    def ops(kind, inputs, n_out, **attrs):
        outs = [name(kind.lower()) for _ in range(n_out)]
        nodes.append(helper.make_node(kind, inputs, outs, **attrs))
        return outs

    eps_c = const(np.array(eps, np.float32), "eps")

    two_c = const(np.array(2.0, np.float32), "two")

    def rms(x, weight):
        # Pow → ReduceMean → Add → Sqrt → Div → Mul: what a PyTorch export of
        # x * rsqrt(mean(x²) + eps) * w gives, and the pattern ONNX Runtime
        # fuses into one SimplifiedLayerNormalization.
        ms = op("ReduceMean", [op("Pow", [x, two_c])], axes=[-1], keepdims=1)
        normed = op("Div", [x, op("Sqrt", [op("Add", [ms, eps_c])])])
        return op("Mul", [normed, const(weight.astype(np.float32), "norm")])

    # RoPE tables [L, D/2, 1]: angle = position × inv_freq, in F32.
    inv_freq = (1.0 / (theta ** (np.arange(0, D, 2, dtype=np.float32) / np.float32(D)))).astype(np.float32)
    ang = (np.arange(L, dtype=np.float32)[:, None] * inv_freq[None, :]).astype(np.float32)
    cos_c = const(np.cos(ang).astype(np.float32)[:, :, None], "cos")
    sin_c = const(np.sin(ang).astype(np.float32)[:, :, None], "sin")
    shape_bhl2 = const(np.array([B, H, L, D // 2, 2], np.int64), "shape")
    shape_bhld = const(np.array([B, H, L, D], np.int64), "shape")
    shape_blhd = const(np.array([B, L, H, D], np.int64), "shape")
    shape_blc = const(np.array([B, L, C], np.int64), "shape")

    def rope(t):  # t [B, H, L, D]
        p = op("Reshape", [t, shape_bhl2])
        x0, x1 = ops("Split", [p], 2, axis=-1)
        o0 = op("Sub", [op("Mul", [x0, cos_c]), op("Mul", [x1, sin_c])])
        o1 = op("Add", [op("Mul", [x0, sin_c]), op("Mul", [x1, cos_c])])
        return op("Reshape", [op("Concat", [o0, o1], axis=-1), shape_bhld])

    x = op("Gather", [const(w["encoder.weight"], "emb"), "ids"], axis=0)
    scale_c = const(np.array(1.0 / np.sqrt(D), np.float32), "scale")
    perm = np.concatenate([np.concatenate([np.arange(3 * D * h + j * D, 3 * D * h + (j + 1) * D)
                                           for h in range(H)]) for j in range(3)])
    for i in range(layers):
        p = f"transformer_encoder.{i}."
        a_ = rms(x, w[p + "attention_norm.weight"])
        qkv = op("MatMul", [a_, const(w[p + "qkv.weight"][perm].T, "wqkv")])
        q, k, v = ops("Split", [qkv], 3, axis=-1)
        heads = [op("Transpose", [op("Reshape", [t, shape_blhd])], perm=[0, 2, 1, 3]) for t in (q, k, v)]
        # The scale on q before q·kᵀ (one pass over [B, H, L, D], not [B, H, L, L]).
        q, k, v = op("Mul", [rope(heads[0]), scale_c]), rope(heads[1]), heads[2]
        s = op("MatMul", [q, op("Transpose", [k], perm=[0, 1, 3, 2])])
        o = op("MatMul", [op("Softmax", [s], axis=-1), v])
        o = op("Reshape", [op("Transpose", [o], perm=[0, 2, 1, 3]), shape_blc])
        x = op("Add", [x, op("MatMul", [o, const(w[p + "wo.weight"].T, "wo")])])
        f = rms(x, w[p + "ffn_norm.weight"])
        u = op("MatMul", [f, const(w[p + "ffn.w12.weight"].T, "w12")])
        g, l = ops("Split", [u], 2, axis=-1)
        s = op("Mul", [op("Mul", [g, op("Sigmoid", [g])]), l])
        x = op("Add", [x, op("MatMul", [s, const(w[p + "ffn.w3.weight"].T, "w3")])])
    h = rms(x, w["layer_norm.weight"])
    nodes.append(helper.make_node("ReduceMean", [h], ["pooled"], axes=[1], keepdims=0))
    graph = helper.make_graph(
        nodes, "neobert",
        [helper.make_tensor_value_info("ids", TensorProto.INT64, [B, L])],
        [helper.make_tensor_value_info("pooled", TensorProto.FLOAT, [B, C])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.save(model, a.out, save_as_external_data=True, all_tensors_to_one_file=True,
              location=a.out.split("/")[-1] + ".data")


if __name__ == "__main__":
    main()
