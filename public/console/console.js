// Quarry console (GET /console): databases, index progress, keys, analytics and a search to try, on the public API.
// No framework and no build step. The page's policy allows scripts and requests of this origin only and no HTML
// built from strings (Trusted Types), so every element is made with DOM calls and textContent; the charts are drawn
// by uPlot (GET /console/uplot.js, from its package) on canvases, each with its numbers as a table.
// The session's tokens live in this script's memory only: never in the browser's storage or a cookie.
'use strict';

const API = '/api/v1';

/** The signed-in session, in memory only: a reload signs in again. */
const session = { token: null, refreshToken: null, user: null };
/** The key "Try it" searches with, in memory only. */
let tryKey = null;
/** Connections as last listed, for the keys and "Try it" views. */
let connections = [];
let pollTimer = null;

const $ = (id) => document.getElementById(id);
const statusLine = $('status');

// ---- the API --------------------------------------------------------------------------------------------------

/** An error answer of Quarry, shown as it says it: status, code and message. */
class ApiError extends Error {
  constructor(status, error) {
    super(`${status} ${error.code}: ${error.message}`);
    this.status = status;
    this.code = error.code;
  }
}

/**
 * One call of Quarry's API with the session's token (or `key`): the `data` of its envelope, or an ApiError. An
 * expired access token is refreshed once with the session's refresh token.
 */
async function api(method, path, options = {}) {
  const headers = {};
  const bearer = options.anonymous ? null : (options.key ?? session.token);
  if (bearer) headers.Authorization = `Bearer ${bearer}`;
  let body;
  if (options.file) {
    headers['Content-Type'] = 'application/octet-stream';
    body = options.file;
  } else if (options.body !== undefined) {
    headers['Content-Type'] = 'application/json';
    body = JSON.stringify(options.body);
  }
  const response = await fetch(API + path, { method, headers, body });
  const envelope = await response.json().catch(() => null);
  if (!envelope) throw new Error(`${response.status}: the answer was not JSON`);
  if (envelope.success) return envelope.data;
  if (response.status === 401 && envelope.error.code === 'TOKEN_EXPIRED' && !options.key && !options.anonymous && !options.retried && session.refreshToken) {
    await refresh();
    return api(method, path, { ...options, retried: true });
  }
  throw new ApiError(response.status, envelope.error);
}

async function refresh() {
  const data = await api('POST', '/auth/refresh', { body: { refreshToken: session.refreshToken }, anonymous: true }).catch(() => null);
  if (!data) {
    signedOut('Your session ended: sign in again.');
    throw new Error('Your session ended: sign in again.');
  }
  startSession(data);
}

// ---- small DOM helpers --------------------------------------------------------------------------------------

function element(tag, text, attributes = {}) {
  const node = document.createElement(tag);
  if (text !== undefined && text !== null) node.textContent = text;
  for (const [name, value] of Object.entries(attributes)) {
    if (name === 'className') node.className = value;
    else if (name.startsWith('on')) node.addEventListener(name.slice(2), value);
    else node.setAttribute(name, value);
  }
  return node;
}

function button(text, onclick, attributes = {}) {
  return element('button', text, { type: 'button', onclick, ...attributes });
}

function say(message, isError = false, where = statusLine) {
  where.textContent = message;
  where.classList.toggle('error', isError);
}

/** Runs an action of a button: disabled while it runs, the API's own message shown when it fails. */
async function act(where, work) {
  try {
    await work();
  } catch (error) {
    say(error.message, true, where);
  }
}

const when = (iso) => (iso ? new Date(iso).toLocaleString() : 'never');
const entities = { '&amp;': '&', '&lt;': '<', '&gt;': '>', '&quot;': '"', '&#39;': "'", '&hellip;': '…' };

