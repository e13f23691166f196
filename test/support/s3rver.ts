/**
 * s3rver (an S3-compatible server on the file system) on loopback, for the index on object storage, and a proxy in
 * front of it that honours conditional writes as S3 does. s3rver ignores `If-None-Match: *` on PUT: two writers of
 * one index then replace each other's commits without an error (Quarry's start-up check refuses it). The proxy
 * answers such a PUT (and the completion of such a multipart upload) with 412 when the object exists, one write of
 * a key at a time, and forwards everything else unchanged, signatures included. `down()` stops s3rver and the proxy
 * drops every connection (an outage); `up()` starts it again on the same port and files.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { Agent, createServer, request, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
// @ts-expect-error s3rver ships no types
import S3rver from 's3rver';

/** s3rver's own account: it refuses other access keys. */
export const S3RVER_CREDENTIALS = { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' };

export interface S3rverStore {
  /** s3rver itself (ignores conditional writes). */
  directUrl: string;
  /** The proxy that honours them. */
  url: string;
  /** Conditional writes the proxy refused (the object existed). */
  refused(): number;
  /** Every request the proxy took, in order (method, path with query, Range header). */
  requests: Array<{ method: string; path: string; range: string | null }>;
  down(): Promise<void>;
  up(): Promise<void>;
  close(): Promise<void>;
}

interface Running { close(): Promise<void> }

async function runS3rver(directory: string, port: number, bucket: string): Promise<{ port: number; stop: Running['close'] }> {
  const server = new S3rver({ address: '127.0.0.1', port, silent: true, directory, configureBuckets: [{ name: bucket }] });
  const address = (await server.run()) as AddressInfo;
  return {
    port: address.port,
    stop: () => new Promise<void>((resolve) => {
      // LanceDB keeps connections alive: cut them, or close would wait for them.
      server.httpServer.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}

function preconditionFailed(response: ServerResponse): void {
  response.writeHead(412, { 'content-type': 'application/xml' });
  response.end('<?xml version="1.0" encoding="UTF-8"?><Error><Code>PreconditionFailed</Code><Message>At least one of the pre-conditions you specified did not hold</Message><Condition>If-None-Match</Condition></Error>');
}

export async function startS3rver(bucket: string): Promise<S3rverStore> {
  const directory = mkdtempSync(join(tmpdir(), 'quarry-s3rver-'));
  let upstream = await runS3rver(directory, 0, bucket);
  const port = upstream.port;
  let running = true;
  const agent = new Agent({ keepAlive: true, maxSockets: 64 });
  /** The write of each key under way, so a check and the write it allows are one step. */
  const writing = new Map<string, Promise<void>>();
  let refused = 0;

  const exists = (path: string) => new Promise<boolean>((resolve, reject) => {
    const head = request({ host: '127.0.0.1', port, method: 'HEAD', path, agent }, (response) => {
      response.resume();
      resolve(response.statusCode === 200);
    });
    head.on('error', reject);
    head.end();
  });

  const forward = (incoming: IncomingMessage, response: ServerResponse) => new Promise<void>((resolve) => {
    const out = request({ host: '127.0.0.1', port, method: incoming.method, path: incoming.url, headers: incoming.headers, agent }, (answer) => {
      response.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(response);
      answer.on('end', resolve);
      answer.on('error', () => (response.destroy(), resolve()));
    });
    // The store is gone: so is the connection (as from a store that stopped), never an answer of the proxy's own.
    out.on('error', () => (incoming.socket.destroy(), resolve()));
    incoming.pipe(out);
  });

  const sockets = new Set<Socket>();
  const requests: S3rverStore['requests'] = [];
  const proxy: Server = createServer((incoming, response) => {
    requests.push({ method: incoming.method ?? '', path: incoming.url ?? '', range: incoming.headers.range ?? null });
    const url = new URL(incoming.url ?? '/', 'http://proxy');
    const conditional = incoming.headers['if-none-match'] === '*'
      && ((incoming.method === 'PUT' && !url.searchParams.has('partNumber')) || (incoming.method === 'POST' && url.searchParams.has('uploadId')));
    if (!conditional) return void forward(incoming, response);
    const key = url.pathname;
    const previous = writing.get(key) ?? Promise.resolve();
    const mine = previous.then(async () => {
      if (!running) return void incoming.socket.destroy();
      if (await exists(key).catch(() => null) === true) {
        refused++;
        incoming.resume();
        return preconditionFailed(response);
      }
      await forward(incoming, response);
    }).catch(() => void incoming.socket.destroy());
    writing.set(key, mine);
    void mine.finally(() => { if (writing.get(key) === mine) writing.delete(key); });
  });
  proxy.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    if (!running) socket.destroy();
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));

  const down = async () => {
    if (!running) return;
    running = false;
    for (const socket of sockets) socket.destroy();
    await upstream.stop();
  };
  const up = async () => {
    if (running) return;
    upstream = await runS3rver(directory, port, bucket);
    running = true;
  };
  return {
    directUrl: `http://127.0.0.1:${port}`,
    url: `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`,
    refused: () => refused,
    requests,
    down,
    up,
    async close() {
      await down();
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => proxy.close(resolve));
      agent.destroy();
      rmSync(directory, { recursive: true, force: true });
    },
  };
}
