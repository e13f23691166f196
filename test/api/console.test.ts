/**
 * getConsole and its two files, served by Quarry from public/console as they are, under the playground's strict
 * policy; and its charting library's two, served from uPlot's package.
 */
import { readFileSync } from 'node:fs';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { repoRoot } from '../contract/support/contract.js';
import { startTestServer, type TestServer } from '../support/test-server.js';

let t: TestServer;
beforeAll(async () => (t = await startTestServer()));
afterEach(() => t.assertContract());
afterAll(() => t.stop());

const fetchFrom = (path: string) => fetch(t.server.url + path);
const file = (name: string) => readFileSync(`${repoRoot}public/console/${name}`);
const uplot = (name: string) => readFileSync(`${repoRoot}node_modules/uplot/dist/${name}`);

describe('getConsole', () => {
  it('when asked, then the page loads its script and style from this server only, with no inline script or style, under a strict CSP', async () => {
    const res = await fetchFrom('/console');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(res.headers.get('cache-control')).toBe('no-cache');
    const html = await res.text();
    expect(html).toBe(file('index.html').toString('utf8'));
    expect(html).toContain('<script src="/console/uplot.js" defer></script>\n<script src="/console/console.js" defer></script>');
    expect(html).toContain('<link rel="stylesheet" href="/console/uplot.css">');
    expect(html).toContain('<link rel="stylesheet" href="/console/console.css">');
    expect(html).not.toMatch(/https?:\/\//);
    expect(html).not.toMatch(/<script>|<style>|style="/);
    expect(res.headers.get('content-security-policy')).toBe(
      "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'; require-trusted-types-for 'script'; trusted-types 'none'",
    );
  });
});

describe('getConsoleScript and getConsoleStyle', () => {
  it('when asked, then the files of public/console byte for byte, with their types, revalidated on every use', async () => {
    for (const [path, name, type] of [
      ['/console/console.js', 'console.js', 'text/javascript; charset=utf-8'],
      ['/console/console.css', 'console.css', 'text/css; charset=utf-8'],
    ] as const) {
      const res = await fetchFrom(path);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toBe(type);
      expect(res.headers.get('cache-control')).toBe('no-cache');
      expect(Buffer.from(await res.arrayBuffer()).equals(file(name))).toBe(true);
    }
  });

  it('when the charting library is asked, then uPlot\'s script and style as its package ships them, from this server', async () => {
    for (const [path, bytes, type] of [
      ['/console/uplot.js', uplot('uPlot.iife.min.js'), 'text/javascript; charset=utf-8'],
      ['/console/uplot.css', uplot('uPlot.min.css'), 'text/css; charset=utf-8'],
    ] as const) {
      const res = await fetchFrom(path);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toBe(type);
      expect(res.headers.get('cache-control')).toBe('no-cache');
      expect(Buffer.from(await res.arrayBuffer()).equals(bytes)).toBe(true);
    }
    // The library builds no HTML from strings either, which the page's Trusted Types policy would refuse.
    expect(uplot('uPlot.iife.min.js').toString('utf8')).not.toMatch(/innerHTML|outerHTML|insertAdjacentHTML|document\.write/);
  });

  it('when the script is read, then it calls only this origin\'s API, builds no HTML from strings and keeps no token in storage', () => {
    const script = file('console.js').toString('utf8');
    expect(script).toContain("const API = '/api/v1';");
    expect(script).not.toMatch(/innerHTML|outerHTML|insertAdjacentHTML|document\.write|eval\(|new Function/);
    expect(script).not.toMatch(/localStorage|sessionStorage|document\.cookie|indexedDB/);
    expect(script).not.toMatch(/https?:\/\//);
  });
});
