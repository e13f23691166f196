/**
 * The search playground as a person uses it: GET /playground in headless Chromium, a publishable key
 * pasted, a query typed, a mode picked; ranked results with highlighted snippets, each database's status and time,
 * pages; the errors Quarry answers shown as they are; and all of it under the page's Content-Security-Policy with
 * nothing fetched from anywhere else. PLAYGROUND_SCREENSHOT=<path> saves the results screenshot there (the README's
 * docs/playground.png is made so); otherwise it goes to the temp folder.
 */
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { browserSuite, browserTestsRun, openBrowser, recordPage, type Browser, type PageRecord } from '../support/chromium.js';
import { createKey, registerUser } from '../support/factories.js';
import { CORPUS, seedSqlite } from '../support/search-corpus.js';
import { startTestServer, type TestServer } from '../support/test-server.js';
import { repoRoot } from './support/contract.js';

const runs = browserTestsRun('test/contract/playground-page.test.ts');
const screenshotPath = process.env.PLAYGROUND_SCREENSHOT ? resolve(repoRoot, process.env.PLAYGROUND_SCREENSHOT) : join(tmpdir(), 'quarry-playground.png');

const reviews = [
  { id: 1, title: 'Lasts all week', body: 'Great battery life: a whole week of commuting on one charge.' },
  { id: 2, title: 'Two phone charges', body: 'This battery pack charges my phone twice, and it fits in a pocket.' },
  { id: 3, title: 'Fine sound', body: 'The headphones sound fine, but the battery is weak in the cold.' },
];

let t: TestServer;
let browser: Browser;
let page: Page;
let record: PageRecord;
let keys: { publishable: string; elsewhere: string; secret: string };

