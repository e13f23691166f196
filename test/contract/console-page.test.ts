/**
 * The console as a new user uses it, in headless Chromium: GET /console, sign up, upload and connect the
 * README's quick-start SQLite file and watch its sync's progress bar reach done, create a secret key (shown once)
 * and revoke it, make a search-only secret key kept in the page and search with it, then read each analytics chart with data; at
 * 1280 and 390 px wide, by keyboard, under the page's Content-Security-Policy with nothing fetched from elsewhere.
 * axe-core checks each view at 1280 and 390 px: its counts per impact are printed, and a serious or critical
 * violation fails. CONSOLE_SCREENSHOTS=docs saves the screenshots the README shows (docs/console-*.png); otherwise they go to the temp folder.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { browserSuite, browserTestsRun, openBrowser, recordPage, type Browser, type PageRecord } from '../support/chromium.js';
import { uniqueEmail } from '../support/factories.js';
import { onSqlite } from '../support/seed-databases.js';
import { startTestServer, type TestServer } from '../support/test-server.js';
import { repoRoot } from './support/contract.js';

const runs = browserTestsRun('test/contract/console-page.test.ts');
const shotDir = process.env.CONSOLE_SCREENSHOTS ? resolve(repoRoot, process.env.CONSOLE_SCREENSHOTS) : mkdtempSync(join(tmpdir(), 'quarry-console-shots-'));
const shot = (name: string) => join(shotDir, `console-${name}.png`);

let t: TestServer;
let browser: Browser;
let page: Page;
let record: PageRecord;
let fileDir: string;
let shopFile: string;
const email = uniqueEmail('console');

/** axe-core's script, evaluated in the page by the test (the page's policy would refuse it as a script tag). */
const axeSource = readFileSync(resolve(repoRoot, 'node_modules/axe-core/axe.min.js'), 'utf8');

interface AxeViolation { id: string; impact: string | null; help: string; targets: string[] }

/** axe-core's violations (WCAG 2 A and AA and its best practices) in the view as it is now. */
async function axeViolations(): Promise<AxeViolation[]> {
  if (!(await page.evaluate(() => 'axe' in window))) await page.evaluate(axeSource);
  return page.evaluate(async () => {
    const axe = (window as unknown as { axe: { run(context: Document, options: object): Promise<{ violations: { id: string; impact: string | null; help: string; nodes: { target: unknown[] }[] }[] }> } }).axe;
    const { violations } = await axe.run(document, { resultTypes: ['violations'] });
    return violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help, targets: v.nodes.slice(0, 3).map((n) => n.target.join(' ')) }));
  });
}

/**
 * What axe-core does not judge: nothing is wider than the window (390 px phones), and every chart (a canvas) is
 * named by its caption and has its numbers as a table.
 */
async function layoutProblems(): Promise<string[]> {
  return page.evaluate(() => {
    const problems: string[] = [];
    for (const plot of document.querySelectorAll('figure .plot')) {
      if ((plot as HTMLElement).offsetParent === null) continue;
      if (plot.getAttribute('role') !== 'img' || !document.getElementById(plot.getAttribute('aria-labelledby') ?? '')?.textContent) problems.push('chart without role img and a name');
      if (!plot.closest('figure')?.querySelector('details table')) problems.push('chart without its numbers');
    }
    if (document.documentElement.scrollWidth > window.innerWidth + 1) problems.push(`page ${document.documentElement.scrollWidth} px wide in a ${window.innerWidth} px window`);
    return problems;
  });
}

