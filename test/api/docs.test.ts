import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { contractPath } from '../../src/lib/contract.js';
import { startTestServer, type TestServer } from '../support/test-server.js';

const require = createRequire(import.meta.url);
const redocVersion = (require('redoc/package.json') as { version: string }).version;

let t: TestServer;
beforeAll(async () => (t = await startTestServer()));
afterEach(() => t.assertContract());
afterAll(() => t.stop());

const fetchFrom = (path: string) => fetch(t.server.url + path);

describe('getContractYaml', () => {
  it('when asked, then the answer is openapi.yaml byte for byte, as application/yaml, revalidated on every use', async () => {
    const res = await fetchFrom('/openapi.yaml');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/yaml; charset=utf-8');
    expect(res.headers.get('cache-control')).toBe('no-cache');
    expect(Buffer.from(await res.arrayBuffer()).equals(readFileSync(contractPath()))).toBe(true);
  });
});

describe('getContractJson', () => {
  it('when asked, then the answer is the parsed openapi.yaml as JSON', async () => {
    const res = await fetchFrom('/openapi.json');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(await res.json()).toEqual(parse(readFileSync(contractPath(), 'utf8')));
  });
});

describe('getApiReference', () => {
  it('when asked, then an HTML page loads Redoc from this server and the contract from /openapi.json, under a strict CSP', async () => {
    const res = await fetchFrom('/docs');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
    const html = await res.text();
    expect(html).toContain('<redoc spec-url="/openapi.json"');
    expect(html).toContain(`<script src="/docs/redoc.standalone.js?v=${redocVersion}"></script>`);
    expect(html).not.toMatch(/https?:\/\//);
    expect(html).not.toMatch(/<script>/);
    const policy = res.headers.get('content-security-policy') ?? '';
    expect(policy).toContain("default-src 'none'");
    expect(policy).toContain("script-src 'self'");
    expect(policy).not.toContain('unsafe-eval');
    expect(policy).toContain("frame-ancestors 'none'");
  });
});

describe('getApiReferenceScript', () => {
  it('when asked with the version the page names, then the installed Redoc bundle, cacheable for a year', async () => {
    const res = await fetchFrom(`/docs/redoc.standalone.js?v=${redocVersion}`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    expect(res.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    const bundle = readFileSync(require.resolve('redoc/bundles/redoc.standalone.js'));
    expect(Buffer.from(await res.arrayBuffer()).equals(bundle)).toBe(true);
  });

  it('when the cache key is longer than 32 characters, then 400 VALIDATION_ERROR', async () => {
    const res = await t.client.get(`/docs/redoc.standalone.js?v=${'x'.repeat(33)}`);
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('VALIDATION_ERROR');
  });
});
