/**
 * uploadSqliteFile from a plain HTTP client, for tests of its limits: the body goes in 1 MiB writes, with its length
 * declared or (`chunked`) not. The server may refuse an upload before the whole body is sent and close the
 * connection; its answer is what counts.
 */
import { request } from 'node:http';

export function sendUpload(baseUrl: string, token: string, name: string, bytes: Buffer, chunked: boolean): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const length: Record<string, string> = chunked ? { 'transfer-encoding': 'chunked' } : { 'content-length': String(bytes.length) };
    let answered = false;
    const req = request(new URL(`/api/v1/sqlite-files/${encodeURIComponent(name)}`, baseUrl), {
      method: 'PUT', agent: false,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/octet-stream', ...length },
    }, (res) => {
      answered = true;
      let body = '';
      res.on('data', (chunk) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', (error) => (answered ? undefined : reject(error)));
    let sent = 0;
    const pump = () => {
      while (sent < bytes.length) {
        const chunk = bytes.subarray(sent, sent + 1024 * 1024);
        sent += chunk.length;
        if (!req.write(chunk)) return void req.once('drain', pump);
      }
      req.end();
    };
    pump();
  });
}
