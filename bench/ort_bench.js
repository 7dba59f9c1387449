// ONNX Runtime F32 peer for encoder_bench (bench/README.md): runs a model written by
// bench/onnx_export.py on one thread and prints tokens per CPU-second and per wall
// second, with the same token ids encoder_bench uses. Not a test.
//
//   NODE_PATH=DIR/node_modules node bench/ort_bench.js --model m.onnx --batch 8 \
//       --length 512 [--reps 3] [--ids '[101,7592,102]']   (--ids: print the pooled vector)
const ort = require('onnxruntime-node');

function arg(name, dflt) {
  const i = process.argv.indexOf('--' + name);
  return i >= 0 ? process.argv[i + 1] : dflt;
}

async function main() {
  const model = arg('model');
  const session = await ort.InferenceSession.create(model, {
    intraOpNumThreads: 1, interOpNumThreads: 1, executionMode: 'sequential',
    graphOptimizationLevel: 'all',
  });
  const idsArg = arg('ids');
  if (idsArg) {
    const ids = JSON.parse(idsArg);
    const t = new ort.Tensor('int64', BigInt64Array.from(ids.map(BigInt)), [1, ids.length]);
    const out = await session.run({ids: t});
    console.log(JSON.stringify(Array.from(out.pooled.data)));
    return;
  }
  const batch = parseInt(arg('batch')), len = parseInt(arg('length'));
  const reps = parseInt(arg('reps', '3'));
  const ids = new BigInt64Array(batch * len);
  for (let s = 0; s < batch; ++s)
    for (let t = 0; t < len; ++t) ids[s * len + t] = BigInt((s * 7919 + t * 104729) % 30522);
  const feeds = {ids: new ort.Tensor('int64', ids, [batch, len])};
  await session.run(feeds);  // warm-up
  let bestCpu = Infinity, bestWall = Infinity;
  for (let r = 0; r < reps; ++r) {
    const c0 = process.cpuUsage(), w0 = process.hrtime.bigint();
    await session.run(feeds);
    const c = process.cpuUsage(c0), w = Number(process.hrtime.bigint() - w0) / 1e9;
    bestCpu = Math.min(bestCpu, (c.user + c.system) / 1e6);
    bestWall = Math.min(bestWall, w);
  }
  const tokens = batch * len;
  console.log(`| ort ${ort.env.versions.common} f32 | ${len} | ${batch} | ${tokens} | ` +
              `${bestWall.toFixed(3)} | ${(tokens / bestWall).toFixed(0)} | ` +
              `${(tokens / bestCpu).toFixed(0)} |`);
}
main().catch((e) => { console.error(e); process.exit(1); });
