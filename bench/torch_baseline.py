#!/usr/bin/env python3
"""A plain PyTorch NeoBERT (NEOBERT.md §3) as the speed baseline for the CUDA backend.

Reads config.json + model.safetensors written by `cuda_encoder_bench --write_checkpoint DIR`
(the same random weights), runs the model in BF16 with
torch.nn.functional.scaled_dot_product_attention, and times the same lengths and batch
sizes as the C++ bench (batches of max(1, tokens // L) sequences of exactly L tokens,
forward + mean pooling, ids copied to the GPU each pass).

--compare DIR checks, in F32 on the GPU, that this implementation and the C++ backend
compute the same function: it reads DIR/ids.i32, DIR/offsets.i64, DIR/pooled_mean.f32
(written by `cuda_encoder_bench --dump DIR`) and prints the cosine per sequence.

No dependency beyond torch (the safetensors file is parsed here).
"""
import argparse
import json
import math
import os
import struct
import sys
import time

import torch
import torch.nn.functional as F

DTYPES = {"F32": torch.float32, "F16": torch.float16, "BF16": torch.bfloat16}


def load_safetensors(path, device, dtype):
    with open(path, "rb") as fp:
        (n,) = struct.unpack("<Q", fp.read(8))
        header = json.loads(fp.read(n))
        data = fp.read()
    out = {}
    for name, meta in header.items():
        if name == "__metadata__":
            continue
        begin, end = meta["data_offsets"]
        t = torch.frombuffer(bytearray(data[begin:end]), dtype=DTYPES[meta["dtype"]])
        out[name.removeprefix("model.")] = t.reshape(meta["shape"]).to(device=device, dtype=dtype)
    return out


class NeoBert:
    def __init__(self, ckpt_dir, device, dtype, f32_residual):
        with open(os.path.join(ckpt_dir, "config.json")) as fp:
            cfg = json.load(fp)
        self.c = cfg["hidden_size"]
        self.heads = cfg["num_attention_heads"]
        self.d = self.c // self.heads
        self.layers = cfg["num_hidden_layers"]
        self.eps = cfg["norm_eps"]
        self.theta = cfg.get("rope_theta", 10000.0)
        self.dtype = dtype
        self.device = device
        self.w = load_safetensors(os.path.join(ckpt_dir, "model.safetensors"), device, dtype)
        # By default everything is in `dtype`, as Hugging Face's model after
        # .to(torch.bfloat16) (the fastest plain variant); --f32_residual keeps the
        # embeddings, norms and residual stream in F32 like neodb does.
        self.res_dtype = torch.float32 if f32_residual else dtype
        for k in list(self.w):
            if k.endswith("norm.weight") or k == "encoder.weight":
                self.w[k] = self.w[k].to(self.res_dtype)
        self.rope_cache = {}

    def rope(self, length):
        if length not in self.rope_cache:
            inv_freq = 1.0 / (self.theta ** (torch.arange(0, self.d, 2, device=self.device).float() / self.d))
            t = torch.arange(length, device=self.device).float()
            freqs = torch.outer(t, inv_freq)  # [L, D/2], F32 as the reference
            self.rope_cache[length] = (freqs.cos(), freqs.sin())
        return self.rope_cache[length]

    def rms_norm(self, x, w):
        # F32 statistics, as LLaMA-style RMSNorm implementations do.
        xf = x.float()
        return (xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + self.eps)).to(w.dtype) * w

    def apply_rope(self, x, cos, sin):
        # x [B, L, H, D]; adjacent pairs (2i, 2i+1).
        xf = x.float()
        x0, x1 = xf[..., 0::2], xf[..., 1::2]
        cos, sin = cos[None, :, None, :], sin[None, :, None, :]
        return torch.stack((x0 * cos - x1 * sin, x0 * sin + x1 * cos), dim=-1).flatten(-2).to(x.dtype)

    @torch.no_grad()
    def forward(self, ids):
        """ids [B, L] (all sequences of equal length, no padding) -> last_hidden_state F32."""
        b, length = ids.shape
        cos, sin = self.rope(length)
        x = self.w["encoder.weight"][ids]  # residual stream in res_dtype
        for i in range(self.layers):
            p = f"transformer_encoder.{i}."
            h = self.rms_norm(x, self.w[p + "attention_norm.weight"]).to(self.dtype)
            qkv = (h @ self.w[p + "qkv.weight"].T).view(b, length, self.heads, 3 * self.d)
            q, k, v = qkv.split(self.d, dim=-1)  # head-interleaved (NEOBERT.md §3)
            q, k = self.apply_rope(q, cos, sin), self.apply_rope(k, cos, sin)
            o = F.scaled_dot_product_attention(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2))
            o = o.transpose(1, 2).reshape(b, length, self.c)
            x = x + (o @ self.w[p + "wo.weight"].T).to(self.res_dtype)
            h = self.rms_norm(x, self.w[p + "ffn_norm.weight"]).to(self.dtype)
            g, lin = (h @ self.w[p + "ffn.w12.weight"].T).chunk(2, dim=-1)
            x = x + ((F.silu(g) * lin) @ self.w[p + "ffn.w3.weight"].T).to(self.res_dtype)
        return self.rms_norm(x, self.w["layer_norm.weight"]).float()