/** A snippet's text with only its <mark> elements as markup (Quarry escapes everything else). */
function appendSnippet(parent, snippet) {
  snippet.split(/<\/?mark>/).forEach((part, i) => {
    const text = part.replace(/&(?:amp|lt|gt|quot|#39|hellip);/g, (entity) => entities[entity]);
    parent.append(i % 2 === 1 ? element('mark', text) : text);
  });
}

// ---- signing in and out, and the views ------------------------------------------------------------------------

function startSession(data) {
  session.token = data.tokens.accessToken;
  session.refreshToken = data.tokens.refreshToken;
  session.user = data.user ?? session.user;
}

function signedOut(message) {
  Object.assign(session, { token: null, refreshToken: null, user: null });
  tryKey = null;
  clearTimeout(pollTimer);
  $('views').hidden = true;
  for (const section of document.querySelectorAll('main > section')) section.hidden = section.id !== 'view-sign-in';
  say(message);
}

$('sign-in').addEventListener('submit', async (event) => {
  event.preventDefault();
  const form = event.target;
  const mode = event.submitter?.value ?? 'login';
  const body = { email: form.email.value.trim(), password: form.password.value };
  if (mode === 'register') body.name = form.name.value.trim() || body.email.split('@')[0];
  say(mode === 'register' ? 'Creating your account…' : 'Signing in…');
  try {
    startSession(await api('POST', mode === 'register' ? '/auth/register' : '/auth/login', { body, anonymous: true }));
    form.reset();
    $('who').textContent = session.user.email;
    $('views').hidden = false;
    await show('databases');
    say(`Signed in as ${session.user.email}.`);
  } catch (error) {
    say(error.message, true);
  }
});

$('sign-out').addEventListener('click', async () => {
  await api('POST', '/auth/logout').catch(() => undefined);
  signedOut('Signed out: the session has ended.');
});

const loaders = { databases: loadDatabases, keys: loadKeys, analytics: loadAnalytics, try: async () => {} };

async function show(view) {
  for (const section of document.querySelectorAll('main > section')) section.hidden = section.id !== `view-${view}`;
  for (const tab of document.querySelectorAll('#views [data-view]')) {
    if (tab.dataset.view === view) tab.setAttribute('aria-current', 'page');
    else tab.removeAttribute('aria-current');
  }
  if (view !== 'databases') clearTimeout(pollTimer);
  say('');
  await act(statusLine, loaders[view]);
}

for (const tab of document.querySelectorAll('#views [data-view]')) {
  tab.addEventListener('click', () => {
    show(tab.dataset.view);
    $(`${tab.dataset.view}-title`).focus();
  });
}
for (const heading of document.querySelectorAll('main h2')) heading.tabIndex = -1;

// ---- databases ------------------------------------------------------------------------------------------------

$('connect').addEventListener('submit', (event) => {
  event.preventDefault();
  const form = event.target;
  const file = form.file.files[0];
  act(statusLine, async () => {
    const fileName = file.name.replace(/[^\w.-]/g, '_');
    say(`Uploading ${fileName}…`);
    await api('PUT', `/sqlite-files/${encodeURIComponent(fileName)}`, { file });
    const data = await api('POST', '/databases', { body: { name: form.name.value.trim(), engine: 'sqlite', database: fileName, environment: form.environment.value } });
    say(`Connected ${data.database.name}: its tables are being synced into the index.`);
    form.reset();
    await loadDatabases();
  });
});

async function loadDatabases() {
  clearTimeout(pollTimer);
  connections = (await api('GET', '/databases')).databases;
  const list = $('database-list');
  const ids = new Set(connections.map((c) => c.id));
  for (const article of [...list.children]) if (!ids.has(article.dataset.id)) article.remove();
  if (connections.length === 0) list.replaceChildren(element('p', 'No database yet: connect an SQLite file above, or a server with POST /api/v1/databases.', { className: 'hint' }));
  else list.querySelector(':scope > p')?.remove();
  let busy = false;
  for (const connection of connections) {
    const article = list.querySelector(`[data-id="${connection.id}"]`) ?? list.appendChild(databaseCard(connection));
    article.querySelector('.connection-status').textContent = connection.status;
    const index = await api('GET', `/databases/${connection.id}/index`).catch((error) => ({ error }));
    if (index.error) {
      say(index.error.message, true, article.querySelector('.message'));
      continue;
    }
    for (const table of index.tables) {
      updateTableRow(article, connection, table);
      if (table.state === 'pending' || ['queued', 'running'].includes(table.job?.status)) busy = true;
    }
  }
  // While a sync runs, its progress is read again every second; the rest of the page is left as it is.
  if (busy) pollTimer = setTimeout(() => act(statusLine, loadDatabases), 1000);
}

function databaseCard(connection) {
  const article = element('article', undefined, { className: 'database', 'data-id': connection.id, 'aria-labelledby': `db-${connection.id}` });
  const message = element('p', '', { className: 'message', role: 'status' });
  const facts = element('dl');
  for (const [term, value] of [['Engine', connection.engine], ['Environment', connection.environment], ['Status', connection.status]]) {
    facts.append(element('dt', term), element('dd', value, term === 'Status' ? { className: 'connection-status' } : {}));
  }
  const actions = element('div', undefined, { className: 'actions' });
  actions.append(
    button('Test connection', () => act(message, async () => {
      const result = await api('POST', `/databases/${connection.id}/test`);
      say(result.ok ? `Connection works (${result.latencyMs} ms, ${result.serverVersion}).` : `Connection failed: ${result.error?.message}`, !result.ok, message);
    }), { 'aria-describedby': `db-${connection.id}` }),
    button('Sync now', () => act(message, async () => {
      const data = await api('POST', `/databases/${connection.id}/index/sync`, { body: {} });
      say(`Sync queued for ${data.jobs.length} table(s).`, false, message);
      await loadDatabases();
    }), { 'aria-describedby': `db-${connection.id}` }),
  );
  const table = element('table');
  table.append(element('caption', `Tables of ${connection.name}`));
  const head = element('tr');
  for (const name of ['Table', 'Index', 'Rows', 'Last sync', 'Sync progress', 'Search settings']) head.append(element('th', name, { scope: 'col' }));
  table.append(element('thead'), element('tbody'));
  table.tHead.append(head);
  const scroll = element('div', undefined, { className: 'scroll', role: 'region', 'aria-label': `Tables of ${connection.name}`, tabindex: '0' });
  scroll.append(table);
  article.append(element('h3', connection.name, { id: `db-${connection.id}` }), facts, actions, message, scroll);
  return article;
}

/** A table's row: made once, then only its state, rows, last sync and progress change, so a form being filled stays. */
function updateTableRow(article, connection, table) {
  const id = `row-${connection.id}-${table.table}`;
  let row = document.getElementById(id);
  if (!row) {
    row = element('tr', undefined, { id });
    const cell = (label) => element('td', undefined, { 'data-label': label });
    const settings = settingsCell(article, connection, table);
    settings.setAttribute('data-label', 'Search settings');
    row.append(element('th', table.table, { scope: 'row' }), cell('Index'), cell('Rows'), cell('Last sync'), cell('Sync progress'), settings);
    article.querySelector('tbody').append(row);
  }
  const [, state, rows, synced, progress] = row.children;
  state.textContent = table.state === 'not_indexed' ? `not indexed: ${table.reason}` : table.state;
  state.className = `state ${table.state}`;
  rows.textContent = table.rows.toLocaleString();
  synced.textContent = when(table.syncedAt);
  progress.replaceChildren(...progressOf(table));
  const semantic = row.querySelector('.semantic');
  semantic.textContent = table.semantic ? (table.semanticReady ? 'Semantic search on' : 'Semantic search turning on…') : 'Turn semantic search on';
  semantic.disabled = table.semantic;
}

function progressOf(table) {
  const job = table.job;
  if (!job) return [element('span', table.state === 'not_indexed' ? '—' : 'no sync yet')];
  const total = job.rowsTotal ?? 0;
  const bar = element('progress', undefined, { max: String(Math.max(total, 1)), value: String(job.status === 'done' ? Math.max(total, 1) : job.rowsDone), 'aria-label': `Sync of ${table.table}` });
  let text;
  if (job.status === 'done') text = `done: ${job.rowsDone.toLocaleString()} rows${job.ratePerSecond ? ` at ${Math.round(job.ratePerSecond).toLocaleString()} rows/s` : ''}`;
  else if (job.status === 'running') text = `${job.rowsDone.toLocaleString()} of ${job.rowsTotal === null ? '?' : total.toLocaleString()} rows${job.ratePerSecond ? `, ${Math.round(job.ratePerSecond)} rows/s` : ''}${job.etaSeconds !== null ? `, ${job.etaSeconds} s left` : ''}`;
  else if (job.status === 'failed') text = `failed: ${job.error?.message ?? 'unknown error'}`;
  else text = job.status;
  return [bar, element('span', text, { className: `progress-text ${job.status}` })];
}

function settingsCell(article, connection, table) {
  const cell = element('td');
  const message = article.querySelector('.message');
  const path = `/databases/${connection.id}/index/tables/${encodeURIComponent(table.table)}`;
  const semantic = button('Turn semantic search on', () => act(message, async () => {
    await api('PATCH', path, { body: { semantic: true } });
    say(`Semantic search is turning on for ${table.table}: its rows are being embedded.`, false, message);
    await loadDatabases();
  }), { className: 'semantic quiet' });
  const form = element('form', undefined, { className: 'columns', 'aria-label': `Columns of ${table.table}` });
  const eligible = (table.eligibleColumns ?? []).map((c) => c.column).join(', ');
  const filterable = element('input', undefined, { name: 'filterable', placeholder: eligible || 'column, …', spellcheck: 'false' });
  const sortable = element('input', undefined, { name: 'sortable', placeholder: 'column, …', spellcheck: 'false' });
  filterable.value = table.filterableColumns.join(', ');
  sortable.value = table.sortableColumns.join(', ');
  const label = (text, input) => {
    const node = element('label', text);
    node.append(input);
    return node;
  };
  form.append(label('Filterable', filterable), label('Sortable', sortable), element('button', 'Save columns', { type: 'submit', className: 'quiet' }));
  const split = (text) => text.split(',').map((s) => s.trim()).filter(Boolean);
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    act(message, async () => {
      await api('PATCH', path, { body: { filterableColumns: split(filterable.value), sortableColumns: split(sortable.value) } });
      say(`Columns of ${table.table} saved; they count once the sync that writes them ends.`, false, message);
      await loadDatabases();
    });
  });
  cell.append(semantic, form);
  return cell;
}

