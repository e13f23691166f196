/**
 * The README's "Search from a web page", followed as written: a server started with the defaults of
 * `npm start` (its own process, NODE_ENV development), `PUBLISHABLE_ORIGIN=... examples/curl.sh` for an account, a
 * demo database and a publishable key, and the README's HTML page, served from another origin and driven in headless
 * Chromium. With the publishable key it searches through CORS and lists the results; with a secret key, from a page
 * of an origin the key does not list, or from an origin CORS_ORIGINS does not allow, it shows the error.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnServer, type ServerProcess } from '../../scripts/lib/spawn-server.js';
import { ApiClient } from '../support/api-client.js';
import { browserSuite, browserTestsRun, openBrowser, recordPage, type Browser } from '../support/chromium.js';
import { startTestServer, type TestServer } from '../support/test-server.js';
import { repoRoot } from './support/contract.js';

const runs = browserTestsRun('test/contract/web-page-search.test.ts');
const readme = readFileSync(join(repoRoot, 'README.md'), 'utf8');

/** The section's HTML page, as a reader copies it. */
function readmePage(): string {
  const section = readme.slice(readme.indexOf('## Search from a web page'));
  const match = /```html\n([\s\S]*?)```/.exec(section);
  if (!match) throw new Error('README: no html block in "Search from a web page"');
  return match[1]!;
}

/** The README page with its two constants set, as a reader does after pasting the key. */
function pageWith(quarryUrl: string, key: string): string {
  const page = readmePage();
  const url = /const QUARRY_URL = '[^']*';/;
  const keyLine = /const PUBLISHABLE_KEY = '[^']*';/;
  if (!url.test(page) || !keyLine.test(page)) throw new Error('README page: QUARRY_URL or PUBLISHABLE_KEY is not a constant to fill in');
  return page.replace(url, `const QUARRY_URL = '${quarryUrl}';`).replace(keyLine, `const PUBLISHABLE_KEY = '${key}';`);
}

/** A static site on its own origin: `/search.html?quarry=<url>&key=<key>` is the README page filled in. */
interface Site {
  origin: string;
  server: Server;
}

async function site(): Promise<Site> {
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://site');
    // Browsers ask every site for its icon; a static server without one answers 404, which is not the page's error.
    if (url.pathname === '/favicon.ico') return void res.writeHead(204).end();
    if (url.pathname !== '/search.html') return void res.writeHead(404).end();
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(pageWith(url.searchParams.get('quarry')!, url.searchParams.get('key')!));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
}

