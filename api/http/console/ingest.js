// Ingest of a file the user picks, in batches through Documents.Upsert (the
// JSON API has no streams), with a progress bar that counts what the server
// acknowledged. A file is JSON Lines ({"id": ..., "text": ..., "metadata":
// {...}} a line, id and metadata optional, metadata values plain JSON) or,
// when its first line is not a JSON object, plain text: one document a
// non-empty line.
import { rpc } from './api.js';
import { $, count, notify } from './dom.js';
import { current } from './collections.js';

// A plain JSON value as a neodb.v1.Value in proto3 JSON.
function toValue(v) {
  if (typeof v === 'string') return { string_value: v };
  if (typeof v === 'boolean') return { bool_value: v };
  if (typeof v === 'number') {
    return Number.isInteger(v) ? { int_value: String(v) } : { double_value: v };
  }
  if (Array.isArray(v)) return { list_value: { values: v.map(toValue) } };
  if (v && typeof v === 'object') return { object_value: { fields: toMetadata(v) } };
  throw new Error('a metadata value cannot be null');
}

function toMetadata(obj) {
  const out = {};
  for (const [k, v] of Object.entries(obj)) out[k] = toValue(v);
  return out;
}

// The documents of a file's text; throws naming the line of a bad one.
export function parseDocuments(text) {
  const lines = text.split(/\r?\n/).filter((l) => l.trim() !== '');
  if (lines.length === 0) return [];
  if (!lines[0].trim().startsWith('{')) return lines.map((l) => ({ text: l }));
  return lines.map((line, i) => {
    let o;
    try {
      o = JSON.parse(line);
    } catch (e) {
      throw new Error(`line ${i + 1} is not JSON: ${e.message}`);
    }
    if (typeof o.text !== 'string') throw new Error(`line ${i + 1} has no "text" string`);
    const d = { text: o.text };
    if (o.id !== undefined) d.id = String(o.id);
    if (o.metadata) d.metadata = toMetadata(o.metadata);
    return d;
  });
}

function show(state, done, total, text) {
  const bar = $('ingest-progress');
  bar.max = Math.max(total, 1);
  bar.value = done;
  const status = $('ingest-status');
  status.dataset.state = state;
  status.textContent = text;
}

// onProgress(): after each batch (the collections table refreshes);
// onDone(): after the last (the documents panel shows them).
export function setupIngest(onProgress, onDone) {
  $('ingest-form').addEventListener('submit', async (e) => {
    e.preventDefault();
    const collection = current();
    const file = $('ingest-file').files[0];
    if (!collection || !file) {
      notify('Pick a collection and a file to ingest.');
      return;
    }
    const batch = Math.max(1, Number($('ingest-batch').value) || 64);
    const button = $('ingest-go');
    button.disabled = true;
    try {
      const docs = parseDocuments(await file.text());
      const started = performance.now();
      let done = 0;
      show('running', 0, docs.length, `0 / ${count(docs.length)} documents`);
      for (let i = 0; i < docs.length; i += batch) {
        const part = docs.slice(i, i + batch);
        await rpc('Documents', 'Upsert', { collection, documents: part });
        done += part.length;
        const rate = done / ((performance.now() - started) / 1000);
        show('running', done, docs.length,
          `${count(done)} / ${count(docs.length)} documents, ${rate.toFixed(0)} docs/s`);
        onProgress();
      }
      const secs = (performance.now() - started) / 1000;
      show('done', done, docs.length,
        `done: ${count(done)} documents into ${collection} in ${secs.toFixed(1)} s`);
      await onDone();
    } catch (err) {
      show('failed', 0, 1, 'failed');
      notify(err.message);
    } finally {
      button.disabled = false;
    }
  });
}