// ---- keys -----------------------------------------------------------------------------------------------------

$('create-key').addEventListener('submit', (event) => {
  event.preventDefault();
  const form = event.target;
  act(statusLine, async () => {
    const common = { name: form.name.value.trim(), environment: form.environment.value, rateLimitTier: form.tier.value };
    let secret;
    if (form.kind.value === 'publishable') {
      if (connections.length === 0) connections = (await api('GET', '/databases')).databases;
      const databases = connections.filter((c) => c.environment === form.environment.value).map((c) => c.id);
      const origins = form.origins.value.split(/[\s,]+/).filter(Boolean);
      const data = await api('POST', '/keys/publishable', { body: { ...common, databases, allowedOrigins: origins.length ? origins : [window.location.origin] } });
      secret = data.publishableKey;
    } else {
      secret = (await api('POST', '/keys', { body: { ...common, permissions: ['search', 'analytics'] } })).secretKey;
    }
    showSecret(secret);
    say(`Created ${common.name}.`);
    form.reset();
    await loadKeys();
  });
});

function showSecret(secret) {
  $('secret-value').textContent = secret;
  $('secret').hidden = false;
  $('copy-secret').focus();
}

$('copy-secret').addEventListener('click', () => act(statusLine, async () => {
  await navigator.clipboard.writeText($('secret-value').textContent);
  say('Copied.');
}));

