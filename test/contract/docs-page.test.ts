/**
 * The API reference page as a reader sees it: GET /docs opened in headless Chromium
 * (test/support/chromium.ts), Redoc rendered from Quarry's own files under the page's Content-Security-Policy, and
 * every operation of openapi.yaml listed.
 */
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { browserSuite, browserTestsRun, openBrowser, recordPage, type Browser, type PageRecord } from '../support/chromium.js';
import { startTestServer, type TestServer } from '../support/test-server.js';
import { Contract } from './support/contract.js';

const contract = new Contract();
const runs = browserTestsRun('test/contract/docs-page.test.ts');
const screenshotPath = join(tmpdir(), 'quarry-docs-page.png');

let t: TestServer;
let browser: Browser;
let page: Page;
let record: PageRecord;

describe.skipIf(!runs)(browserSuite('GET /docs in headless Chromium'), () => {
  beforeAll(async () => {
    t = await startTestServer();
    browser = await openBrowser();
    page = browser.context.pages()[0] ?? (await browser.context.newPage());
    record = await recordPage(page, [new URL(t.server.url).origin]);
    const response = await page.goto(`${t.server.url}/docs`);
    expect(response?.status()).toBe(200);
    // Redoc has rendered when the middle panel shows the last operation of the contract.
    const last = contract.operations.at(-1)!;
    await page.waitForSelector(`[id="${operationAnchor(last)}"]`, { timeout: 60_000 });
    await page.screenshot({ path: screenshotPath });
  }, 120_000);
  afterEach(() => t?.assertContract());
  afterAll(async () => {
    await browser?.close();
    await t?.stop();
  }, 30_000);

  it('when Redoc has rendered, then every operation of openapi.yaml is in the sidebar under its tag with its summary', async () => {
    const listed = new Map(
      await page.$$eval('li[data-item-id*="/operation/"]', (items) => items.map((item) => [item.getAttribute('data-item-id') ?? '', item.getAttribute('aria-label') ?? ''] as const)),
    );
    const missing = contract.operations
      .filter((operation) => listed.get(operationAnchor(operation)) !== (operation.spec.summary ?? operation.operationId))
      .map((operation) => `${operation.method} ${operation.path} (${operation.operationId}: "${operation.spec.summary}")`);
    expect(missing, `screenshot: ${screenshotPath}`).toEqual([]);
    expect(listed.size).toBe(contract.operations.length);
  });

  it('when Redoc has rendered, then every operation has its section with method and path in the middle panel', async () => {
    const sections = new Map(
      await page.$$eval('[id*="/operation/"]', (nodes) => nodes.map((node) => [node.id, (node as HTMLElement).innerText] as const)),
    );
    const missing = contract.operations.filter((operation) => {
      const text = sections.get(operationAnchor(operation)) ?? '';
      return !text.includes(operation.spec.summary ?? operation.operationId) || !text.includes(operation.path);
    });
    expect(missing.map((operation) => operation.operationId)).toEqual([]);
    expect(await page.title()).toBe(`${contract.doc.info.title} ${contract.doc.info.version} reference`);
  });

  it('when the reader searches, then Redoc answers from its blob: worker, which the policy allows', async () => {
    await page.fill('input.search-input', 'semantic');
    await page.waitForSelector('[data-role="search:results"] li[data-item-id]', { timeout: 15_000 });
    await page.fill('input.search-input', '');
  });

  it('when the page has loaded, then nothing left this server and the policy blocked only the Redocly footer logo', () => {
    // Redoc's footer asks cdn.redoc.ly for its logo; the policy blocks it (no third-party requests) and Redoc
    // then drops the image. Any other violation means the policy breaks Redoc or the page grew a dependency.
    const unexpected = record.violations.filter((v) => !(v.directive === 'img-src' && v.blockedUri.startsWith('https://cdn.redoc.ly/')));
    expect(unexpected).toEqual([]);
    expect(record.foreignRequests).toEqual([]);
    expect(record.errors).toEqual([]);
  });
});

/** Redoc's id of an operation, in the sidebar (`data-item-id`) and the middle panel (`id`). */
function operationAnchor(operation: { operationId: string; spec: { tags?: string[] } }): string {
  return `tag/${operation.spec.tags?.[0] ?? ''}/operation/${operation.operationId}`;
}
