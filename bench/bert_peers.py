#!/usr/bin/env python3
"""neodb against PyTorch, ONNX Runtime and OpenVINO on one BERT-family checkpoint, CPU, 1 thread.

Runs `bert_bench` (bench/bert_bench.cc) as a subprocess for neodb's rows and times the same
model in the peer runtimes in the same process run, on the same token ids: for each length L,
batches of max(1, tokens // L) sequences of exactly L tokens ([CLS] + ids + [SEP]; the ids
are bert_bench's formula, and the first --probe sequences are checked against the ids
bert_bench wrote). Every pass returns pooled vectors (the model's pooling, from
1_Pooling/config.json: mean over all tokens, or [CLS]), not normalised.

Runtimes and precisions:
  neodb        f32, bf16, int8 (bert_bench; run twice per length, before and after the peers)
  torch        f32; bf16 = torch.autocast("cpu", torch.bfloat16); int8 = quantize_dynamic on
               nn.Linear (qint8 weights, dynamic per-tensor u8 activations)
  ort          the model exported with torch.onnx.export (input_ids only), ORT_ENABLE_ALL;
               int8 = onnxruntime.quantization.quantize_dynamic (QInt8 weights). No bf16: no
               BF16 compute option was found for ORT's CPU provider on x86 (not tried: a
               graph converted to BF16 types).
  ort-fused    the same export with an attention mask, run through
               onnxruntime.transformers.optimizer (Attention, EmbedLayerNormalization,
               SkipLayerNormalization, BiasGelu fused), then as above
  openvino     the plain ONNX export, reshaped static [B, L], INFERENCE_NUM_THREADS=1,
               INFERENCE_PRECISION_HINT f32 / bf16 (where the CPU reports BF16); int8 =
               nncf.quantize (post-training, TRANSFORMER preset, calibrated on ids from
               other seeds), the non-quantised ops in f32
Timing: --warmup passes, then the median of --reps passes of process CPU time and wall time.
Quality: cosine of each row's pooled vectors of the probe sequences against torch F32's.

    /work/venv-bench/bin/python bench/bert_peers.py --model /work/models/all-minilm-l6-v2 \
        --bench build/bench/bert_bench --peak build/bench/peak_bench --out /tmp/bert_peers.json

Not a test; needs torch, transformers, onnx, onnxruntime, openvino, nncf (versions printed).
"""
import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

M64 = (1 << 64) - 1


def bench_id(s, t, vocab):
    """bert_bench's BenchId: lo + splitmix64(s * 1000003 + t) mod (vocab - lo)."""
    lo = min(1000, vocab // 4)
    z = (s * 1000003 + t + 0x9E3779B97F4A7C15) & M64
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M64
    z ^= z >> 31
    return lo + z % (vocab - lo)


def batch_ids(seqs, length, cls, sep, vocab, seed_offset=0):
    out = np.empty((seqs, length), dtype=np.int64)
    for s in range(seqs):
        out[s, 0] = cls
        out[s, -1] = sep
        for t in range(length - 2):
            out[s, t + 1] = bench_id(s + seed_offset, t, vocab)
    return out


def load():
    return os.getloadavg()[0]


def cpu_info():
    model, flags = "unknown", set()
    with open("/proc/cpuinfo") as fp:
        for line in fp:
            if line.startswith("model name") and model == "unknown":
                model = line.split(":", 1)[1].strip()
            if line.startswith("flags") and not flags:
                flags = set(line.split(":", 1)[1].split())
    wanted = ["avx2", "avx512f", "avx512_bf16", "avx512_vnni", "avx_vnni", "amx_bf16", "amx_int8", "amx_tile"]
    return model, {f: (f in flags) for f in wanted}


def time_passes(fn, warmup, reps):
    out = None
    for _ in range(warmup):
        out = fn()
    walls, cpus = [], []
    for _ in range(reps):
        w0, c0 = time.perf_counter(), time.process_time()
        out = fn()
        cpus.append(time.process_time() - c0)
        walls.append(time.perf_counter() - w0)
    return statistics.median(walls), statistics.median(cpus), out


def cosines(a, b):
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    return (a * b).sum(1) / (np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1))