async function loadKeys() {
  const { apiKeys } = await api('GET', '/keys');
  const allowances = await Promise.all(apiKeys.map((key) => (key.isActive
    ? api('GET', `/keys/${key.id}/usage?days=1`).then((data) => data.usage.allowance, () => null)
    : Promise.resolve(null))));
  const rows = apiKeys.map((key, i) => {
    const row = element('tr', undefined, { 'data-id': key.id });
    const actions = element('td');
    if (key.isActive) {
      const revoke = button('Revoke', () => {
        // A second press confirms: a revoked key stops working at once and cannot come back.
        if (revoke.dataset.armed !== 'yes') {
          revoke.dataset.armed = 'yes';
          revoke.textContent = 'Press again to revoke';
          return;
        }
        act(statusLine, async () => {
          await api('DELETE', `/keys/${key.id}`);
          say(`Revoked ${key.name}.`);
          await loadKeys();
        });
      }, { className: 'danger', 'aria-label': `Revoke ${key.name}` });
      const regenerate = button('Regenerate', () => act(statusLine, async () => {
        const data = await api('POST', `/keys/${key.id}/regenerate`);
        showSecret(data.secretKey ?? data.publishableKey);
        say(`Regenerated ${key.name}: the old key no longer works.`);
        await loadKeys();
      }), { className: 'quiet', 'aria-label': `Regenerate ${key.name}` });
      actions.append(regenerate, revoke);
    } else {
      actions.textContent = key.revokedAt ? `revoked ${when(key.revokedAt)}` : 'inactive';
    }
    row.append(element('th', key.name, { scope: 'row' }), element('td', key.type), element('td', key.keyPrefix, { className: 'mono' }),
      element('td', key.rateLimitTier), element('td', key.environment), element('td', when(key.lastUsed)),
      element('td', allowances[i] ? `${allowances[i].remaining.toLocaleString()} of ${allowances[i].limit.toLocaleString()}` : '—'), actions);
    return row;
  });
  $('key-table').tBodies[0].replaceChildren(...rows);
}

