// Request rates and latencies from the server's own /metrics (Prometheus
// text): neodb_requests_total and the neodb_request_duration_seconds
// histogram, summed over methods, differenced between two polls. Rates are
// split by the `transport` label (grpc, http) when the server has it; the
// latency quantiles are read off the histogram's buckets (the bucket's upper
// bound, as Prometheus' histogram_quantile without interpolation). Drawn on
// a <canvas>, no chart library.
import { metricsText } from './api.js';
import { $ } from './dom.js';

const KEEP = 90;  // points on the charts
const COLORS = ['#2563eb', '#dc2626', '#16a34a', '#9333ea', '#ea580c'];
let previous = null;
const rates = [];      // {t, [group]: req/s}
const latencies = [];  // {t, p50, p99, mean} in ms

const LINE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)/;
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g;

// The request counters and histogram of one scrape, summed over methods.
export function parseMetrics(text) {
  const requests = {};
  const buckets = {};
  let sum = 0;
  let n = 0;
  for (const line of text.split('\n')) {
    const m = LINE.exec(line);
    if (!m || line.startsWith('#')) continue;
    const [, name, labelText, valueText] = m;
    const labels = {};
    for (const l of (labelText || '').matchAll(LABEL)) labels[l[1]] = l[2];
    const value = Number(valueText);
    if (name === 'neodb_requests_total') {
      const group = labels.transport || 'all';
      requests[group] = (requests[group] || 0) + value;
    } else if (name === 'neodb_request_duration_seconds_bucket') {
      buckets[labels.le] = (buckets[labels.le] || 0) + value;
    } else if (name === 'neodb_request_duration_seconds_sum') {
      sum += value;
    } else if (name === 'neodb_request_duration_seconds_count') {
      n += value;
    }
  }
  return { requests, buckets, sum, count: n };
}

// The smallest bucket bound under which fraction `q` of `delta` calls fell.
function quantile(deltaBuckets, total, q) {
  const bounds = Object.keys(deltaBuckets).sort((a, b) => Number(a) - Number(b));
  for (const le of bounds) {
    if (deltaBuckets[le] >= q * total) return le === '+Inf' ? Infinity : Number(le);
  }
  return Infinity;
}

function addSample(cur) {
  if (previous) {
    const dt = (cur.t - previous.t) / 1000;
    const r = { t: cur.t };
    let reset = false;
    for (const [g, v] of Object.entries(cur.requests)) {
      const d = v - (previous.requests[g] || 0);
      if (d < 0) reset = true;
      r[g] = d / dt;
    }
    const calls = cur.count - previous.count;
    if (calls < 0) reset = true;
    if (!reset) {
      rates.push(r);
      const l = { t: cur.t };
      if (calls > 0) {
        const delta = {};
        for (const [le, v] of Object.entries(cur.buckets)) {
          delta[le] = v - (previous.buckets[le] || 0);
        }
        l.p50 = quantile(delta, calls, 0.5) * 1000;
        l.p99 = quantile(delta, calls, 0.99) * 1000;
        l.mean = ((cur.sum - previous.sum) / calls) * 1000;
      }
      latencies.push(l);
    }
    while (rates.length > KEEP) rates.shift();
    while (latencies.length > KEEP) latencies.shift();
  }
  previous = cur;
}

// Lines of `series` (names of fields of `points`) on `canvas`.
function draw(canvas, points, series, unit) {
  const dpr = window.devicePixelRatio || 1;
  const w = canvas.clientWidth;
  const h = canvas.clientHeight;
  canvas.width = w * dpr;
  canvas.height = h * dpr;
  const g = canvas.getContext('2d');
  g.scale(dpr, dpr);
  g.clearRect(0, 0, w, h);
  const left = 56;
  const bottom = h - 20;
  let max = 0;
  for (const p of points) {
    for (const s of series) if (Number.isFinite(p[s])) max = Math.max(max, p[s]);
  }
  max = max > 0 ? max * 1.1 : 1;
  g.font = '11px system-ui, sans-serif';
  g.fillStyle = '#555';
  g.strokeStyle = '#ddd';
  for (let i = 0; i <= 4; i++) {
    const y = 8 + ((bottom - 8) * i) / 4;
    g.beginPath();
    g.moveTo(left, y);
    g.lineTo(w - 8, y);
    g.stroke();
    g.fillText((max * (1 - i / 4)).toPrecision(3) + ' ' + unit, 2, y + 4);
  }
  if (points.length > 0) {
    const t0 = points[0].t;
    const span = Math.max(points[points.length - 1].t - t0, 1);
    g.fillText(`last ${(span / 1000).toFixed(0)} s`, left, h - 4);
    series.forEach((s, i) => {
      g.strokeStyle = COLORS[i % COLORS.length];
      g.lineWidth = 1.5;
      g.beginPath();
      let pen = false;
      for (const p of points) {
        if (!Number.isFinite(p[s])) {
          pen = false;
          continue;
        }
        const x = left + ((w - 8 - left) * (p.t - t0)) / span;
        const y = bottom - ((bottom - 8) * p[s]) / max;
        if (pen) g.lineTo(x, y);
        else g.moveTo(x, y);
        pen = true;
      }
      g.stroke();
      g.fillStyle = COLORS[i % COLORS.length];
      g.fillText(s, w - 80, 16 + i * 13);
    });
  }
}

// A quantile's bucket bound in words.
function bound(ms) {
  return Number.isFinite(ms) ? `≤ ${ms} ms` : '> 10 s';
}

// One scrape: a new point on both charts.
export async function pollMetrics() {
  const cur = parseMetrics(await metricsText());
  cur.t = performance.now();
  addSample(cur);
  const groups = Object.keys(cur.requests).sort();
  draw($('rate-chart'), rates, groups, 'req/s');
  draw($('latency-chart'), latencies, ['p50', 'p99', 'mean'], 'ms');
  const status = $('metrics-status');
  status.dataset.samples = String(rates.length);
  const last = rates[rates.length - 1];
  const lat = latencies[latencies.length - 1];
  status.textContent = last
    ? groups.map((g) => `${g}: ${last[g].toFixed(1)} req/s`).join(' · ') +
      (lat && lat.p50 !== undefined
        ? ` · p50 ${bound(lat.p50)}, p99 ${bound(lat.p99)}, mean ${lat.mean.toFixed(2)} ms` : '')
    : 'waiting for a second scrape…';
}
