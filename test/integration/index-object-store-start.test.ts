import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { startS3Store } from '../support/s3-store.js';
import { S3RVER_CREDENTIALS, startS3rver } from '../support/s3rver.js';

const root = fileURLToPath(new URL('../../', import.meta.url));

/** An S3 endpoint on loopback that refuses every request (a bucket these credentials may not read) and notes what it got. */
async function refusingStore(): Promise<{ server: Server; url: string; authorizations: string[] }> {
  const authorizations: string[] = [];
  const server = createServer((request, response) => {
    authorizations.push(String(request.headers.authorization ?? ''));
    response.writeHead(403, { 'content-type': 'application/xml' });
    response.end('<?xml version="1.0"?><Error><Code>AccessDenied</Code><Message>Access Denied</Message></Error>');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, authorizations };
}

/** Runs `npm start`'s entry point until it exits, or until it says it listens (then it is stopped). */
function start(env: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string; listened: boolean }> {
  // Only Quarry's settings reach LanceDB: none of the AWS tools' own variables.
  const base = Object.fromEntries(Object.entries(process.env).filter(([name]) => !/^(AWS_|INDEX_)/.test(name)));
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], { cwd: root, env: { ...base, ...env } });
  let stdout = '';
  let stderr = '';
  let listened = false;
  child.stdout.on('data', (chunk: Buffer) => {
    stdout += chunk.toString();
    if (!listened && stdout.includes('listening')) {
      listened = true;
      child.kill('SIGKILL');
    }
  });
  child.stderr.on('data', (chunk: Buffer) => void (stderr += chunk.toString()));
  return new Promise((resolve) => child.on('exit', (code) => resolve({ code, stdout, stderr, listened })));
}

let cleanup: Array<() => void> = [];
afterEach(() => {
  cleanup.forEach((step) => step());
  cleanup = [];
});