def run_neodb(args, length):
    """One bert_bench run at one length; returns {precision: row} with the probe vectors."""
    with tempfile.NamedTemporaryFile(suffix=".jsonl", delete=False) as tmp:
        path = tmp.name
    cmd = [args.bench, "--model", args.model, "--lengths", str(length), "--tokens", str(args.tokens),
           "--warmup", str(args.warmup), "--reps", str(args.reps), "--probe", str(args.probe),
           "--precisions", "f32,bf16,int8", "--out", path]
    res = subprocess.run(cmd, capture_output=True, text=True)
    sys.stdout.write(res.stdout)
    if res.returncode != 0:
        sys.exit("bert_bench failed: " + res.stderr)
    rows = {}
    with open(path) as fp:
        for line in fp:
            r = json.loads(line)
            rows.setdefault(r["precision"], {}).update(r)
    os.unlink(path)
    return rows


class Peers:
    """Builds every peer runtime's model once; `runners(L, B)` gives the timed callables."""

    def __init__(self, args, work):
        import torch
        from transformers import AutoModel

        self.args = args
        self.work = work
        torch.set_num_threads(1)
        torch.set_num_interop_threads(1)
        self.torch = torch
        with open(os.path.join(args.model, "config.json")) as fp:
            self.cfg = json.load(fp)
        self.mean = True
        pooling_cfg = os.path.join(args.model, "1_Pooling", "config.json")
        if os.path.exists(pooling_cfg):
            with open(pooling_cfg) as fp:
                self.mean = bool(json.load(fp).get("pooling_mode_mean_tokens", True))
        mean = self.mean

        class Pooled(torch.nn.Module):
            def __init__(self, bert):
                super().__init__()
                self.bert = bert

            def forward(self, input_ids, attention_mask=None, token_type_ids=None):
                h = self.bert(input_ids=input_ids, attention_mask=attention_mask,
                              token_type_ids=token_type_ids).last_hidden_state
                return h.mean(1) if mean else h[:, 0]

        self.model = Pooled(AutoModel.from_pretrained(args.model)).eval()
        self.model_q = torch.ao.quantization.quantize_dynamic(
            Pooled(AutoModel.from_pretrained(args.model)).eval(), {torch.nn.Linear}, dtype=torch.qint8)
        self.notes = []
        self._export(Pooled, AutoModel)
        self._openvino()

    def _export(self, Pooled, AutoModel):
        import onnx
        import onnxruntime as ort
        from onnxruntime.quantization import QuantType, quantize_dynamic
        from onnxruntime.transformers import optimizer

        torch = self.torch
        ex = torch.ones((2, 16), dtype=torch.int64) * 2000
        self.onnx_plain = os.path.join(self.work, "model.onnx")
        torch.onnx.export(self.model, (ex,), self.onnx_plain, input_names=["input_ids"], output_names=["pooled"],
                          dynamic_axes={"input_ids": {0: "batch", 1: "length"}, "pooled": {0: "batch"}},
                          opset_version=17, dynamo=False)
        # The wrapper must be in eval mode before export (the exporter restores the wrapper's
        # mode on every submodule afterwards: a training wrapper would turn dropout on).
        assert not self.model.training and not self.model.bert.training
        # The ORT transformer optimizer fuses BERT attention only on a graph with a mask input.
        eager = Pooled(AutoModel.from_pretrained(self.args.model, attn_implementation="eager")).eval()
        masked = os.path.join(self.work, "model_mask.onnx")
        torch.onnx.export(eager, (ex, torch.ones_like(ex), torch.zeros_like(ex)), masked,
                          input_names=["input_ids", "attention_mask", "token_type_ids"], output_names=["pooled"],
                          dynamic_axes={n: {0: "batch", 1: "length"} for n in
                                        ["input_ids", "attention_mask", "token_type_ids"]} | {"pooled": {0: "batch"}},
                          opset_version=17, dynamo=False)
        opt = optimizer.optimize_model(masked, model_type="bert", num_heads=self.cfg["num_attention_heads"],
                                       hidden_size=self.cfg["hidden_size"])
        fused = {k: v for k, v in opt.get_fused_operator_statistics().items() if v}
        self.notes.append(f"ort-fused graph: {fused}")
        self.onnx_fused = os.path.join(self.work, "model_fused.onnx")
        opt.save_model_to_file(self.onnx_fused)
        self.onnx_q = {}
        for name, src in [("ort", self.onnx_plain), ("ort-fused", self.onnx_fused)]:
            dst = src.replace(".onnx", "_int8.onnx")
            # The fused graph's contrib ops defeat ONNX shape inference: say the default type.
            quantize_dynamic(src, dst, weight_type=QuantType.QInt8,
                             extra_options={"DefaultTensorType": onnx.TensorProto.FLOAT})
            self.onnx_q[name] = dst

        def session(path):
            so = ort.SessionOptions()
            so.intra_op_num_threads = 1
            so.inter_op_num_threads = 1
            so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
            so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
            return ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])

        self.ort = {("ort", "f32"): session(self.onnx_plain), ("ort", "int8"): session(self.onnx_q["ort"]),
                    ("ort-fused", "f32"): session(self.onnx_fused),
                    ("ort-fused", "int8"): session(self.onnx_q["ort-fused"])}

    def _openvino(self):
        import nncf
        import openvino as ov

        self.core = ov.Core()
        caps = self.core.get_property("CPU", "OPTIMIZATION_CAPABILITIES")
        self.ov_bf16 = "BF16" in caps
        self.notes.append(f"openvino CPU: {self.core.get_property('CPU', 'FULL_DEVICE_NAME')}, capabilities {caps}")
        self.ov_model = self.core.read_model(self.onnx_plain)
        # Calibration ids from seeds the timed batches do not use.
        cls, sep = self.special
        vocab = self.cfg["vocab_size"]
        calib = [{"input_ids": batch_ids(4, L, cls, sep, vocab, seed_offset=10**6 + 97 * i)}
                 for i, L in enumerate([32, 64, 128, 256, 512, 128, 32, 64])]
        self.ov_q = nncf.quantize(self.ov_model, nncf.Dataset(calib), model_type=nncf.ModelType.TRANSFORMER,
                                  subset_size=len(calib))

    # [CLS]/[SEP] of BERT's uncased vocabulary until main() reads them from bert_bench's ids
    # (the calibration batches in _openvino use these defaults).
    special = (101, 102)

    def compile_ov(self, model, shape, hint):
        m = model.clone()
        m.reshape({0: list(shape)})
        return self.core.compile_model(m, "CPU", {"INFERENCE_NUM_THREADS": 1, "INFERENCE_PRECISION_HINT": hint,
                                                  "PERFORMANCE_HINT": "LATENCY", "NUM_STREAMS": 1})

    def runners(self, ids):
        """[(runtime, precision, fn or reason)] for one batch of ids [B, L]."""
        torch = self.torch
        x = torch.from_numpy(ids)
        out = []

        def torch_f32():
            with torch.inference_mode():
                return self.model(x).float().numpy()

        def torch_bf16():
            with torch.inference_mode(), torch.autocast("cpu", dtype=torch.bfloat16):
                return self.model(x).float().numpy()

        def torch_int8():
            with torch.inference_mode():
                return self.model_q(x).float().numpy()

        out += [("torch", "f32", torch_f32), ("torch", "bf16", torch_bf16), ("torch", "int8", torch_int8)]
        feed_plain = {"input_ids": ids}
        feed_mask = {"input_ids": ids, "attention_mask": np.ones_like(ids), "token_type_ids": np.zeros_like(ids)}
        for rt, feed in [("ort", feed_plain), ("ort-fused", feed_mask)]:
            for prec in ["f32", "int8"]:
                sess = self.ort[(rt, prec)]
                out.append((rt, prec, lambda s=sess, f=feed: s.run(None, f)[0]))
            out.append((rt, "bf16", "n/a: no BF16 compute option found for ORT's CPU provider on x86"))
        for prec, model, hint in [("f32", self.ov_model, "f32"), ("bf16", self.ov_model, "bf16"),
                                  ("int8", self.ov_q, "f32")]:
            if prec == "bf16" and not self.ov_bf16:
                out.append(("openvino", prec, "n/a: CPU lacks BF16"))
                continue
            req = self.compile_ov(model, ids.shape, hint).create_infer_request()
            out.append(("openvino", prec, lambda r=req: np.array(r.infer({0: ids})[0])))
        return out


