/**
 * A small S3-compatible store on loopback, in memory, for tests of the index on object storage: the
 * requests LanceDB makes (ListObjectsV2, GET with ranges, HEAD, PUT, copy, DELETE, multi-object delete, multipart
 * uploads), path-style. `conditionalWrites: false` makes it ignore `If-None-Match` on PUT as some S3-compatible
 * servers do (s3rver); `down()` and `up()` make it refuse connections and take them again. Signatures are not checked:
 * what a test needs of them is the requests' own `authorization` headers, kept in `requests`.
 */
import { createHash } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

interface StoredObject {
  body: Buffer;
  etag: string;
  modified: Date;
}

export interface S3Store {
  url: string;
  objects: Map<string, StoredObject>;
  requests: Array<{ method: string; path: string; authorization: string }>;
  /** Stops answering (every connection is refused) until `up()`. */
  down(): Promise<void>;
  up(): Promise<void>;
  close(): Promise<void>;
}

const xml = (body: string) => `<?xml version="1.0" encoding="UTF-8"?>${body}`;
const escape = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
const etagOf = (body: Buffer) => `"${createHash('md5').update(body).digest('hex')}"`;

function readBody(request: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => resolve(Buffer.concat(chunks)));
    request.on('error', reject);
  });
}

function error(response: ServerResponse, status: number, code: string): void {
  response.writeHead(status, { 'content-type': 'application/xml' });
  response.end(xml(`<Error><Code>${code}</Code><Message>${code}</Message></Error>`));
}