describe('starting with an object store index', () => {
  it('when the bucket refuses the configured credentials, then the process exits naming the store and its answer, before listening, and repeats no secret; the settings reached the store', async () => {
    const store = await refusingStore();
    const dataDir = mkdtempSync(join(tmpdir(), 'quarry-index-store-'));
    cleanup.push(() => store.server.close(), () => rmSync(dataDir, { recursive: true, force: true }));
    const run = await start({
      DATA_DIR: dataDir, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info',
      INDEX_URI: 's3://quarry-index/prod', INDEX_S3_ENDPOINT: store.url, INDEX_S3_REGION: 'eu-test-1', INDEX_ALLOW_HTTP: 'true',
      INDEX_S3_ACCESS_KEY_ID: 'AKIDQUARRYTEST', INDEX_S3_SECRET_ACCESS_KEY: 'hunter2-object-store-secret', INDEX_S3_SESSION_TOKEN: 'hunter3-session',
    });
    expect(run.listened, run.stdout).toBe(false);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain("Quarry failed to start: the search index's object store (INDEX_URI s3://quarry-index/prod) cannot be reached");
    expect(run.stderr).toContain('403 Forbidden');
    expect(run.stdout + run.stderr).not.toMatch(/hunter2|hunter3/);
    // Signed with the configured key id and region, sent to the configured endpoint.
    expect(store.authorizations.length).toBeGreaterThan(0);
    expect(store.authorizations[0]).toMatch(/^AWS4-HMAC-SHA256 Credential=AKIDQUARRYTEST\/\d{8}\/eu-test-1\/s3\/aws4_request/);
  }, 90_000);

  it('when nothing answers at the endpoint, then the process exits saying so, before listening', async () => {
    const store = await refusingStore();
    const closedUrl = store.url;
    await new Promise<void>((resolve) => store.server.close(() => resolve()));
    const dataDir = mkdtempSync(join(tmpdir(), 'quarry-index-store-'));
    cleanup.push(() => rmSync(dataDir, { recursive: true, force: true }));
    const run = await start({
      DATA_DIR: dataDir, PORT: '0', HOST: '127.0.0.1',
      INDEX_URI: 's3://quarry-index/prod', INDEX_S3_ENDPOINT: closedUrl, INDEX_S3_REGION: 'us-east-1', INDEX_ALLOW_HTTP: 'true',
      INDEX_S3_ACCESS_KEY_ID: 'AKIDQUARRYTEST', INDEX_S3_SECRET_ACCESS_KEY: 'hunter2-object-store-secret',
    });
    expect(run.listened, run.stdout).toBe(false);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain("the search index's object store (INDEX_URI s3://quarry-index/prod) cannot be reached");
    expect(run.stderr).not.toContain('hunter2');
  }, 90_000);

  it('when the store ignores conditional writes (If-None-Match on PUT), then the process exits saying writers would lose commits, before listening', async () => {
    const store = await startS3Store({ conditionalWrites: false });
    const dataDir = mkdtempSync(join(tmpdir(), 'quarry-index-store-'));
    cleanup.push(() => void store.close(), () => rmSync(dataDir, { recursive: true, force: true }));
    const run = await start({
      DATA_DIR: dataDir, PORT: '0', HOST: '127.0.0.1',
      INDEX_URI: 's3://quarry-index/prod', INDEX_S3_ENDPOINT: store.url, INDEX_S3_REGION: 'us-east-1', INDEX_ALLOW_HTTP: 'true',
      INDEX_S3_ACCESS_KEY_ID: 'AKIDQUARRYTEST', INDEX_S3_SECRET_ACCESS_KEY: 'hunter2-object-store-secret',
    });
    expect(run.listened, run.stdout).toBe(false);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain("the search index's object store (INDEX_URI s3://quarry-index/prod) ignores conditional writes (If-None-Match on PUT)");
    expect(run.stderr).not.toContain('hunter2');
    // The check wrote its object under the index's prefix, signed with the configured key, and removed it.
    const check = store.requests.filter((request) => request.path.startsWith('/quarry-index/prod/_quarry_write_check/'));
    expect(check.map((request) => request.method)).toEqual(['PUT', 'PUT', 'DELETE']);
    expect(check[0]!.authorization).toMatch(/^AWS4-HMAC-SHA256 Credential=AKIDQUARRYTEST\/\d{8}\/us-east-1\/s3\/aws4_request/);
    expect([...store.objects.keys()].filter((key) => key.includes('_quarry_write_check'))).toEqual([]);
  }, 90_000);

  it('when the store honours conditional writes, then the process starts, and leaves no check object behind', async () => {
    const store = await startS3Store({ conditionalWrites: true });
    const dataDir = mkdtempSync(join(tmpdir(), 'quarry-index-store-'));
    cleanup.push(() => void store.close(), () => rmSync(dataDir, { recursive: true, force: true }));
    const run = await start({
      DATA_DIR: dataDir, PORT: '0', HOST: '127.0.0.1',
      INDEX_URI: 's3://quarry-index/prod', INDEX_S3_ENDPOINT: store.url, INDEX_S3_REGION: 'us-east-1', INDEX_ALLOW_HTTP: 'true',
      INDEX_S3_ACCESS_KEY_ID: 'AKIDQUARRYTEST', INDEX_S3_SECRET_ACCESS_KEY: 'hunter2-object-store-secret',
    });
    expect(run.listened, run.stderr).toBe(true);
    expect(store.requests.filter((request) => request.path.startsWith('/quarry-index/prod/_quarry_write_check/')).map((r) => r.method)).toEqual(['PUT', 'PUT', 'DELETE']);
    expect([...store.objects.keys()].filter((key) => key.includes('_quarry_write_check'))).toEqual([]);
  }, 90_000);

  it('when the store is s3rver itself, then the check refuses it (it ignores If-None-Match on PUT); behind the proxy that honours conditional writes, the same s3rver is taken', async () => {
    const s3 = await startS3rver('quarry-index');
    const dataDir = mkdtempSync(join(tmpdir(), 'quarry-index-store-'));
    cleanup.push(() => void s3.close(), () => rmSync(dataDir, { recursive: true, force: true }));
    const settings = (endpoint: string) => ({
      DATA_DIR: dataDir, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info',
      INDEX_URI: 's3://quarry-index/prod', INDEX_S3_ENDPOINT: endpoint, INDEX_S3_REGION: 'us-east-1', INDEX_ALLOW_HTTP: 'true',
      INDEX_S3_ACCESS_KEY_ID: S3RVER_CREDENTIALS.accessKeyId, INDEX_S3_SECRET_ACCESS_KEY: S3RVER_CREDENTIALS.secretAccessKey,
    });
    const raw = await start(settings(s3.directUrl));
    expect(raw.listened, raw.stdout).toBe(false);
    expect(raw.code).toBe(1);
    expect(raw.stderr).toContain("the search index's object store (INDEX_URI s3://quarry-index/prod) ignores conditional writes (If-None-Match on PUT)");
    const proxied = await start(settings(s3.url));
    expect(proxied.listened, proxied.stderr).toBe(true);
    expect(s3.refused()).toBe(1);
  }, 120_000);
});
