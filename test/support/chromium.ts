/**
 * Headless Chromium for the page tests (Debian's chromium package, driven by playwright-core; .ci/run installs it).
 * Without it a page test file is skipped with the reason in its name, except on CI (CI=true), where that is a failure.
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';

export const chromiumPath = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const hasChromium = existsSync(chromiumPath);
const required = process.env.CI === 'true';
const skipReason = `skipped: ${chromiumPath} is missing (apt-get install -y chromium; with CI=true this fails)`;

/** Whether a page test file runs; when it does not, say why once. */
export function browserTestsRun(file: string): boolean {
  if (!hasChromium && !required) console.warn(`${file} ${skipReason}`);
  return hasChromium || required;
}

/** The suite's name, with the reason when it is skipped. */
export const browserSuite = (name: string) => `${name}${hasChromium || required ? '' : ` (${skipReason})`}`;

export interface Browser {
  context: BrowserContext;
  close(): Promise<void>;
}

/** A fresh headless Chromium profile; `close` ends the browser and removes the profile. */
export async function openBrowser(viewport = { width: 1400, height: 900 }): Promise<Browser> {
  if (!hasChromium) throw new Error(`${chromiumPath} is missing: install Debian's chromium package (CI=true, so this is not skipped)`);
  const userDataDir = mkdtempSync(join(tmpdir(), 'quarry-chromium-'));
  const context = await chromium.launchPersistentContext(userDataDir, {
    executablePath: chromiumPath,
    headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    viewport,
  });
  return {
    context,
    async close() {
      await context.close();
      rmSync(userDataDir, { recursive: true, force: true });
    },
  };
}

/** What a page did that a test may want to forbid: policy violations, script errors, requests to other origins. */
export interface PageRecord {
  violations: { directive: string; blockedUri: string }[];
  errors: string[];
  foreignRequests: string[];
}

/**
 * Records, from the next navigation on, every Content-Security-Policy violation, page error and console error
 * (policy reports aside), and every response from an origin not in `origins`.
 */
export async function recordPage(page: Page, origins: string[]): Promise<PageRecord> {
  const record: PageRecord = { violations: [], errors: [], foreignRequests: [] };
  page.on('pageerror', (error) => record.errors.push(error.message));
  // A response means the request reached the network; a request the policy blocked never gets one.
  page.on('response', (response) => {
    const url = response.url();
    if (!origins.some((origin) => url.startsWith(origin)) && !/^(data|blob):/.test(url)) record.foreignRequests.push(url);
  });
  page.on('console', (message) => {
    if (message.type() === 'error' && !message.text().includes('Content Security Policy')) record.errors.push(message.text());
  });
  await page.exposeFunction('reportCspViolation', (directive: string, blockedUri: string) => record.violations.push({ directive, blockedUri }));
  await page.addInitScript(() => {
    const report = (window as unknown as { reportCspViolation: (d: string, u: string) => void }).reportCspViolation;
    document.addEventListener('securitypolicyviolation', (event) => report(event.violatedDirective, event.blockedURI));
  });
  return record;
}
