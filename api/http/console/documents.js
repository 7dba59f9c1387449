// Browsing a collection's documents a page at a time (Documents.List), and
// one document whole (Documents.Get) when its id is clicked.
import { rpc } from './api.js';
import { $, el, notify, snippet } from './dom.js';
import { current } from './collections.js';

const PAGE = 20;
let tokens = [''];  // the page tokens of the pages seen, for Previous
let page = 0;

function metadataText(md) {
  if (!md) return '';
  const plain = (v) => {
    if (!v) return null;
    if ('string_value' in v) return v.string_value;
    if ('int_value' in v) return Number(v.int_value);
    if ('double_value' in v) return v.double_value;
    if ('bool_value' in v) return v.bool_value;
    if ('list_value' in v) return (v.list_value.values || []).map(plain);
    if ('object_value' in v) {
      return Object.fromEntries(Object.entries(v.object_value.fields || {})
        .map(([k, x]) => [k, plain(x)]));
    }
    return v;
  };
  const o = Object.fromEntries(Object.entries(md).map(([k, v]) => [k, plain(v)]));
  return Object.keys(o).length ? JSON.stringify(o) : '';
}

async function open(id) {
  try {
    const r = await rpc('Documents', 'Get', { collection: current(), ids: [id] });
    $('document-detail').textContent = JSON.stringify((r.documents || [])[0] || r, null, 2);
  } catch (err) {
    notify(err.message);
  }
}

async function load() {
  const collection = current();
  if (!collection) return;
  try {
    const r = await rpc('Documents', 'List', {
      collection, page_size: PAGE, page_token: tokens[page],
      include_text: true, include_metadata: true,
    });
    tokens[page + 1] = r.next_page_token;
    $('documents').tBodies[0].replaceChildren(...(r.documents || []).map((d) => el('tr', {},
      el('td', {}, el('a', { href: '#', onclick: (e) => { e.preventDefault(); open(d.id); } },
        d.id)),
      el('td', {}, snippet(d.text)),
      el('td', { class: 'meta' }, metadataText(d.metadata)))));
    $('documents-page').textContent = `page ${page + 1}`;
    $('documents-prev').disabled = page === 0;
    $('documents-next').disabled = !r.next_page_token;
  } catch (err) {
    notify(err.message);
  }
}

// From the first page again (another collection, or new documents).
export function reloadDocuments() {
  tokens = [''];
  page = 0;
  $('document-detail').textContent = '';
  return load();
}

export function setupDocuments() {
  $('documents-prev').addEventListener('click', () => { page = Math.max(0, page - 1); load(); });
  $('documents-next').addEventListener('click', () => { page += 1; load(); });
  $('documents-reload').addEventListener('click', () => reloadDocuments());
}
