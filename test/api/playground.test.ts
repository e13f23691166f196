/** getSearchPlayground and its two files: served by Quarry from public/playground as they are, under a strict policy. */
import { readFileSync } from 'node:fs';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { repoRoot } from '../contract/support/contract.js';
import { startTestServer, type TestServer } from '../support/test-server.js';

let t: TestServer;
beforeAll(async () => (t = await startTestServer()));
afterEach(() => t.assertContract());
afterAll(() => t.stop());

const fetchFrom = (path: string) => fetch(t.server.url + path);
const file = (name: string) => readFileSync(`${repoRoot}public/playground/${name}`);

describe('getSearchPlayground', () => {
  it('when asked, then the page loads its script and style from this server only, with no inline script or style, under a strict CSP', async () => {
    const res = await fetchFrom('/playground');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(res.headers.get('cache-control')).toBe('no-cache');
    const html = await res.text();
    expect(html).toBe(file('index.html').toString('utf8'));
    expect(html).toContain('<script src="/playground/playground.js" defer></script>');
    expect(html).toContain('<link rel="stylesheet" href="/playground/playground.css">');
    expect(html).not.toMatch(/https?:\/\//);
    expect(html).not.toMatch(/<script>|<style>|style="/);
    expect(res.headers.get('content-security-policy')).toBe(
      "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'; require-trusted-types-for 'script'; trusted-types 'none'",
    );
  });
});

describe('getSearchPlaygroundScript and getSearchPlaygroundStyle', () => {
  it('when asked, then the files of public/playground byte for byte, with their types, revalidated on every use', async () => {
    for (const [path, name, type] of [
      ['/playground/playground.js', 'playground.js', 'text/javascript; charset=utf-8'],
      ['/playground/playground.css', 'playground.css', 'text/css; charset=utf-8'],
    ] as const) {
      const res = await fetchFrom(path);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toBe(type);
      expect(res.headers.get('cache-control')).toBe('no-cache');
      expect(Buffer.from(await res.arrayBuffer()).equals(file(name))).toBe(true);
    }
  });

  it('when the script is read, then it calls this origin\'s search and builds no HTML from strings', () => {
    const script = file('playground.js').toString('utf8');
    expect(script).toContain("const QUARRY_URL = '';");
    expect(script).toContain('/api/v1/search');
    expect(script).not.toMatch(/innerHTML|outerHTML|insertAdjacentHTML|document\.write|eval\(/);
  });
});