// ---- analytics ------------------------------------------------------------------------------------------------

$('range').addEventListener('submit', (event) => {
  event.preventDefault();
  act(statusLine, loadAnalytics);
});

async function loadAnalytics() {
  const period = $('range').period.value;
  const data = await api('GET', `/analytics/overview?period=${period}&limit=8`);
  const days = data.days.map((d) => Date.parse(`${d.date}T00:00:00Z`) / 1000);
  const named = (d) => d.name ?? `${d.databaseId} (deleted)`;
  for (const chart of charts.splice(0)) chart.destroy();
  $('charts').replaceChildren(
    chartFigure('searches', `Searches per day (${data.totalSearches} in all)`, [],
      ['Day', 'Searches'], data.days.map((d) => [d.date, d.searches])),
    chartFigure('latency', 'Response time per day, ms: median (p50) and p95', [
      { name: 'p50', look: 'solid line, round markers' },
      { name: 'p95', look: 'dashed line, square markers' },
    ], ['Day', 'p50 ms', 'p95 ms'], data.days.map((d) => [d.date, d.p50Ms, d.p95Ms])),
    chartFigure('queries', 'Top queries (searches each)', [],
      ['Query', 'Searches', 'Average results'], data.topQueries.map((q) => [q.query, q.searches, q.averageResults])),
    chartFigure('share', 'Share of searches per database (%)', [],
      ['Database', 'Searches', 'Share'], data.databases.map((d) => [named(d), d.searches, `${Math.round(d.share * 100)} %`])),
  );
  // uPlot measures its box, so the charts are drawn once their figures are in the page.
  draw('searches', [days, data.days.map((d) => d.searches)], timeOptions([{ label: 'Searches', ...barLook }], whole));
  draw('latency', [days, data.days.map((d) => d.p50Ms), data.days.map((d) => d.p95Ms)], timeOptions([
    { label: 'p50', stroke: INK[0], width: 2.5, points: { show: true, size: 7, space: 0, fill: INK[0] } },
    { label: 'p95', stroke: INK[1], width: 2.5, dash: [8, 5], points: { show: true, size: 8, space: 0, fill: INK[1], paths: squares } },
  ]));
  draw('queries', [data.topQueries.map((_, i) => i), data.topQueries.map((q) => q.searches)], categoryOptions(data.topQueries.map((q) => q.query), 'Searches', whole));
  draw('share', [data.databases.map((_, i) => i), data.databases.map((d) => Math.round(d.share * 1000) / 10)], categoryOptions(data.databases.map(named), 'Share %'));
  const zero = data.zeroResultQueries.map((q) => {
    const item = element('li');
    item.append(element('q', q.query), ` ${q.searches} search${q.searches === 1 ? '' : 'es'} found nothing, last ${when(q.lastSearchedAt)} `,
      button('Try it', () => {
        $('try-search').query.value = q.query;
        show('try');
        $('try-search').query.focus();
      }, { className: 'quiet', 'aria-label': `Try "${q.query}"` }));
    return item;
  });
  $('zero-results').replaceChildren(...(zero.length ? zero : [element('li', 'None in this range: every search found something.')]));
}

