import Koa from 'koa';
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { crossOrigin } from '../../../src/http/cors.js';

/** A bare Koa app behind crossOrigin, answering 200 "inner" to whatever reaches it. */
async function serve(origins: '*' | string[]): Promise<{ url: string; server: Server }> {
  const koa = new Koa();
  koa.use(crossOrigin(origins, ['GET', 'POST']));
  koa.use((ctx) => {
    ctx.body = 'inner';
  });
  const server = koa.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
}

let any: { url: string; server: Server };
let none: { url: string; server: Server };
beforeAll(async () => {
  [any, none] = await Promise.all([serve('*'), serve([])]);
});
afterAll(() => {
  any.server.close();
  none.server.close();
});

const preflight = (url: string, origin: string) =>
  fetch(`${url}/api/v1/search`, { method: 'OPTIONS', headers: { origin, 'access-control-request-method': 'POST' } });

describe('crossOrigin', () => {
  it('when origins is *, then a preflight from any origin is answered with * and never reaches the app', async () => {
    const res = await preflight(any.url, 'https://anywhere.example.org');
    expect(res.status).toBe(204);
    expect(res.headers.get('access-control-allow-origin')).toBe('*');
    expect(res.headers.get('access-control-allow-methods')).toBe('GET,POST');
    expect(await res.text()).toBe('');
  });

  it('when origins is *, then an actual request from a page gets * and one without Origin gets no CORS header', async () => {
    const page = await fetch(any.url, { headers: { origin: 'null' } });
    expect(page.headers.get('access-control-allow-origin')).toBe('*');
    const server = await fetch(any.url);
    expect(server.headers.get('access-control-allow-origin')).toBeNull();
    expect(await server.text()).toBe('inner');
  });

  it('when no origin is allowed (none), then a preflight passes through to the app without CORS headers', async () => {
    const res = await preflight(none.url, 'https://shop.example.com');
    expect(res.headers.get('access-control-allow-origin')).toBeNull();
    expect(await res.text()).toBe('inner');
  });
});
