// The web console in headless Chromium (Debian's /usr/bin/chromium, driven by
// playwright-core from tools/install_browser_test_deps.sh): a live
// `neodb serve --http 127.0.0.1:0` on ports the OS picks (the fake embedder:
// fast and deterministic), then, in the page as a person would:
//   1. a server without API keys: create a collection, ingest a JSON Lines
//      file, browse its documents, run a hybrid search with a filter and see
//      each hit's keyword and vector ranks and scores, start a reindex and
//      watch it reach DONE, see the request chart fill from /metrics;
//   2. a server with a key file: the page says it needs a key (the one
//      expected 401), the admin key typed in, a collection created with it,
//      every API call after that carrying it, still there after a reload
//      (sessionStorage).
// The test fails if the page logs any console error (but Chromium's line
// for step 2's keyless first call, whose 401 is checked by the answers
// instead: exactly one, to a call without a key), throws an uncaught
// exception, or any request fails or answers 5xx. Every wait is for a condition, with
// generous timeouts, never a fixed sleep. Screenshots go to
// $NEODB_BINARY_DIR/tests/browser/artifacts/.
//
// Usage (CTest runs it): node tests/browser/console_test.mjs
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';

const BIN = resolve(process.env.NEODB_BINARY_DIR || 'build');
const NEODB = join(BIN, 'tools', 'neodb', 'neodb');
const DEPS = process.env.NEODB_BROWSER_DEPS || '/opt/neodb-browser';
const CHROMIUM = process.env.NEODB_CHROMIUM || '/usr/bin/chromium';
const ARTIFACTS = join(BIN, 'tests', 'browser', 'artifacts');
const WAIT = 60_000;  // for any one condition: generous, the machine may be busy

function fail(message) {
  throw new Error(message);
}

function loadPlaywright() {
  if (!existsSync(CHROMIUM)) {
    console.error(`console_test: no ${CHROMIUM}: run tools/install_browser_test_deps.sh ` +
      '(tools/install_deps.sh does)');
    process.exit(1);
  }
  try {
    return createRequire(join(DEPS, 'package.json'))('playwright-core');
  } catch (e) {
    console.error(`console_test: no playwright-core in ${DEPS}/node_modules: run ` +
      'tools/install_browser_test_deps.sh (tools/install_deps.sh does)');
    process.exit(1);
  }
}