// ---- charts (uPlot, served by Quarry from its package: GET /console/uplot.js) ---------------------------------

/** The charts drawn, destroyed before the next range is drawn. */
const charts = [];
/** Line colours, dark enough on white; each line also has its own dash and marker, so none depends on colour. */
const INK = ['#1f3fa8', '#b54708'];
const barLook = { stroke: '#2f4fc4', fill: '#3d63dd', width: 1, paths: uPlot.paths.bars({ size: [0.6, 64] }), points: { show: false } };
/** Counts have whole-number ticks. */
const whole = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1e3, 2e3, 5e3, 1e4, 2e4, 5e4, 1e5, 2e5, 5e5, 1e6, 1e7, 1e8];
const axisLook = { stroke: '#515a6e', grid: { stroke: '#e4e7ee', width: 1 }, ticks: { stroke: '#d9dee8', width: 1 }, font: '11px system-ui, sans-serif' };

/**
 * A chart with its caption, a legend that names each line by its dash and marker, and the numbers it draws as a
 * table for whoever does not see it. The canvas is an image named by the caption.
 */
function chartFigure(id, caption, legend, columns, rows) {
  const figure = element('figure', undefined, { className: 'chart', id: `chart-${id}` });
  const captionNode = element('figcaption', caption, { id: `caption-${id}` });
  const plot = element('div', undefined, { className: 'plot', role: 'img', 'aria-labelledby': `caption-${id}`, 'aria-describedby': `numbers-${id}` });
  figure.append(captionNode);
  if (legend.length) {
    const list = element('ul', undefined, { className: 'legend' });
    legend.forEach((line, n) => {
      const item = element('li');
      item.append(element('span', undefined, { className: `swatch swatch-${n}`, 'aria-hidden': 'true' }), `${line.name}: ${line.look}`);
      list.append(item);
    });
    figure.append(list);
  }
  const details = element('details');
  const table = element('table', undefined, { id: `numbers-${id}` });
  const head = element('tr');
  for (const column of columns) head.append(element('th', column, { scope: 'col' }));
  table.append(element('thead'), element('tbody'));
  table.tHead.append(head);
  for (const values of rows) {
    const row = element('tr');
    values.forEach((value, i) => row.append(element(i === 0 ? 'th' : 'td', String(value), i === 0 ? { scope: 'row' } : {})));
    table.tBodies[0].append(row);
  }
  details.append(element('summary', 'The numbers'), table);
  figure.append(plot, details);
  if (rows.length === 0) figure.append(element('p', 'No searches in this range yet.', { className: 'hint' }));
  return figure;
}

const plotSize = (plot) => ({ width: Math.max(plot.clientWidth, 200), height: plot.clientWidth < 420 ? 180 : 220 });

function draw(id, data, options) {
  const plot = document.querySelector(`#chart-${id} .plot`);
  if (data[0].length === 0) return;
  const chart = new uPlot({ ...options, ...plotSize(plot), legend: { show: false }, cursor: { show: false } }, data, plot);
  // Redrawn to the figure's width when the window changes (390 px phones included).
  const resized = new ResizeObserver(() => chart.setSize(plotSize(plot)));
  resized.observe(plot);
  charts.push({ destroy: () => (resized.disconnect(), chart.destroy()) });
}