def versions():
    import importlib.metadata as md

    v = {"python": platform.python_version()}
    for p in ["torch", "transformers", "onnx", "onnxruntime", "openvino", "nncf", "numpy"]:
        try:
            v[p] = md.version(p)
        except md.PackageNotFoundError:
            v[p] = "absent"
    return v


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--model", required=True)
    ap.add_argument("--bench", default="build/bench/bert_bench")
    ap.add_argument("--peak", default="build/bench/peak_bench", help="'' to skip")
    ap.add_argument("--lengths", default="32,128,512")
    ap.add_argument("--tokens", type=int, default=4096)
    ap.add_argument("--warmup", type=int, default=1)
    ap.add_argument("--reps", type=int, default=7)
    ap.add_argument("--probe", type=int, default=8)
    ap.add_argument("--wait-load", type=float, default=1.3, help="wait for the 1-minute load below this")
    ap.add_argument("--wait-max", type=float, default=1200, help="seconds to wait at most, then measure anyway")
    ap.add_argument("--out", default="", help="write every row (and the vectors' cosines) as JSON")
    args = ap.parse_args()
    lengths = [int(x) for x in args.lengths.split(",")]

    model_name, flags = cpu_info()
    print(f"cpu: {model_name}, {os.cpu_count()} CPUs; flags: " +
          ", ".join(f"{k} {'yes' if v else 'no'}" for k, v in flags.items()))
    ver = versions()
    print("versions: " + ", ".join(f"{k} {v}" for k, v in ver.items()))
    rev = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    print(f"neodb: {rev} (+ working tree), {args.bench}")
    t0 = time.time()
    while load() >= args.wait_load and time.time() - t0 < args.wait_max:
        print(f"  load {load():.2f} >= {args.wait_load}; waiting ({time.time() - t0:.0f} s)", flush=True)
        time.sleep(30)
    loads = [load()]
    print(f"start {time.strftime('%Y-%m-%d %H:%M:%S UTC', time.gmtime())}, load {loads[0]:.2f}", flush=True)
    if args.peak:
        res = subprocess.run([args.peak], capture_output=True, text=True)
        print(res.stdout, flush=True)

    with tempfile.TemporaryDirectory() as work:
        peers = Peers(args, work)
        for n in peers.notes:
            print(n)
        rows = []  # dicts: runtime, precision, length, tokens, wall, cpu, cos (list), note
        for L in lengths:
            neo1 = run_neodb(args, L)
            loads.append(load())
            probe_ids = np.array(neo1["f32"]["ids"], dtype=np.int64)
            cls, sep = int(probe_ids[0, 0]), int(probe_ids[0, -1])
            peers.special = (cls, sep)
            seqs = max(1, args.tokens // L)
            ids = batch_ids(seqs, L, cls, sep, peers.cfg["vocab_size"])
            assert np.array_equal(ids[: len(probe_ids)], probe_ids), "peer ids differ from bert_bench's"
            ref = None
            for rt, prec, fn in peers.runners(ids):
                if isinstance(fn, str):
                    rows.append(dict(runtime=rt, precision=prec, length=L, note=fn))
                    continue
                wall, cpu, vec = time_passes(fn, args.warmup, args.reps)
                loads.append(load())
                vec = np.asarray(vec)[: args.probe]
                if rt == "torch" and prec == "f32":
                    ref = vec
                rows.append(dict(runtime=rt, precision=prec, length=L, tokens=ids.size, wall=wall, cpu=cpu,
                                 cos=cosines(vec, ref).tolist()))
                print(f"  L={L} {rt} {prec}: {ids.size / cpu:.0f} tokens/cpu-s, {ids.size / wall:.0f} tokens/s, "
                      f"min cos {min(rows[-1]['cos']):.6f}, load {loads[-1]:.2f}", flush=True)
            neo2 = run_neodb(args, L)
            loads.append(load())
            for prec in ["f32", "bf16", "int8"]:
                if prec not in neo1:
                    rows.append(dict(runtime="neodb", precision=prec, length=L, note="n/a on this CPU"))
                    continue
                a, b = neo1[prec], neo2[prec]
                cpu = statistics.median(a["cpu_s"] + b["cpu_s"])
                wall = statistics.median(a["wall_s"] + b["wall_s"])
                rows.append(dict(runtime="neodb", precision=prec, length=L, tokens=a["tokens"], wall=wall, cpu=cpu,
                                 runs=[a["tokens_per_cpu_s"], b["tokens_per_cpu_s"]],
                                 cos=cosines(a["vectors"], ref).tolist()))

    print(f"\nend {time.strftime('%Y-%m-%d %H:%M:%S UTC', time.gmtime())}; 1-minute load during the "
          f"measurements: min {min(loads):.2f}, median {statistics.median(loads):.2f}, max {max(loads):.2f}")
    print("\ntokens/cpu-s = tokens per second of process CPU time (median pass); neodb: median of both runs' "
          "passes (run 1 / run 2 in the note); ratio = neodb's tokens/cpu-s at the same length and precision "
          "over the row's; cos = min / mean over the probe sequences against torch F32\n")
    print("| length | precision | runtime | tokens/cpu-s | tokens/s (wall) | neodb ÷ this | min cos | mean cos | note |")
    print("|---:|---|---|---:|---:|---:|---:|---:|---|")
    order = {"neodb": 0, "torch": 1, "ort": 2, "ort-fused": 3, "openvino": 4}
    neo = {(r["length"], r["precision"]): r for r in rows if r["runtime"] == "neodb" and "cpu" in r}
    for r in sorted(rows, key=lambda r: (r["length"], ["f32", "bf16", "int8"].index(r["precision"]),
                                         order[r["runtime"]])):
        if "cpu" not in r:
            print(f"| {r['length']} | {r['precision']} | {r['runtime']} | – | – | – | – | – | {r['note']} |")
            continue
        rate = r["tokens"] / r["cpu"]
        n = neo.get((r["length"], r["precision"]))
        ratio = f"{n['tokens'] / n['cpu'] / rate:.2f}" if n else "–"
        note = f"runs {r['runs'][0]:.0f} / {r['runs'][1]:.0f}" if "runs" in r else ""
        print(f"| {r['length']} | {r['precision']} | {r['runtime']} | {rate:,.0f} | {r['tokens'] / r['wall']:,.0f} | "
              f"{ratio} | {min(r['cos']):.6f} | {statistics.mean(r['cos']):.6f} | {note} |")
    print("\nneodb against the fastest peer (tokens/cpu-s):\n")
    print("| length | precision | neodb | fastest peer | peer | neodb ÷ fastest |")
    print("|---:|---|---:|---|---:|---:|")
    for L in lengths:
        for prec in ["f32", "bf16", "int8"]:
            n = neo.get((L, prec))
            peer = [r for r in rows if r["length"] == L and r["precision"] == prec and r["runtime"] != "neodb"
                    and "cpu" in r]
            if not n or not peer:
                continue
            best = max(peer, key=lambda r: r["tokens"] / r["cpu"])
            nr, br = n["tokens"] / n["cpu"], best["tokens"] / best["cpu"]
            print(f"| {L} | {prec} | {nr:,.0f} | {best['runtime']} | {br:,.0f} | {nr / br:.2f} |")
    if args.out:
        with open(args.out, "w") as fp:
            json.dump({"cpu": model_name, "flags": flags, "versions": ver, "loads": loads, "rows": rows,
                       "notes": peers.notes}, fp, indent=1)


if __name__ == "__main__":
    main()
