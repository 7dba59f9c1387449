// The collections table (model, index, precision and counts of each), the
// form that creates one, and the picker the other panels work on.
import { rpc } from './api.js';
import { $, el, count, notify } from './dom.js';

export async function listCollections() {
  const r = await rpc('Collections', 'List');
  return r.collections || [];
}

// The collection the ingest, search and documents panels use.
export function current() {
  return $('collection').value;
}

function shortModel(info) {
  const id = info.model_id || '';
  return id.length > 24 ? id.slice(0, 24) + '…' : id;
}

// Redraws the table and the picker from `list` (Collections.List).
// onReindex(name): the row's Reindex button.
export function renderCollections(list, { onReindex }) {
  const body = $('collections').tBodies[0];
  body.replaceChildren(...list.map((c) => {
    const spec = c.spec || {};
    const kw = c.keyword || {};
    return el('tr', { 'data-collection': spec.name },
      el('td', {}, el('a', {
        href: '#', onclick: (e) => { e.preventDefault(); pick(spec.name); },
      }, spec.name)),
      el('td', { class: 'num', 'data-field': 'count' }, count(c.count)),
      el('td', { title: (c.model_id || '') + (c.model_dir ? ' (' + c.model_dir + ')' : '') },
        shortModel(c)),
      el('td', {}, c.index_type || ''),
      el('td', { 'data-field': 'precision' }, spec.precision || ''),
      el('td', { class: 'num' }, String(c.dimension || '')),
      el('td', { class: 'num' }, count(c.index_size)),
      el('td', { class: 'num' }, count(kw.documents)),
      el('td', {}, el('button', { type: 'button', onclick: () => onReindex(spec.name) },
        'Reindex')));
  }));
  $('collections-empty').hidden = list.length > 0;
  const picker = $('collection');
  const was = picker.value;
  picker.replaceChildren(...list.map((c) => el('option', { value: c.spec.name }, c.spec.name)));
  if (list.some((c) => c.spec.name === was)) picker.value = was;
}

function pick(name) {
  const picker = $('collection');
  picker.value = name;
  picker.dispatchEvent(new Event('change'));
}

// The create form; onCreated(name) after the server made it.
export function setupCreateForm(onCreated) {
  $('create-form').addEventListener('submit', async (e) => {
    e.preventDefault();
    const name = $('create-name').value.trim();
    const spec = { name, index: { type: $('create-index').value } };
    if ($('create-precision').value) spec.precision = $('create-precision').value;
    try {
      await rpc('Collections', 'Create', { spec });
      notify(`Created collection ${name}.`, 'ok');
      $('create-name').value = '';
      await onCreated(name);
      pick(name);
    } catch (err) {
      notify(err.message);
    }
  });
}
