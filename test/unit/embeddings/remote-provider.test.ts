import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { EmbeddingError, RemoteEmbeddingProvider } from '../../../src/embeddings/index.js';

/** A stand-in for an OpenAI-compatible service: answers each request with the next scripted reply. */
interface Seen {
  path: string;
  authorization: string | undefined;
  body: { model: string; input: string[] };
}
type Answer = { status: number; body?: unknown; headers?: Record<string, string> };
type Reply = Answer | ((seen: Seen) => Answer);

let server: Server;
let baseUrl: string;
let seen: Seen[];
let replies: Reply[];

const readBody = (req: IncomingMessage) =>
  new Promise<string>((resolve) => {
    let text = '';
    req.on('data', (chunk) => (text += chunk));
    req.on('end', () => resolve(text));
  });

/** Vectors of length 3 with a known direction per input, not unit length, in reversed `index` order. */
const vectorsFor = ({ body }: Seen): Answer => ({
  status: 200,
  body: { object: 'list', data: body.input.map((text, index) => ({ object: 'embedding', index, embedding: [text.length, 0, text.length] })).reverse() },
});

beforeAll(async () => {
  server = createServer(async (req, res) => {
    const entry: Seen = { path: req.url ?? '', authorization: req.headers.authorization, body: JSON.parse(await readBody(req)) };
    seen.push(entry);
    const next = replies.shift() ?? vectorsFor;
    const reply = typeof next === 'function' ? next(entry) : next;
    res.writeHead(reply.status, { 'content-type': 'application/json', ...reply.headers });
    res.end(JSON.stringify(reply.body ?? { error: { message: 'scripted failure' } }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/`;
});
beforeEach(() => {
  seen = [];
  replies = [];
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

const provider = (overrides: Partial<ConstructorParameters<typeof RemoteEmbeddingProvider>[0]> = {}) =>
  new RemoteEmbeddingProvider({ baseUrl, model: 'test-embed-1', apiKey: 'sk-test', backoffMs: 1, ...overrides });

describe('RemoteEmbeddingProvider', () => {
  it('when texts are embedded, then it posts model and input to {base}/embeddings with the key, and returns unit vectors in input order', async () => {
    const remote = provider();
    const vectors = await remote.embed(['ab', 'abcd']);
    expect(seen).toEqual([{ path: '/v1/embeddings', authorization: 'Bearer sk-test', body: { model: 'test-embed-1', input: ['ab', 'abcd'] } }]);
    expect(vectors).toHaveLength(2);
    for (const vector of vectors) expect(Array.from(vector)).toEqual([expect.closeTo(Math.SQRT1_2, 6), 0, expect.closeTo(Math.SQRT1_2, 6)]);
    expect(remote.id).toBe('remote:test-embed-1');
    expect(remote.dimensions).toBe(3);
  });

  it('when there are more texts than a batch, then they go in several requests and come back in order', async () => {
    replies = [vectorsFor, vectorsFor, vectorsFor];
    const vectors = await provider({ batchSize: 2 }).embed(['a', 'bb', 'ccc', 'dddd', 'eeeee']);
    expect(seen.map((s) => s.body.input)).toEqual([['a', 'bb'], ['ccc', 'dddd'], ['eeeee']]);
    expect(vectors).toHaveLength(5);
  });

  it('when no key is configured, then no Authorization header is sent', async () => {
    await provider({ apiKey: null }).embed(['x']);
    expect(seen[0].authorization).toBeUndefined();
  });

  it('when the service answers 429 and then 503, then it retries and succeeds', async () => {
    replies = [{ status: 429, headers: { 'retry-after': '0' } }, { status: 503 }];
    const vectors = await provider().embed(['retry me']);
    expect(seen).toHaveLength(3);
    expect(vectors).toHaveLength(1);
  });

  it('when the service keeps failing, then an EmbeddingError names the status and never the key', async () => {
    replies = [{ status: 500 }, { status: 500 }, { status: 500 }];
    const error = await provider().embed(['x']).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(EmbeddingError);
    expect((error as Error).message).toBe('The embedding service answered HTTP 500.');
    expect(seen).toHaveLength(3);
  });

  it('when the request is refused (400), then it fails at once without retrying', async () => {
    replies = [{ status: 400 }];
    await expect(provider().embed(['x'])).rejects.toThrow('HTTP 400');
    expect(seen).toHaveLength(1);
  });

  it('when the answer has the wrong number of vectors or a changed length, then it is refused', async () => {
    replies = [{ status: 200, body: { data: [] } }];
    await expect(provider().embed(['x'])).rejects.toThrow('returned 0 vectors for 1 texts');
    const remote = provider();
    await remote.embed(['x']);
    replies = [{ status: 200, body: { data: [{ index: 0, embedding: [1, 2] }] } }];
    await expect(remote.embed(['y'])).rejects.toThrow('changed its vector length from 3 to 2');
  });

  it('when the service cannot be reached, then an EmbeddingError says so', async () => {
    const closed = new RemoteEmbeddingProvider({ baseUrl: 'http://127.0.0.1:1', model: 'm', apiKey: null, retries: 0 });
    await expect(closed.embed(['x'])).rejects.toThrow('could not be reached');
  });
});