const checked: Record<string, Record<string, number>> = {};
/** Runs axe-core on the view, prints its violations' counts per impact, and fails on a serious or critical one. */
async function checkView(name: string) {
  const violations = await axeViolations();
  const counts: Record<string, number> = { critical: 0, serious: 0, moderate: 0, minor: 0 };
  for (const v of violations) counts[v.impact ?? 'minor'] = (counts[v.impact ?? 'minor'] ?? 0) + v.targets.length;
  checked[name] = counts;
  const list = violations.map((v) => `${v.impact} ${v.id} (${v.help}) at ${v.targets.join(', ')}`);
  console.info(`console ${name} view at ${page.viewportSize()?.width} px: axe-core violations ${JSON.stringify(counts)}${list.length ? `: ${list.join('; ')}` : ''}`);
  expect(violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => `${v.id} at ${v.targets.join(', ')}`)).toEqual([]);
  expect(await layoutProblems()).toEqual([]);
}

async function open(view: 'Databases' | 'Keys' | 'Analytics' | 'Try it') {
  await page.click(`#views button:text-is("${view}")`);
}

describe.skipIf(!runs)(browserSuite('GET /console in headless Chromium'), () => {
  beforeAll(async () => {
    t = await startTestServer({ USAGE_FLUSH_MS: '200' });
    fileDir = mkdtempSync(join(tmpdir(), 'quarry-console-file-'));
    // The README's quick-start table, as a person has it on disk.
    shopFile = await onSqlite(fileDir, 'shop.db', [
      'CREATE TABLE products (id INTEGER PRIMARY KEY, name TEXT, description TEXT, category TEXT, price REAL)',
      `INSERT INTO products VALUES (1, 'Quiet headphones', 'Noise cancelling headphones for long flights', 'audio', 89),
        (2, 'Desk lamp', 'Warm LED lamp with a dimmer', 'home', 25), (3, 'Travel pillow', 'Memory foam pillow for flights', 'travel', 19)`,
    ]);
    browser = await openBrowser({ width: 1280, height: 900 });
    page = browser.context.pages()[0] ?? (await browser.context.newPage());
    record = await recordPage(page, [new URL(t.server.url).origin]);
    const response = await page.goto(`${t.server.url}/console`);
    expect(response?.status()).toBe(200);
  }, 120_000);
  afterEach(() => t?.assertContract());
  afterAll(async () => {
    await browser?.close();
    await t?.stop();
    if (fileDir) rmSync(fileDir, { recursive: true, force: true });
    console.info(`console axe-core violations per view and impact: ${JSON.stringify(checked)}; screenshots in ${shotDir}`);
  }, 30_000);

  it('when a person signs up, then the console shows their (empty) databases', async () => {
    await checkView('sign-in');
    await page.fill('#sign-in input[name=email]', email);
    await page.fill('#sign-in input[name=password]', 'correct-horse-42');
    await page.fill('#sign-in input[name=name]', 'Ada');
    await page.click('#sign-in button[value=register]');
    await page.waitForSelector('#views:not([hidden])');
    expect(await page.textContent('#who')).toBe(email);
    expect(await page.isVisible('#view-databases')).toBe(true);
  });

  it('when the quick-start SQLite file is uploaded and connected, then its table\'s sync progress bar reaches done', async () => {
    await page.fill('#connect input[name=name]', 'Shop');
    await page.setInputFiles('#connect input[name=file]', shopFile);
    await page.click('#connect button[type=submit]');
    const progress = page.locator('#database-list tr:has(th:text-is("products")) progress');
    await progress.waitFor();
    await page.locator('#database-list .progress-text.done').waitFor({ timeout: 30_000 });
    expect(await page.locator('#database-list .progress-text').textContent()).toMatch(/^done: 3 rows/);
    expect(await progress.evaluate((bar: HTMLProgressElement) => bar.value === bar.max)).toBe(true);
    const row = await page.$$eval('#database-list tbody tr > *', (cells) => cells.slice(0, 3).map((c) => c.textContent));
    expect(row).toEqual(['products', 'ready', '3']);
    expect(await page.textContent('#database-list .connection-status')).toBe('connected');
    await page.click('#database-list button:text-is("Test connection")');
    await expect.poll(() => page.textContent('#database-list .message')).toMatch(/^Connection works \(\d+ ms, SQLite/);
    await checkView('databases');
    await page.screenshot({ path: shot('databases'), fullPage: true });
  });

  it('when a setting fails, then the card shows the API\'s own message', async () => {
    await page.fill('#database-list form.columns input[name=filterable]', 'colour');
    await page.click('#database-list form.columns button');
    await expect.poll(() => page.textContent('#database-list .message')).toMatch(/^400 VALIDATION_ERROR: .*colour/);
  });

  it('when a secret key is created, then it is shown once with a copy button; when it is revoked, then the list says so', async () => {
    await open('Keys');
    await page.fill('#create-key input[name=name]', 'Server search');
    await page.click('#create-key button[type=submit]');
    await page.waitForSelector('#secret:not([hidden])');
    expect(await page.textContent('#secret-value')).toMatch(/^quarry_sk_test_\w{40,}$/);
    expect(await page.isVisible('#copy-secret')).toBe(true);
    const row = page.locator('#key-table tbody tr:has(th:text-is("Server search"))');
    await row.waitFor();
    expect(await row.locator('td').allTextContents()).toEqual(expect.arrayContaining(['secret', 'free', 'test', 'never', '1,000 of 1,000']));
    await checkView('keys');
    await page.screenshot({ path: shot('keys'), fullPage: true });
    await page.click('button[aria-label="Revoke Server search"]');
    expect(await page.textContent('button[aria-label="Revoke Server search"]')).toBe('Press again to revoke');
    await page.click('button[aria-label="Revoke Server search"]');
    await expect.poll(() => row.locator('td').last().textContent()).toMatch(/^revoked /);
  });

  it('when a search-only secret key is made in the page and a query typed, then Quarry answers it from its own origin with ranked results, snippets and each database\'s status and time', async () => {
    await open('Try it');
    await page.click('#make-try-key');
    await expect.poll(() => page.inputValue('#try-key input[name=key]')).toMatch(/^quarry_sk_test_\w{40,}$/);
    const search = async (query: string) => {
      await page.fill('#try-search input[name=query]', query);
      await page.click('#try-search button[type=submit]');
      await expect.poll(() => page.textContent('#status')).toMatch(/results? in \d+ ms$/);
    };
    await search('headphones for a flight');
    expect(await page.textContent('#status')).toMatch(/^2 results in \d+ ms$/);
    // The snippet comes from the description, which holds more of the query than the name.
    expect(await page.textContent('#try-results li:first-child .snippet')).toBe('Noise cancelling headphones for long flights');
    expect(await page.$$eval('#try-results li:first-child mark', (marks) => marks.map((m) => m.textContent))).toEqual(['headphones', 'flights']);
    const databases = await page.$$eval('#try-databases tbody tr', (rows) => rows.map((r) => [...r.children].map((c) => c.textContent)));
    expect(databases.map((r) => r.slice(0, 3))).toEqual([['Shop', 'sqlite', 'ok']]);
    expect(databases[0]![3]).toMatch(/^\d+ ms$/);
    await search('zebra saddle');
    expect(await page.textContent('#status')).toMatch(/^0 results/);
    await search('headphones');
    await checkView('try');
    await page.screenshot({ path: shot('try'), fullPage: true });
  });

  it('when analytics are opened, then each chart draws the searches just made, and the query that found nothing is listed', async () => {
    await open('Analytics');
    await page.locator('#chart-searches details td').first().waitFor({ state: 'attached' });
    // Each chart is uPlot's canvas: its bars and lines are found by their colours' pixels, its numbers in its table.
    const inked = (chart: string, colour: string) => page.$eval(`#chart-${chart} .plot canvas`, (canvas: HTMLCanvasElement, hex) => {
      const want = [1, 3, 5].map((i) => parseInt(hex.slice(i, i + 2), 16));
      const { data } = canvas.getContext('2d')!.getImageData(0, 0, canvas.width, canvas.height);
      let count = 0;
      for (let i = 0; i < data.length; i += 4) if (data[i + 3] === 255 && want.every((v, c) => Math.abs(data[i + c]! - v) < 8)) count += 1;
      return count;
    }, colour);
    await page.locator('#chart-share .plot canvas').waitFor();
    for (const chart of ['searches', 'queries', 'share']) expect(await inked(chart, '#3d63dd'), `${chart}'s bars`).toBeGreaterThan(100);
    expect(await inked('latency', '#1f3fa8'), 'the p50 line').toBeGreaterThan(20);
    expect(await inked('latency', '#b54708'), 'the p95 line').toBeGreaterThan(20);
    expect(await page.$$eval('#chart-latency .legend li', (items) => items.map((i) => i.textContent))).toEqual(['p50: solid line, round markers', 'p95: dashed line, square markers']);
    expect(await page.$$eval('#chart-queries details tbody th', (cells) => cells.map((c) => c.textContent))).toEqual(expect.arrayContaining(['headphones for a flight', 'zebra saddle', 'headphones']));
    expect(await page.$$eval('#chart-share details tbody tr', (rows) => rows.map((r) => [...r.children].map((c) => c.textContent)))).toEqual([['Shop', '3', '100 %']]);
    expect(await page.$$eval('#chart-searches details td', (cells) => cells.map((c) => Number(c.textContent)).reduce((a, b) => a + b, 0))).toBe(3);
    expect(await page.textContent('#zero-results')).toContain('zebra saddle');
    await checkView('analytics');
    await page.screenshot({ path: shot('analytics'), fullPage: true });
  });

  it('when the window is 390 px wide, then every view fits and stays labelled', async () => {
    await page.setViewportSize({ width: 390, height: 844 });
    for (const [view, name] of [['Databases', 'databases'], ['Keys', 'keys'], ['Analytics', 'analytics'], ['Try it', 'try']] as const) {
      await open(view);
      await page.waitForTimeout(300); // the view's answers arrive; the check below asks the page, not the clock
      await checkView(`${name}-390`);
    }
    await open('Databases');
    await page.locator('#database-list .progress-text.done').waitFor();
    await page.screenshot({ path: shot('databases-390'), fullPage: true });
    await page.setViewportSize({ width: 1280, height: 900 });
  });

  it('when only the keyboard is used, then a view can be reached and its heading takes the focus', async () => {
    await open('Databases');
    await page.focus('#views button[data-view=databases]');
    await page.keyboard.press('Tab');
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe('Keys');
    await page.keyboard.press('Enter');
    await page.waitForSelector('#view-keys:not([hidden])');
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('keys-title');
  });

  it('when the person signs out or reloads, then the session is gone from the page', async () => {
    await page.click('#sign-out');
    await page.waitForSelector('#view-sign-in:not([hidden])');
    expect(await page.textContent('#status')).toBe('Signed out: the session has ended.');
    await page.reload();
    await page.waitForSelector('#sign-in');
    const sections = await page.$$eval('main > section', (all) => all.map((x) => `${x.id}:${(x as HTMLElement).hidden}`));
    expect(await page.isVisible('#view-sign-in'), `${page.url()} ${sections.join(' ')}`).toBe(true);
    expect(await page.isHidden('#views')).toBe(true);
    expect(await page.evaluate(() => [localStorage.length, sessionStorage.length, document.cookie])).toEqual([0, 0, '']);
    await page.setViewportSize({ width: 390, height: 844 });
    await checkView('sign-in-390');
    await page.setViewportSize({ width: 1280, height: 900 });
  });

  it('when the console has been used, then nothing left this server, the policy blocked nothing and no script failed', () => {
    // The browser logs each refused request (the 400 of a bad column above) as a failed resource load.
    const errors = record.errors.filter((error) => !/^Failed to load resource: the server responded with a status of 400/.test(error));
    expect(record.violations).toEqual([]);
    expect(record.foreignRequests).toEqual([]);
    expect(errors).toEqual([]);
  });
});