def compare(args):
    # A true F32 reference: no TF32 in matmuls.
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.set_float32_matmul_precision("highest")
    model = NeoBert(args.checkpoint, "cuda", torch.float32, f32_residual=True)
    with open(os.path.join(args.compare, "ids.i32"), "rb") as fp:
        ids = torch.frombuffer(bytearray(fp.read()), dtype=torch.int32)
    with open(os.path.join(args.compare, "offsets.i64"), "rb") as fp:
        offsets = torch.frombuffer(bytearray(fp.read()), dtype=torch.int64).tolist()
    with open(os.path.join(args.compare, "pooled_mean.f32"), "rb") as fp:
        ours = torch.frombuffer(bytearray(fp.read()), dtype=torch.float32).view(len(offsets) - 1, -1)
    worst = 1.0
    for b in range(len(offsets) - 1):
        seq = ids[offsets[b]:offsets[b + 1]].long().cuda()[None]
        ref = model.forward(seq)[0].mean(0).cpu()
        cos = F.cosine_similarity(ref.double(), ours[b].double(), dim=0).item()
        rel = ((ref - ours[b]).abs().max() / ref.abs().max()).item()
        worst = min(worst, cos)
        print(f"  compare: sequence {b} length {offsets[b + 1] - offsets[b]}: cosine {cos:.7f}, max rel err {rel:.3g}")
    print(f"compare: worst cosine torch F32 vs neodb CUDA {worst:.7f} ({'OK' if worst >= 0.9999 else 'MISMATCH'})")
    del model
    torch.cuda.empty_cache()
    return worst


def bench(args):
    model = NeoBert(args.checkpoint, "cuda", torch.bfloat16, args.f32_residual)
    gen = torch.Generator().manual_seed(args.seed)
    rows = []
    print(f"torch {torch.__version__}, device {torch.cuda.get_device_name()}")
    print(f"{'length':>7} {'batch':>6} {'tokens/s':>12} {'ms/pass':>10}")
    for length in args.lengths:
        batch = max(1, args.tokens // length)
        ids_cpu = torch.randint(0, 30522, (batch, length), generator=gen, dtype=torch.int64)
        try:
            def step():
                ids = ids_cpu.to("cuda", non_blocking=False)
                return model.forward(ids).mean(1)
            for _ in range(2):
                step()
            torch.cuda.synchronize()
            calls, elapsed, n = 0, 0.0, 1
            while elapsed < args.min_seconds:
                start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                start.record()
                for _ in range(n):
                    step()
                stop.record()
                stop.synchronize()
                elapsed += start.elapsed_time(stop) / 1e3
                calls += n
                n = min(n * 2, 64)
            sec = elapsed / calls
            tps = batch * length / sec
            print(f"{length:7d} {batch:6d} {tps:12.0f} {sec * 1e3:10.2f}", flush=True)
            rows.append({"length": length, "batch": batch, "tokens_per_s": tps})
        except torch.cuda.OutOfMemoryError:
            print(f"{length:7d} {batch:6d} {'OOM':>12}", flush=True)
            rows.append({"length": length, "batch": batch, "tokens_per_s": None})
            torch.cuda.empty_cache()
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--checkpoint", required=True)
    ap.add_argument("--lengths", default="128,512,1024,2048,4096,8192")
    ap.add_argument("--tokens", type=int, default=16384)
    ap.add_argument("--min_seconds", type=float, default=2.0)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--compare", help="dump dir of cuda_encoder_bench --dump")
    ap.add_argument("--json", help="write the results here")
    ap.add_argument("--f32_residual", action="store_true",
                    help="F32 embeddings/norms/residual (default: all BF16, the faster plain variant)")
    args = ap.parse_args()
    args.lengths = [int(x) for x in args.lengths.split(",")]
    if not torch.cuda.is_available():
        print("torch_baseline: no CUDA device visible to torch", file=sys.stderr)
        return 1
    result = {"torch": torch.__version__, "device": torch.cuda.get_device_name(),
              "residual": "F32" if args.f32_residual else "BF16"}
    if args.compare:
        result["compare_worst_cosine"] = compare(args)
    result["rows"] = bench(args)
    if args.json:
        with open(args.json, "w") as fp:
            json.dump(result, fp, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
