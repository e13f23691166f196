import { Agent, request } from 'node:http';

export interface PostAnswer {
  status: number;
  body: any;
  headers: Record<string, string | string[] | undefined>;
}

/** Keep-alive connections to one server: `sockets` of them at most, reused request after request. */
export function keepAliveAgent(sockets: number): Agent {
  return new Agent({ keepAlive: true, maxSockets: sockets });
}

/**
 * A JSON POST through node:http on `agent`'s connections. The benchmarks' client shares the machine's cores with the
 * server it measures; fetch cost it about 1 ms of CPU per search on 2 cores, node:http about 0.4 (docs/benchmarks.md).
 */
export function postJson(agent: Agent, url: string, payload: unknown, headers: Record<string, string>): Promise<PostAnswer> {
  const body = JSON.stringify(payload);
  return new Promise((resolve, reject) => {
    const req = request(url, { method: 'POST', agent, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), ...headers } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => {
        try {
          resolve({ status: res.statusCode!, body: JSON.parse(Buffer.concat(chunks).toString('utf8')), headers: res.headers });
        } catch (error) {
          reject(error);
        }
      });
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}
