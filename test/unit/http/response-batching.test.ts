import type { AddressInfo } from 'node:net';
import Koa from 'koa';
import { afterEach, describe, expect, it } from 'vitest';
import { responseBatching } from '../../../src/http/response-batching.js';

/** What happened, in order: handlers finishing and responses being written. */
let events: string[] = [];
let close: (() => void) | null = null;

async function serve(app: Koa): Promise<string> {
  const server = app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  close = () => server.close();
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

function appWithBatching(): Koa {
  const app = new Koa();
  app.use(async (ctx, next) => {
    ctx.res.once('finish', () => events.push(`written ${ctx.path}`));
    await next();
  });
  app.use(responseBatching());
  app.use(async (ctx) => {
    if (ctx.path === '/fail') throw Object.assign(new Error('boom'), { status: 418, expose: true });
    events.push(`handled ${ctx.path}`);
    ctx.set('X-Seen', ctx.path);
    ctx.body = { path: ctx.path };
  });
  app.silent = true;
  return app;
}

afterEach(() => {
  close?.();
  close = null;
  events = [];
});

describe('responseBatching', () => {
  it('when one request comes alone, then it is answered whole (status, headers, body)', async () => {
    const url = await serve(appWithBatching());
    const response = await fetch(`${url}/one`);
    expect(response.status).toBe(200);
    expect(response.headers.get('x-seen')).toBe('/one');
    expect(await response.json()).toEqual({ path: '/one' });
    expect(events).toEqual(['handled /one', 'written /one']);
  });

  it('when several requests finish in the same turn, then all are released together at the end of that turn', async () => {
    const batching = responseBatching();
    const order: string[] = [];
    const request = (name: string) =>
      batching({} as never, async () => {
        order.push(`handled ${name}`);
      }).then(() => order.push(`released ${name}`));
    // Registered before the requests: it runs in the same check phase, just before the batch is released.
    const endOfTurn = new Promise<string[]>((resolve) => setImmediate(() => resolve([...order])));
    const all = Promise.all([request('a'), request('b'), request('c')]);
    expect(await endOfTurn).toEqual(['handled a', 'handled b', 'handled c']);
    await all;
    expect(order).toEqual(['handled a', 'handled b', 'handled c', 'released a', 'released b', 'released c']);
    // The next turn starts a new batch rather than waiting on the old one.
    await request('d');
    expect(order.at(-1)).toBe('released d');
  });

  it('when the rest of the pipeline rejects, then the rejection passes at once, without waiting for the turn', async () => {
    const batching = responseBatching();
    let turnEnded = false;
    setImmediate(() => (turnEnded = true));
    await expect(batching({} as never, async () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    expect(turnEnded).toBe(false);
  });

  it('when a handler throws, then the error is answered by Koa as without batching', async () => {
    const url = await serve(appWithBatching());
    const response = await fetch(`${url}/fail`);
    expect(response.status).toBe(418);
    expect(await response.text()).toBe('boom');
  });
});