/** Days along x (UTC, as the API counts them), with half a bucket's room at each end for bars; values from 0 up. */
function timeOptions(series, incrs) {
  const room = (u) => (u.data[0].length > 1 ? (u.data[0][1] - u.data[0][0]) / 2 : 43200);
  return {
    tzDate: (ts) => uPlot.tzDate(new Date(ts * 1000), 'Etc/UTC'),
    scales: { x: { time: true, range: (u, min, max) => [min - room(u), max + room(u)] }, y: { range: (u, min, max) => [0, Math.max(1, max * 1.1)] } },
    axes: [{ ...axisLook, space: 50 }, { ...axisLook, size: 48, ...(incrs ? { incrs } : {}) }],
    series: [{}, ...series],
  };
}

/** One bar per named thing (a query, a database), its name under it, shortened; the whole name is in the table. */
function categoryOptions(names, label, incrs) {
  const short = names.map((name) => (name.length > 14 ? `${name.slice(0, 13)}…` : name));
  return {
    scales: { x: { time: false, range: [-0.5, Math.max(names.length, 1) - 0.5] }, y: { range: (u, min, max) => [0, Math.max(1, max * 1.1)] } },
    axes: [
      { ...axisLook, splits: () => names.map((_, i) => i), values: (u, splits) => splits.map((i) => short[i] ?? ''), rotate: names.length > 3 ? -35 : 0, size: names.length > 3 ? 80 : 36 },
      { ...axisLook, size: 48, ...(incrs ? { incrs } : {}) },
    ],
    series: [{}, { label, ...barLook }],
  };
}

/** Square markers for the second line (the first has uPlot's round ones). */
function squares(u, seriesIdx, idx0, idx1) {
  const side = 8 * devicePixelRatio;
  const path = new Path2D();
  for (let i = idx0; i <= idx1; i += 1) {
    const value = u.data[seriesIdx][i];
    if (value === null || value === undefined) continue;
    path.rect(u.valToPos(u.data[0][i], 'x', true) - side / 2, u.valToPos(value, 'y', true) - side / 2, side, side);
  }
  return { stroke: path, fill: path };
}

// ---- try it ---------------------------------------------------------------------------------------------------

$('make-try-key').addEventListener('click', () => act(statusLine, async () => {
  connections = (await api('GET', '/databases')).databases;
  if (connections.length === 0) throw new Error('Connect a database first: a key searches the databases of its environment.');
  const environment = connections.some((c) => c.environment === 'test') ? 'test' : 'live';
  // A secret key that can only search: Quarry accepts it from this page (its own origin) and from servers.
  const data = await api('POST', '/keys', { body: { name: 'Console: try it', environment, permissions: ['search'] } });
  tryKey = data.secretKey;
  $('try-key').key.value = tryKey;
  say(`Made a search-only ${environment} key, kept in this page only (it is listed under Keys; revoke it there when done).`);
}));

$('try-search').addEventListener('submit', (event) => {
  event.preventDefault();
  const form = event.target;
  const key = $('try-key').key.value.trim() || tryKey;
  act(statusLine, async () => {
    if (!key) throw new Error('A key is needed: make a search key, or paste one.');
    say('Searching…');
    const data = await api('POST', '/search', { key, body: { query: form.query.value, searchMode: form.mode.value, limit: 10 } });
    say(`${data.total}${data.totalIsEstimate ? '+' : ''} result${data.total === 1 ? '' : 's'} in ${data.tookMs} ms`);
    const rows = data.databases.map((db) => {
      const row = element('tr');
      row.append(element('th', db.databaseName, { scope: 'row' }), element('td', db.engine),
        element('td', db.error ? `${db.status}: ${db.error.message}` : db.status, { className: db.status }),
        element('td', `${db.tookMs} ms`), element('td', String(db.matches)));
      return row;
    });
    $('try-databases').tBodies[0].replaceChildren(...rows);
    // Its scrolling box (narrow windows) is shown with it: a region the keyboard can scroll.
    $('try-databases').parentElement.hidden = rows.length === 0;
    $('try-results').replaceChildren(...data.results.map((result) => {
      const item = element('li');
      item.value = result.rank;
      const where = element('div', undefined, { className: 'where' });
      where.append(element('strong', result.databaseName), ` › ${result.table} · score ${result.score}`);
      const snippet = element('p', undefined, { className: 'snippet' });
      appendSnippet(snippet, result.snippet);
      item.append(where, snippet);
      return item;
    }));
  });
});