describe.skipIf(!runs)(browserSuite('GET /playground in headless Chromium'), () => {
  beforeAll(async () => {
    t = await startTestServer();
    const origin = new URL(t.server.url).origin;
    const owner = await registerUser(t.client);
    // The owner's own SQLite folder: the only one its connections can name.
    await seedSqlite(join(t.dataDir, 'sqlite', owner.id), 'catalog.db', 'products', CORPUS);
    await seedSqlite(join(t.dataDir, 'sqlite', owner.id), 'reviews.db', 'reviews', reviews);
    const connect = async (name: string, database: string) =>
      (await t.client.post('/api/v1/databases', { name, engine: 'sqlite', database, environment: 'test' }, { token: owner.token })).body.data.database.id as string;
    const databases = [await connect('Product catalog', 'catalog.db'), await connect('Reviews', 'reviews.db')];
    const publishable = async (allowedOrigins: string[]) =>
      (await t.client.post('/api/v1/keys/publishable', { name: 'Playground', databases, allowedOrigins }, { token: owner.token })).body.data.publishableKey as string;
    keys = {
      publishable: await publishable([origin]),
      elsewhere: await publishable(['https://shop.example.com']),
      secret: (await createKey(t.client, owner, { permissions: ['search'] })).secret,
    };
    browser = await openBrowser({ width: 1100, height: 1000 });
    page = browser.context.pages()[0] ?? (await browser.context.newPage());
    record = await recordPage(page, [origin]);
    const response = await page.goto(`${t.server.url}/playground`);
    expect(response?.status()).toBe(200);
  }, 120_000);
  afterEach(() => t?.assertContract());
  afterAll(async () => {
    await browser?.close();
    await t?.stop();
  }, 30_000);

  /** Fills the form, presses Search and waits until the status line has an answer. */
  async function search(key: string, query: string, options: { mode?: string; perPage?: string } = {}) {
    await page.fill('input[name=key]', key);
    await page.fill('input[name=query]', query);
    await page.selectOption('select[name=mode]', options.mode ?? 'natural');
    await page.selectOption('select[name=limit]', options.perPage ?? '10');
    await page.click('button[type=submit]');
    await waitForAnswer();
  }

  const waitForAnswer = () =>
    page.waitForFunction(() => !['', 'Searching…'].includes(document.getElementById('status')?.textContent ?? ''), undefined, { timeout: 15_000 });
  const statusLine = async () => (await page.textContent('#status')) ?? '';
  const ranks = () => page.$$eval('#results li', (items) => items.map((item) => (item as HTMLLIElement).value));

  it('when a publishable key searches, then the page lists ranked results with highlighted snippets and each database\'s status and time', async () => {
    await search(keys.publishable, 'battery', { perPage: '5' });
    // 36 rows say battery: three products, thirty battery packs and three reviews. 100 per visitor: free tier / 10.
    expect(await statusLine()).toMatch(/^36 results in \d+ ms · \d+ of 100 requests left this hour$/);
    expect(await ranks()).toEqual([1, 2, 3, 4, 5]);
    const marks = await page.$$eval('#results li .snippet mark', (nodes) => nodes.map((node) => node.textContent?.toLowerCase()));
    expect(marks.length).toBeGreaterThanOrEqual(5);
    expect(new Set(marks)).toEqual(new Set(['battery']));
    const rows = await page.$$eval('#databases tbody tr', (trs) => trs.map((tr) => [...tr.children].map((td) => td.textContent)));
    expect(rows.map(([name, engine, status]) => [name, engine, status]).sort()).toEqual([['Product catalog', 'sqlite', 'ok'], ['Reviews', 'sqlite', 'ok']]);
    for (const row of rows) expect(row[3]).toMatch(/^\d+ ms$/);
    expect(await page.textContent('#page')).toBe('Page 1 of 8');
    await page.screenshot({ path: screenshotPath, fullPage: true });
  });

  it('when Next and then Previous are pressed, then the ranking goes on from where the page ended and comes back', async () => {
    await page.click('#next');
    await page.waitForFunction(() => (document.querySelector('#results li') as HTMLLIElement | null)?.value === 6);
    expect(await ranks()).toEqual([6, 7, 8, 9, 10]);
    expect(await page.textContent('#page')).toBe('Page 2 of 8');
    await page.click('#previous');
    await page.waitForFunction(() => (document.querySelector('#results li') as HTMLLIElement | null)?.value === 1);
    expect(await page.isDisabled('#previous')).toBe(true);
  });

  it('when a row\'s text holds markup, then the snippet shows it as text: only <mark> becomes an element', async () => {
    await search(keys.publishable, 'gamers');
    const first = await page.$eval('#results li .snippet', (node) => ({ text: node.textContent, tags: [...node.querySelectorAll('*')].map((e) => e.tagName) }));
    expect(first.text).toContain('& <RGB> lighting "for gamers"');
    expect(new Set(first.tags)).toEqual(new Set(['MARK']));
  });

  it('when a secret key is pasted, then Quarry answers it: the playground is Quarry\'s own page (another site\'s page is refused, see web-page-search)', async () => {
    await search(keys.secret, 'battery');
    expect(await statusLine()).toMatch(/^\d+ results? in \d+ ms/);
    expect((await ranks()).length).toBeGreaterThan(0);
  });

  it('when the publishable key does not list this origin, then the page shows 403 ORIGIN_NOT_ALLOWED', async () => {
    await search(keys.elsewhere, 'battery');
    expect(await statusLine()).toContain(`403 ORIGIN_NOT_ALLOWED: This publishable key may not be used from ${new URL(t.server.url).origin}.`);
  });

  it('when a semantic search finds no table with a semantic index, then the page shows 409 SEMANTIC_INDEX_REQUIRED', async () => {
    await search(keys.publishable, 'something to charge a phone', { mode: 'semantic' });
    expect(await statusLine()).toMatch(/^409 SEMANTIC_INDEX_REQUIRED: No selected table is searched by meaning yet/);
  });

  it('when the page has been used, then nothing left this server, the policy blocked nothing and no script failed', () => {
    // The browser logs each refused request (403, 409) as a failed resource load; those answers are the tests above.
    const errors = record.errors.filter((error) => !/^Failed to load resource: the server responded with a status of (403|409)/.test(error));
    expect(record.violations).toEqual([]);
    expect(record.foreignRequests).toEqual([]);
    expect(errors).toEqual([]);
  });
});
