// The console's start: the API key box, the panels' wiring, and the polls
// that keep the page live (collections and counters every 2 s, reindex
// states every second, /metrics every 2 s). Without a key, a server that
// needs one answers 401: the page then says so and stops calling the API
// until a key is entered (the charts, from the public /metrics, go on).
import { apiKey, setApiKey, ApiError } from './api.js';
import { $, notify } from './dom.js';
import { listCollections, renderCollections, setupCreateForm } from './collections.js';
import { setupIngest } from './ingest.js';
import { setupSearch } from './search.js';
import { reloadDocuments, setupDocuments } from './documents.js';
import { pollReindex, pollStats, startReindex } from './jobs.js';
import { pollMetrics } from './chart.js';

let names = [];
let blocked = false;  // the last API call was refused for want of a (valid) key

// An API failure in a poll: a person-readable notice; 401/403 pause the polls.
function failed(err) {
  if (err instanceof ApiError && (err.status === 401 || err.status === 403)) {
    blocked = true;
    notify(err.status === 401
      ? 'This server needs an API key: enter one above (it is kept in this tab only).'
      : `This key may not do that: ${err.message}`);
  } else {
    notify(err.message);
  }
}

async function refreshCollections() {
  const list = await listCollections();
  names = list.map((c) => c.spec.name);
  renderCollections(list, {
    onReindex: async (name) => {
      await startReindex(name);
      await pollReindex(names).catch(failed);
    },
  });
}

async function pollApi() {
  if (blocked) return;
  try {
    await refreshCollections();
    await pollStats();
  } catch (err) {
    failed(err);
  }
}

async function pollJobs() {
  if (blocked || names.length === 0) return;
  try {
    await pollReindex(names);
  } catch (err) {
    failed(err);
  }
}

// Runs `f` now and then every `ms` after each run ends (never two at once).
function every(ms, f) {
  const run = async () => {
    await f();
    setTimeout(run, ms);
  };
  run();
}

function setupKey() {
  $('api-key').value = apiKey();
  $('key-form').addEventListener('submit', async (e) => {
    e.preventDefault();
    setApiKey($('api-key').value.trim());
    blocked = false;
    notify('');
    await pollApi();
    if (!blocked) await reloadDocuments();
  });
  $('forget-key').addEventListener('click', () => {
    setApiKey('');
    $('api-key').value = '';
  });
}

setupKey();
setupCreateForm(async () => {
  await refreshCollections();
});
setupIngest(() => refreshCollections().catch(failed), () => reloadDocuments());
setupSearch();
setupDocuments();
$('collection').addEventListener('change', () => reloadDocuments());
every(2000, async () => {
  const first = names.length === 0;
  await pollApi();
  if (first && names.length > 0) await reloadDocuments();
});
every(1000, pollJobs);
every(2000, async () => {
  try {
    await pollMetrics();
  } catch (err) {
    notify(err.message);
  }
});