/** The snippets Quarry answers for `query`, as text: the marks taken out and the escaped characters put back. */
async function snippetsAsText(quarryUrl: string, key: string, origin: string, query: string): Promise<string[]> {
  const response = await fetch(`${quarryUrl}/api/v1/search`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', origin },
    body: JSON.stringify({ query, limit: 10 }),
  });
  const body = (await response.json()) as { data: { results: { snippet: string }[] } };
  const entities: Record<string, string> = { '&amp;': '&', '&lt;': '<', '&gt;': '>', '&quot;': '"', '&#39;': "'", '&hellip;': '…' };
  return body.data.results.map((r) => r.snippet.replace(/<\/?mark>/g, '').replace(/&(?:amp|lt|gt|quot|#39|hellip);/g, (e) => entities[e]!));
}

let fresh: ServerProcess;
let listed: TestServer;
let dataDir: string;
let shop: Site;
let other: Site;
let browser: Browser;
let publishable: string;
let secret: string;

describe.skipIf(!runs)(browserSuite("the README's search page on another origin, in headless Chromium"), () => {
  beforeAll(async () => {
    [shop, other] = await Promise.all([site(), site()]);
    dataDir = mkdtempSync(join(tmpdir(), 'quarry-fresh-'));
    // `npm start` with nothing set: development, embedded SQLite in DATA_DIR, CORS_ORIGINS at its default.
    fresh = await spawnServer({ NODE_ENV: 'development', DATA_DIR: dataDir, LOG_LEVEL: 'warn' });
    // A server that lets only the shop's pages in (CORS_ORIGINS), for a page of another origin to be refused by CORS.
    listed = await startTestServer({ CORS_ORIGINS: shop.origin });
    expect(readme).toContain('PUBLISHABLE_ORIGIN=http://localhost:8080 examples/curl.sh');
    const { stdout } = await promisify(execFile)('bash', ['examples/curl.sh'], {
      cwd: repoRoot,
      env: { ...process.env, QUARRY_URL: fresh.url, EXAMPLE_DIR: join(dataDir, 'examples'), PUBLISHABLE_ORIGIN: shop.origin },
    });
    publishable = /publishable key: (quarry_pk_test_\w+)/.exec(stdout)?.[1] ?? '';
    expect(publishable, stdout).toMatch(/^quarry_pk_test_[A-Za-z0-9]{52}$/);
    const email = /^1\. register (\S+)/m.exec(stdout)![1]!;
    const client = new ApiClient(fresh.url);
    const login = await client.post('/api/v1/auth/login', { email, password: 'correct-horse-42' });
    secret = (await client.post('/api/v1/keys', { name: 'server', permissions: ['search'] }, { token: login.body.data.token })).body.data.secretKey;
    browser = await openBrowser({ width: 900, height: 700 });
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await fresh?.stop();
    await listed?.stop();
    for (const s of [shop, other]) s?.server.close();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  }, 30_000);

  /** Opens the README page on `from`, searches `query`, and reads what the page shows once it has an answer. */
  async function searchFrom(from: Site, quarryUrl: string, key: string, query = 'granite') {
    const page = await browser.context.newPage();
    const record = await recordPage(page, [from.origin, quarryUrl]);
    try {
      await page.goto(`${from.origin}/search.html?quarry=${encodeURIComponent(quarryUrl)}&key=${encodeURIComponent(key)}`);
      await page.fill('input[name=q]', query);
      await page.click('button');
      await page.waitForFunction(() => !['', 'Searching...'].includes(document.getElementById('status')?.textContent ?? ''), undefined, { timeout: 15_000 });
      return {
        status: (await page.textContent('#status')) ?? '',
        items: await page.$$eval('#results li', (items) => items.map((item) => item.textContent ?? '')),
        marks: await page.$$eval('#results mark', (marks) => marks.map((mark) => mark.textContent ?? '')),
        record,
      };
    } finally {
      await page.close();
    }
  }

  it('when the page searches with the publishable key curl.sh made for its origin, then it lists the results with the matches marked', async () => {
    const shown = await searchFrom(shop, fresh.url, publishable);
    expect(shown.status).toMatch(/^\d+ results in \d+ ms$/);
    expect(shown.items.length).toBeGreaterThan(0);
    expect(shown.items.join(' ')).toMatch(/granite/i);
    expect(shown.marks.map((m) => m.toLowerCase())).toContain('granite');
    // Each item reads as Quarry's snippet does, spaces around the marked words included ("Granite countertop").
    expect(shown.items).toEqual(await snippetsAsText(fresh.url, publishable, shop.origin, 'granite'));
    expect(shown.items.some((item) => /granite /i.test(item))).toBe(true);
    expect(shown.record.foreignRequests).toEqual([]);
    expect(shown.record.errors).toEqual([]);
  });

  it('when the same page holds a secret key, then the search is refused and the page shows SECRET_KEY_IN_BROWSER', async () => {
    const shown = await searchFrom(shop, fresh.url, secret);
    expect(shown.status).toMatch(/^Search failed: SECRET_KEY_IN_BROWSER: Secret keys belong on a server/);
    expect(shown.items).toEqual([]);
  });

  it('when the page is served from an origin the key does not list, then the page shows ORIGIN_NOT_ALLOWED', async () => {
    const shown = await searchFrom(other, fresh.url, publishable);
    expect(shown.status).toBe(`Search failed: ORIGIN_NOT_ALLOWED: This publishable key may not be used from ${other.origin}. Add the origin to the key's allowedOrigins.`);
    expect(shown.items).toEqual([]);
  });

  it('when the page is served from an origin CORS_ORIGINS does not allow, then the browser keeps the answer from it and the page shows the failure', async () => {
    const shown = await searchFrom(other, listed.server.url, publishable);
    expect(shown.status).toBe('Search failed: Failed to fetch');
    expect(shown.items).toEqual([]);
    expect(shown.record.errors.join('\n')).toContain('has been blocked by CORS policy');
  });
});