export async function startS3Store(options: { conditionalWrites: boolean; port?: number }): Promise<S3Store> {
  const objects = new Map<string, StoredObject>();
  const uploads = new Map<string, Map<number, Buffer>>();
  const requests: S3Store['requests'] = [];
  let uploadIds = 0;

  async function handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const url = new URL(request.url ?? '/', 'http://store');
    const [, bucket = '', ...rest] = url.pathname.split('/');
    const key = decodeURIComponent(rest.join('/'));
    const full = `${decodeURIComponent(bucket)}/${key}`;
    const method = request.method ?? 'GET';
    requests.push({ method, path: `${url.pathname}${url.search}`, authorization: String(request.headers.authorization ?? '') });
    const body = await readBody(request);
    const exists = objects.has(full);

    if (method === 'GET' && key === '' && url.searchParams.get('list-type') === '2') {
      const prefix = url.searchParams.get('prefix') ?? '';
      const delimiter = url.searchParams.get('delimiter');
      const after = url.searchParams.get('start-after') ?? '';
      const contents: string[] = [];
      const prefixes = new Set<string>();
      for (const [name, object] of [...objects].sort(([a], [b]) => a.localeCompare(b))) {
        if (!name.startsWith(`${bucket}/`)) continue;
        const objectKey = name.slice(bucket.length + 1);
        if (!objectKey.startsWith(prefix) || objectKey <= after) continue;
        const cut = delimiter ? objectKey.indexOf(delimiter, prefix.length) : -1;
        if (cut >= 0) prefixes.add(objectKey.slice(0, cut + 1));
        else contents.push(`<Contents><Key>${escape(objectKey)}</Key><LastModified>${object.modified.toISOString()}</LastModified><ETag>${escape(object.etag)}</ETag><Size>${object.body.length}</Size><StorageClass>STANDARD</StorageClass></Contents>`);
      }
      response.writeHead(200, { 'content-type': 'application/xml' });
      response.end(xml(`<ListBucketResult><Name>${escape(bucket)}</Name><Prefix>${escape(prefix)}</Prefix><KeyCount>${contents.length + prefixes.size}</KeyCount><MaxKeys>1000</MaxKeys><IsTruncated>false</IsTruncated>${contents.join('')}${[...prefixes].map((p) => `<CommonPrefixes><Prefix>${escape(p)}</Prefix></CommonPrefixes>`).join('')}</ListBucketResult>`));
      return;
    }
    if (method === 'POST' && key === '' && url.searchParams.has('delete')) {
      const keys = [...body.toString().matchAll(/<Key>([^<]*)<\/Key>/g)].map((m) => m[1]!.replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&'));
      for (const name of keys) objects.delete(`${bucket}/${name}`);
      response.writeHead(200, { 'content-type': 'application/xml' });
      response.end(xml(`<DeleteResult>${keys.map((k) => `<Deleted><Key>${escape(k)}</Key></Deleted>`).join('')}</DeleteResult>`));
      return;
    }
    if (method === 'POST' && url.searchParams.has('uploads')) {
      const id = `upload-${++uploadIds}`;
      uploads.set(id, new Map());
      response.writeHead(200, { 'content-type': 'application/xml' });
      response.end(xml(`<InitiateMultipartUploadResult><Bucket>${escape(bucket)}</Bucket><Key>${escape(key)}</Key><UploadId>${id}</UploadId></InitiateMultipartUploadResult>`));
      return;
    }
    if (method === 'PUT' && url.searchParams.has('partNumber')) {
      const parts = uploads.get(url.searchParams.get('uploadId') ?? '');
      if (!parts) return error(response, 404, 'NoSuchUpload');
      parts.set(Number(url.searchParams.get('partNumber')), body);
      response.writeHead(200, { etag: etagOf(body) });
      response.end();
      return;
    }
    const conditional = options.conditionalWrites && request.headers['if-none-match'] === '*' && exists;
    if (method === 'POST' && url.searchParams.has('uploadId')) {
      const id = url.searchParams.get('uploadId')!;
      const parts = uploads.get(id);
      if (!parts) return error(response, 404, 'NoSuchUpload');
      if (conditional) return error(response, 412, 'PreconditionFailed');
      const joined = Buffer.concat([...parts].sort(([a], [b]) => a - b).map(([, part]) => part));
      uploads.delete(id);
      objects.set(full, { body: joined, etag: etagOf(joined), modified: new Date() });
      response.writeHead(200, { 'content-type': 'application/xml' });
      response.end(xml(`<CompleteMultipartUploadResult><Bucket>${escape(bucket)}</Bucket><Key>${escape(key)}</Key><ETag>${escape(etagOf(joined))}</ETag></CompleteMultipartUploadResult>`));
      return;
    }
    if (method === 'DELETE' && url.searchParams.has('uploadId')) {
      uploads.delete(url.searchParams.get('uploadId')!);
      response.writeHead(204);
      response.end();
      return;
    }
    if (method === 'PUT') {
      if (conditional) return error(response, 412, 'PreconditionFailed');
      const source = request.headers['x-amz-copy-source'];
      if (typeof source === 'string') {
        const copied = objects.get(decodeURIComponent(source.replace(/^\//, '')));
        if (!copied) return error(response, 404, 'NoSuchKey');
        objects.set(full, { ...copied, modified: new Date() });
        response.writeHead(200, { 'content-type': 'application/xml' });
        response.end(xml(`<CopyObjectResult><ETag>${escape(copied.etag)}</ETag><LastModified>${new Date().toISOString()}</LastModified></CopyObjectResult>`));
        return;
      }
      objects.set(full, { body, etag: etagOf(body), modified: new Date() });
      response.writeHead(200, { etag: etagOf(body) });
      response.end();
      return;
    }
    if (method === 'DELETE') {
      objects.delete(full);
      response.writeHead(204);
      response.end();
      return;
    }
    const object = objects.get(full);
    if (!object) return error(response, 404, 'NoSuchKey');
    const headers = { etag: object.etag, 'last-modified': object.modified.toUTCString(), 'accept-ranges': 'bytes', 'content-type': 'application/octet-stream' };
    if (method === 'HEAD') {
      response.writeHead(200, { ...headers, 'content-length': object.body.length });
      response.end();
      return;
    }
    const range = /^bytes=(\d*)-(\d*)$/.exec(String(request.headers.range ?? ''));
    if (!range) {
      response.writeHead(200, { ...headers, 'content-length': object.body.length });
      response.end(object.body);
      return;
    }
    const size = object.body.length;
    let start = range[1] === '' ? size - Number(range[2]) : Number(range[1]);
    let end = range[1] === '' ? size - 1 : range[2] === '' ? size - 1 : Math.min(Number(range[2]), size - 1);
    start = Math.max(0, start);
    end = Math.max(start - 1, end);
    if (start >= size && size > 0) return error(response, 416, 'InvalidRange');
    const slice = object.body.subarray(start, end + 1);
    response.writeHead(206, { ...headers, 'content-length': slice.length, 'content-range': `bytes ${start}-${end}/${size}` });
    response.end(slice);
  }

  const sockets = new Set<Socket>();
  let server: Server;
  let port = options.port ?? 0;
  let listening = false;
  const listen = async () => {
    if (listening) return;
    listening = true;
    server = createServer((request, response) => void handle(request, response).catch(() => error(response, 500, 'InternalError')));
    server.on('connection', (socket) => {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
    });
    await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  };
  const stop = () => new Promise<void>((resolve) => {
    if (!listening) return resolve();
    listening = false;
    for (const socket of sockets) socket.destroy();
    server.close(() => resolve());
  });
  await listen();
  return {
    url: `http://127.0.0.1:${port}`,
    objects,
    requests,
    down: stop,
    up: listen,
    close: stop,
  };
}