// `neodb serve` with gRPC and --http on 127.0.0.1:0; resolves once it printed
// both ports (the lines scripts wait for), with {http, proc, log}.
function startServer(dir, extra = []) {
  const log = join(dir, 'server.log');
  const args = ['serve', '--listen', '127.0.0.1:0', '--http', '127.0.0.1:0',
    '--data-dir', join(dir, 'data'), '--snapshot-interval', '0',
    '--fake-model', '32', '--model', 'fake:1', ...extra];
  const proc = spawn(NEODB, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  const logLines = [];
  proc.stderr.on('data', (d) => logLines.push(d.toString()));
  return new Promise((ok, no) => {
    const ports = {};
    createInterface({ input: proc.stdout }).on('line', (line) => {
      const http = /\(HTTP port (\d+)\)/.exec(line);
      const grpc = /\(port (\d+)\)/.exec(line);
      if (http) ports.http = Number(http[1]);
      if (grpc) ports.grpc = Number(grpc[1]);
      if (ports.http && ports.grpc) {
        ok({ http: `http://127.0.0.1:${ports.http}`, proc, log: () => logLines.join('') });
      }
    });
    proc.on('exit', (code) => no(new Error(`neodb serve exited (${code}) before it listened:\n` +
      logLines.join(''))));
  });
}

async function stopServer(server) {
  if (server.proc.exitCode !== null) return;
  const exited = new Promise((ok) => server.proc.on('exit', ok));
  server.proc.kill('SIGTERM');
  await exited;
}

// Console errors, uncaught exceptions, failed and 5xx requests of a page.
function watch(page, problems, allowed = () => false) {
  page.on('console', (msg) => {
    if (msg.type() === 'error' && !allowed(msg.text())) problems.push('console error: ' + msg.text());
  });
  page.on('pageerror', (e) => problems.push('uncaught exception: ' + e.message));
  page.on('requestfailed', (r) => {
    problems.push(`request failed: ${r.method()} ${r.url()}: ${r.failure()?.errorText}`);
  });
  page.on('response', (r) => {
    if (r.status() >= 500) problems.push(`${r.status()} from ${r.request().method()} ${r.url()}`);
  });
}

async function shot(page, name) {
  const path = join(ARTIFACTS, name + '.png');
  await page.screenshot({ path, fullPage: true });
  console.log('console_test: screenshot ' + path);
}

// The ingest file: 40 documents, a few about cats, with a year each.
function writeDocuments(dir) {
  const topics = ['the cat sat on the warm mat', 'dogs run fast in the park',
    'vector search finds near texts', 'stocks fell on monday morning',
    'a cat chased the red ball'];
  const lines = [];
  for (let i = 0; i < 40; i++) {
    lines.push(JSON.stringify({
      id: 'd' + String(i).padStart(2, '0'),
      text: `${topics[i % topics.length]} (note ${i})`,
      metadata: { year: 2015 + (i % 10), tag: i % 2 ? 'odd' : 'even' },
    }));
  }
  const path = join(dir, 'docs.jsonl');
  writeFileSync(path, lines.join('\n') + '\n');
  return path;
}

const text = (page, sel) => page.locator(sel).innerText();

async function withoutKeys(browser, dir) {
  const server = await startServer(join(dir, 'open'));
  const problems = [];
  const page = await browser.newPage();
  watch(page, problems);
  try {
    await page.goto(server.http + '/', { timeout: WAIT });
    if ((await page.title()) !== 'neodb console') fail('title: ' + (await page.title()));
    await page.waitForFunction(() => document.getElementById('server-info').textContent.includes('dimension 32'),
      null, { timeout: WAIT });

    // Create a collection.
    await page.fill('#create-name', 'docs');
    await page.selectOption('#create-index', 'hnsw');
    await page.click('#create-go');
    const row = page.locator('#collections tr[data-collection="docs"]');
    await row.waitFor({ timeout: WAIT });
    if ((await page.inputValue('#collection')) !== 'docs') fail('the new collection is not picked');

    // Ingest a file; the table's count follows.
    await page.setInputFiles('#ingest-file', writeDocuments(dir));
    await page.fill('#ingest-batch', '16');
    await page.click('#ingest-go');
    await page.locator('#ingest-status[data-state="done"]').waitFor({ timeout: WAIT });
    const status = await text(page, '#ingest-status');
    if (!status.includes('40 documents')) fail('ingest status: ' + status);
    await page.waitForFunction(() => document.querySelector(
      '#collections tr[data-collection="docs"] [data-field="count"]')?.textContent === '40',
    null, { timeout: WAIT });
    const rowText = await row.innerText();
    for (const want of ['HNSW', 'fake', 'f32']) {
      if (!rowText.includes(want)) fail(`collections row lacks ${want}: ${rowText}`);
    }
    await shot(page, '1-ingested');

    // Browse: the first page of 20, then one document whole.
    await page.click('#documents-reload');
    await page.waitForFunction(() => document.querySelectorAll('#documents tbody tr').length === 20,
      null, { timeout: WAIT });
    await page.click('#documents tbody tr:first-child a');
    await page.waitForFunction(() => document.getElementById('document-detail').textContent.includes('"year"'),
      null, { timeout: WAIT });
    await page.click('#documents-next');
    await page.waitForFunction(() => document.getElementById('documents-page').textContent === 'page 2',
      null, { timeout: WAIT });

    // A hybrid search with a filter, explained.
    await page.fill('#search-query', 'cat mat');
    await page.selectOption('#search-mode', 'hybrid');
    await page.fill('#search-filter', '{"field":"year","gte":2018}');
    await page.click('#search-go');
    await page.locator('#search-status[data-state="done"]').waitFor({ timeout: WAIT });
    const hits = await page.$$eval('#results tbody tr', (rows) => rows.map((r) =>
      [...r.cells].map((c) => c.textContent)));
    if (hits.length === 0 || hits.length > 10) fail(`${hits.length} hits`);
    // # id score kwRank kwScore vecRank vecScore fused text
    const top = hits[0];
    if (!/cat/.test(top[8])) fail('top hit is not about cats: ' + top.join(' | '));
    if (!(Number(top[3]) >= 1 && Number(top[5]) >= 1)) {
      fail('top hit lacks a keyword and a vector rank: ' + top.join(' | '));
    }
    if (!Number.isFinite(Number(top[4])) || !Number.isFinite(Number(top[7]))) {
      fail('top hit lacks BM25 or fused scores: ' + top.join(' | '));
    }
    const years = await page.$$eval('#results tbody tr', (rows) => rows.map((r) => r.dataset.id));
    for (const id of years) {
      const year = 2015 + (Number(id.slice(1)) % 10);
      if (year < 2018) fail(`hit ${id} (year ${year}) passed the filter year >= 2018`);
    }
    if ((await page.locator('#results mark').count()) === 0) fail('no query term marked');
    await shot(page, '2-hybrid-search');

    // A reindex, watched to the end.
    const job = page.locator('#jobs tr[data-collection="docs"]');
    await job.waitFor({ timeout: WAIT });
    if ((await job.getAttribute('data-state')) !== 'IDLE') {
      fail('reindex state before any: ' + (await job.getAttribute('data-state')));
    }
    await row.locator('button', { hasText: 'Reindex' }).click();
    await page.locator('#jobs tr[data-collection="docs"][data-state="DONE"]').waitFor({ timeout: WAIT });
    const jobText = await job.innerText();
    if (!jobText.includes('40 / 40')) fail('reindex row: ' + jobText);

    // The request chart: two scrapes at least, the console's own calls counted.
    await page.waitForFunction(() => Number(document.getElementById('metrics-status').dataset.samples) >= 2,
      null, { timeout: WAIT });
    // The page's own JSON API calls are there, as transport="http".
    await page.waitForFunction(() => /http: [1-9][0-9.]* req\/s/.test(
      document.getElementById('metrics-status').textContent), null, { timeout: WAIT });
    const metrics = await text(page, '#metrics-status');
    console.log('console_test: metrics: ' + metrics);
    await shot(page, '3-reindexed');
    if (problems.length) fail('page problems:\n  ' + problems.join('\n  '));
    console.log('console_test: without keys: passed');
  } catch (e) {
    await shot(page, 'failed-without-keys').catch(() => {});
    console.error('--- server log\n' + server.log().split('\n').slice(-40).join('\n'));
    throw e;
  } finally {
    await page.close();
    await stopServer(server);
  }
}

async function withKeys(browser, dir) {
  const admin = 'console-test-admin-key';
  mkdirSync(join(dir, 'keyed'), { recursive: true });
  const keyFile = join(dir, 'keyed', 'keys');
  writeFileSync(keyFile, `sha256:${createHash('sha256').update(admin).digest('hex')} admin console\n`,
    { mode: 0o600 });
  const server = await startServer(join(dir, 'keyed'), ['--key-file', keyFile]);
  const problems = [];
  let keyed = false;
  const page = await browser.newPage();
  // Before a key is typed, the page's first call is refused, and Chromium
  // logs that 401 as a failed resource. That console line is let through;
  // the 401 answers themselves are checked below: exactly one, to a call
  // that carried no key.
  watch(page, problems, (t) => t.includes('status of 401'));
  const refused = [];
  page.on('response', (r) => {
    if (r.status() === 401) refused.push(`${r.url()} (key: ${r.request().headers().authorization ? 'yes' : 'none'})`);
  });
  const unkeyed = [];
  page.on('request', (r) => {
    if (keyed && r.url().includes('/v1/rpc/') && r.headers().authorization !== 'Bearer ' + admin) {
      unkeyed.push(r.url());
    }
  });
  try {
    await page.goto(server.http + '/', { timeout: WAIT });
    await page.waitForFunction(() => document.getElementById('notice').textContent.includes('needs an API key'),
      null, { timeout: WAIT });
    await shot(page, '4-needs-key');
    keyed = true;
    await page.fill('#api-key', admin);
    await page.click('#key-use');
    await page.waitForFunction(() => document.getElementById('server-info').textContent.includes('dimension'),
      null, { timeout: WAIT });
    await page.fill('#create-name', 'keyed');
    await page.click('#create-go');
    await page.locator('#collections tr[data-collection="keyed"]').waitFor({ timeout: WAIT });
    // A reload keeps the key (sessionStorage): no 401 now.
    await page.reload({ timeout: WAIT });
    await page.locator('#collections tr[data-collection="keyed"]').waitFor({ timeout: WAIT });
    await page.locator('#jobs tr[data-collection="keyed"][data-state="IDLE"]').waitFor({ timeout: WAIT });
    await shot(page, '5-with-key');
    if (unkeyed.length) fail('API calls without the key: ' + unkeyed.join(', '));
    if (refused.length !== 1 || !refused[0].endsWith('(key: none)')) {
      fail('401 answers: expected the one keyless first call, got: ' + refused.join(', '));
    }
    if (problems.length) fail('page problems:\n  ' + problems.join('\n  '));
    console.log('console_test: with keys: passed');
  } catch (e) {
    await shot(page, 'failed-with-keys').catch(() => {});
    console.error('--- server log\n' + server.log().split('\n').slice(-40).join('\n'));
    throw e;
  } finally {
    await page.close();
    await stopServer(server);
  }
}

async function main() {
  const { chromium } = loadPlaywright();
  mkdirSync(ARTIFACTS, { recursive: true });
  const dir = mkdtempSync(join(tmpdir(), 'neodb_console_test_'));
  mkdirSync(join(dir, 'open'));
  const profile = join(dir, 'chromium-profile');  // a fresh --user-data-dir
  const browser = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    viewport: { width: 1400, height: 1000 },
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  try {
    await withoutKeys(browser, dir);
    await withKeys(browser, dir);
  } finally {
    await browser.close();
    rmSync(dir, { recursive: true, force: true });
  }
  console.log('console_test: 2 passed, 0 failed');
}

main().catch((e) => {
  console.error('console_test: FAILED: ' + (e.stack || e.message));
  process.exit(1);
});
