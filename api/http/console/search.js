// The search box: Search.NearText in a mode (hybrid, keyword, vector) with
// an optional filter, always with `explain`, so each hit shows where it stood
// in the keyword leg (BM25) and the vector leg and the fused score.
import { rpc } from './api.js';
import { $, el, notify, score, snippet } from './dom.js';
import { current } from './collections.js';

// A leg's rank and score, or a dash when that leg did not return the hit.
function leg(rank, value) {
  return rank > 0 ? [el('td', { class: 'num' }, String(rank)),
    el('td', { class: 'num' }, score(value))]
    : [el('td', { class: 'num muted' }, '—'), el('td', { class: 'num muted' }, '—')];
}

function render(hits, query) {
  const terms = query.toLowerCase().split(/\s+/).filter((w) => w.length > 1);
  $('results').tBodies[0].replaceChildren(...hits.map((h, i) => {
    const x = h.explain || {};
    return el('tr', { 'data-id': h.id },
      el('td', { class: 'num' }, String(i + 1)),
      el('td', {}, h.id),
      el('td', { class: 'num' }, score(h.score)),
      leg(x.keyword_rank, x.keyword_score),
      leg(x.vector_rank, x.vector_score),
      el('td', { class: 'num', 'data-field': 'fused' }, score(x.fused_score)),
      el('td', {}, snippet(h.text, terms)));
  }));
}

export function setupSearch() {
  $('search-form').addEventListener('submit', async (e) => {
    e.preventDefault();
    const query = $('search-query').value;
    const req = {
      collection: current(),
      query,
      mode: $('search-mode').value,
      k: Number($('search-k').value) || 10,
      explain: true,
      include_text: true,
    };
    const filter = $('search-filter').value.trim();
    if (filter) req.filter_json = filter;
    const status = $('search-status');
    status.dataset.state = 'running';
    status.textContent = 'searching…';
    try {
      const started = performance.now();
      const r = await rpc('Search', 'NearText', req);
      const ms = performance.now() - started;
      render(r.hits || [], query);
      status.dataset.state = 'done';
      status.textContent = `${(r.hits || []).length} hits (${req.mode}) in ${ms.toFixed(0)} ms`;
    } catch (err) {
      status.dataset.state = 'failed';
      status.textContent = '';
      notify(err.message);
    }
  });
}
