// Live progress: every collection's reindex (Admin.ReindexStatus: one
// started here, by `neodb reindex`, or by `neodb adapt --apply`, which
// reindexes onto the model it trained), and the server's counters
// (Admin.Stats), whose document count rising shows any client's ingest.
import { rpc } from './api.js';
import { $, el, count, notify } from './dom.js';

let lastStats = null;  // {documents, at} of the previous poll: the ingest rate

export async function startReindex(collection) {
  try {
    const r = await rpc('Admin', 'Reindex', { collection });
    notify(`Reindex of ${collection} started (job ${r.job_id}).`, 'ok');
  } catch (err) {
    notify(err.message);
  }
}

// One poll of every collection's reindex state into the jobs table.
export async function pollReindex(names) {
  const states = await Promise.all(names.map(async (name) => {
    const s = await rpc('Admin', 'ReindexStatus', { collection: name });
    return [name, s];
  }));
  $('jobs').tBodies[0].replaceChildren(...states.map(([name, s]) => {
    const total = Number(s.total || 0);
    const done = Number(s.done || 0);
    const bar = el('progress', { max: Math.max(total, 1), value: s.state === 'DONE' ? total : done });
    return el('tr', { 'data-collection': name, 'data-state': s.state },
      el('td', {}, name),
      el('td', { class: 'state-' + String(s.state).toLowerCase() }, s.state),
      el('td', {}, bar, ` ${count(done)} / ${count(total)}`),
      el('td', {}, s.committed ? 'yes' : 'no'),
      el('td', { title: s.model_id }, (s.model_id || '').slice(0, 24)),
      el('td', {}, s.error || ''));
  }));
}

// One poll of Admin.Stats into the stats list.
export async function pollStats() {
  const s = await rpc('Admin', 'Stats');
  const now = performance.now();
  const docs = Number(s.documents || 0);
  let rate = '';
  if (lastStats && now > lastStats.at) {
    rate = ((docs - lastStats.documents) / ((now - lastStats.at) / 1000)).toFixed(1);
  }
  lastStats = { documents: docs, at: now };
  const items = [
    ['Documents', count(s.documents)],
    ['Ingest (docs/s, all clients)', rate],
    ['Collections', count(s.collections)],
    ['Embed queue', count(s.embed_queue_depth)],
    ['Embedded texts', count(s.embedded_texts)],
    ['Embedded tokens', count(s.embedded_tokens)],
    ['Open ingest streams', count(s.open_streams)],
    ['Models loaded', count(s.models_loaded)],
  ];
  $('stats').replaceChildren(...items.map(([k, v]) => el('div', {}, el('dt', {}, k),
    el('dd', {}, v))));
  $('server-info').textContent =
    `model ${(s.model_id || '').slice(0, 16)} · dimension ${s.dimension} · ${s.device}`;
}
