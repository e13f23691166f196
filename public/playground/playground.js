// Quarry search playground (GET /playground), and the reference for searching Quarry from a web page:
// one POST /api/v1/search per page of results, a publishable key in the Authorization header, the answer read
// from Quarry's envelope ({ success, data } or { success, error }), and snippets shown with only their <mark>
// elements. No framework and no build step; the page's policy allows scripts and requests to this origin only,
// and no HTML from strings (Trusted Types), so everything is built with DOM calls and textContent.
'use strict';

/** Where Quarry answers: this page's own origin. From another origin, this is the Quarry server's URL. */
const QUARRY_URL = '';

const form = document.getElementById('search-form');
const statusLine = document.getElementById('status');
const databases = document.getElementById('databases');
const results = document.getElementById('results');
const pager = document.getElementById('pager');

/** The search on screen: what was asked and which page (offset) is shown. */
let current = null;

/** Asks Quarry for one page. Resolves with Quarry's `data`, or throws an Error whose message says what went wrong. */
async function searchQuarry(key, request) {
  let response;
  try {
    response = await fetch(`${QUARRY_URL}/api/v1/search`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' },
      body: JSON.stringify(request),
    });
  } catch (error) {
    // The request never got an answer the page may read: the server is down, or it refused this origin (CORS).
    throw new Error(`Could not reach Quarry (${error.message}).`);
  }
  const body = await response.json();
  if (!body.success) {
    const { code, message } = body.error;
    throw new Error(`${response.status} ${code}: ${message} (request ${body.meta.requestId})`);
  }
  const remaining = response.headers.get('X-RateLimit-Remaining');
  const limit = response.headers.get('X-RateLimit-Limit');
  return { ...body.data, rateLimit: remaining === null ? null : `${remaining} of ${limit} requests left this hour` };
}

/**
 * Appends a snippet: Quarry sends HTML-escaped text in which only <mark> elements are markup (they never nest),
 * so the text between the tags is unescaped and every other part becomes a <mark>.
 */
const entities = { '&amp;': '&', '&lt;': '<', '&gt;': '>', '&quot;': '"', '&#39;': "'", '&hellip;': '…' };
function appendSnippet(parent, snippet) {
  snippet.split(/<\/?mark>/).forEach((part, i) => {
    const text = part.replace(/&(?:amp|lt|gt|quot|#39|hellip);/g, (entity) => entities[entity]);
    parent.append(i % 2 === 1 ? element('mark', text) : text);
  });
}

function element(tag, text, className) {
  const node = document.createElement(tag);
  if (text !== undefined) node.textContent = text;
  if (className) node.className = className;
  return node;
}

function showError(message) {
  statusLine.textContent = message;
  statusLine.className = 'error';
  databases.hidden = true;
  pager.hidden = true;
  results.replaceChildren();
}

function showDatabases(list) {
  const rows = list.map((db) => {
    const row = document.createElement('tr');
    const status = element('td', db.error ? `${db.status}: ${db.error.message}` : db.status, db.status);
    row.append(element('td', db.databaseName), element('td', db.engine), status, element('td', `${db.tookMs} ms`), element('td', String(db.matches)));
    return row;
  });
  databases.querySelector('tbody').replaceChildren(...rows);
  databases.hidden = list.length === 0;
}

function showResults(data) {
  const items = data.results.map((result) => {
    const item = element('li');
    item.value = result.rank;
    const where = element('div', undefined, 'where');
    where.append(element('strong', result.databaseName), ` › ${result.table} · score ${result.score}`);
    const snippet = element('p', undefined, 'snippet');
    appendSnippet(snippet, result.snippet);
    item.append(where, snippet);
    return item;
  });
  results.replaceChildren(...items);
}

function showPage(data) {
  const pages = Math.max(1, Math.ceil(data.total / data.limit));
  const page = Math.floor(data.offset / data.limit) + 1;
  const total = `${data.total}${data.totalIsEstimate ? '+' : ''}`;
  statusLine.className = '';
  statusLine.textContent = [`${total} results in ${data.tookMs} ms`, data.rateLimit].filter(Boolean).join(' · ');
  showDatabases(data.databases);
  showResults(data);
  document.getElementById('page').textContent = `Page ${page} of ${pages}`;
  document.getElementById('previous').disabled = data.offset === 0;
  document.getElementById('next').disabled = !data.hasMore;
  pager.hidden = data.total <= data.limit && data.offset === 0;
}

async function run(offset) {
  const { key, request } = current;
  statusLine.className = '';
  statusLine.textContent = 'Searching…';
  try {
    const data = await searchQuarry(key, { ...request, offset });
    current.offset = data.offset;
    showPage(data);
  } catch (error) {
    showError(error.message);
  }
}

form.addEventListener('submit', (event) => {
  event.preventDefault();
  const key = form.key.value.trim();
  sessionStorage.setItem('quarry-playground-key', key);
  current = { key, request: { query: form.query.value, searchMode: form.mode.value, limit: Number(form.limit.value) }, offset: 0 };
  run(0);
});
document.getElementById('previous').addEventListener('click', () => run(Math.max(0, current.offset - current.request.limit)));
document.getElementById('next').addEventListener('click', () => run(current.offset + current.request.limit));

document.getElementById('origin').textContent = window.location.origin;
form.key.value = sessionStorage.getItem('quarry-playground-key') ?? '';
