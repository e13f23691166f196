/**
 * Whether the index's S3-compatible store honours conditional writes. LanceDB commits a new version
 * of a table by writing its manifest only if no other writer made that version first: on S3 that is a PUT with
 * `If-None-Match: *`, which the store must refuse (412) when the object exists. A store that ignores the header
 * takes both writers' manifests, and one writer's rows are lost without an error. This check writes one small object
 * twice under the index's prefix, the second time conditionally, and deletes it.
 *
 * Only s3:// is checked: Google Cloud Storage and Azure Blob Storage have their own preconditions, which LanceDB
 * uses, and s3+ddb:// commits through DynamoDB instead. The request is signed (AWS Signature Version 4) with the
 * credentials LanceDB is given; the AWS credential chain (an instance role) cannot be read here, so without keys the
 * check says it could not run.
 */
import { createHash, createHmac, randomBytes } from 'node:crypto';

export interface S3Target {
  /** s3://bucket/prefix */
  uri: string;
  /** LanceDB's storage options (aws_endpoint, aws_region, aws_access_key_id, ...), then the AWS_* environment. */
  storageOptions: Record<string, string>;
  env?: Record<string, string | undefined>;
}

export type ConditionalWriteCheck =
  | { outcome: 'honoured' }
  | { outcome: 'ignored' }
  | { outcome: 'unchecked'; reason: string };

const sha256 = (data: string | Buffer) => createHash('sha256').update(data).digest('hex');
const hmac = (key: string | Buffer, data: string) => createHmac('sha256', key).update(data).digest();
/** RFC 3986 encoding of one path segment, as SigV4 wants it. */
const encodeSegment = (segment: string) => encodeURIComponent(segment).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);

interface Signer {
  endpoint: URL | null;
  region: string;
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken?: string;
}

function signerOf(target: S3Target): Signer | string {
  const options = target.storageOptions;
  const env = target.env ?? process.env;
  const accessKeyId = options.aws_access_key_id ?? env.AWS_ACCESS_KEY_ID;
  const secretAccessKey = options.aws_secret_access_key ?? env.AWS_SECRET_ACCESS_KEY;
  const region = options.aws_region ?? env.AWS_REGION ?? env.AWS_DEFAULT_REGION;
  const endpoint = options.aws_endpoint ?? env.AWS_ENDPOINT ?? env.AWS_ENDPOINT_URL;
  if (!accessKeyId || !secretAccessKey) return 'no access key is configured (credentials from the AWS credential chain cannot be used for this check)';
  if (!region) return 'no region is configured';
  const sessionToken = options.aws_session_token ?? (options.aws_access_key_id ? undefined : env.AWS_SESSION_TOKEN);
  return { endpoint: endpoint ? new URL(endpoint) : null, region, accessKeyId, secretAccessKey, ...(sessionToken ? { sessionToken } : {}) };
}

/** The object's URL: path style on a configured endpoint (as LanceDB addresses it), virtual-hosted on AWS. */
function objectUrl(signer: Signer, bucket: string, key: string): URL {
  const path = key.split('/').map(encodeSegment).join('/');
  if (signer.endpoint) {
    const base = signer.endpoint.href.replace(/\/$/, '');
    return new URL(`${base}/${encodeSegment(bucket)}/${path}`);
  }
  return new URL(`https://${bucket}.s3.${signer.region}.amazonaws.com/${path}`);
}

/** One S3 request signed with AWS Signature Version 4. */
async function send(signer: Signer, method: 'PUT' | 'DELETE', url: URL, body: Buffer, extra: Record<string, string>, timeoutMs: number): Promise<Response> {
  const amzDate = new Date().toISOString().replace(/[-:]/g, '').replace(/\.\d{3}/, '');
  const day = amzDate.slice(0, 8);
  const payloadHash = sha256(body);
  const headers: Record<string, string> = {
    host: url.host,
    'x-amz-content-sha256': payloadHash,
    'x-amz-date': amzDate,
    ...(signer.sessionToken ? { 'x-amz-security-token': signer.sessionToken } : {}),
    ...extra,
  };
  const names = Object.keys(headers).map((name) => name.toLowerCase()).sort();
  const lower = Object.fromEntries(Object.entries(headers).map(([name, value]) => [name.toLowerCase(), value.trim()]));
  const canonical = [method, url.pathname, '', ...names.map((name) => `${name}:${lower[name]}`), '', names.join(';'), payloadHash].join('\n');
  const scope = `${day}/${signer.region}/s3/aws4_request`;
  const toSign = ['AWS4-HMAC-SHA256', amzDate, scope, sha256(canonical)].join('\n');
  const key = hmac(hmac(hmac(hmac(`AWS4${signer.secretAccessKey}`, day), signer.region), 's3'), 'aws4_request');
  const signature = createHmac('sha256', key).update(toSign).digest('hex');
  const { host: _host, ...sent } = headers;
  return fetch(url, {
    method,
    body: method === 'PUT' ? new Uint8Array(body) : undefined,
    headers: { ...sent, authorization: `AWS4-HMAC-SHA256 Credential=${signer.accessKeyId}/${scope}, SignedHeaders=${names.join(';')}, Signature=${signature}` },
    signal: AbortSignal.timeout(timeoutMs),
  });
}

/**
 * Writes `<prefix>/_quarry_write_check/<random>` once, then again with `If-None-Match: *`: a store that honours
 * conditional writes refuses the second (412, or 409 for a concurrent one), and one that ignores them takes it.
 */
export async function checkConditionalWrites(target: S3Target, timeoutMs = 10_000): Promise<ConditionalWriteCheck> {
  const match = /^s3:\/\/([^/]+)\/?(.*)$/i.exec(target.uri);
  if (!match) return { outcome: 'unchecked', reason: 'not an s3:// URI' };
  const signer = signerOf(target);
  if (typeof signer === 'string') return { outcome: 'unchecked', reason: signer };
  const prefix = match[2]!.replace(/\/+$/, '');
  const key = `${prefix ? `${prefix}/` : ''}_quarry_write_check/${randomBytes(8).toString('hex')}`;
  const url = objectUrl(signer, match[1]!, key);
  const body = Buffer.from('Quarry checks that this store refuses a second write of an object it already has.\n');
  const first = await send(signer, 'PUT', url, body, {}, timeoutMs);
  if (!first.ok) throw new Error(`writing a test object failed: HTTP ${first.status} ${(await first.text()).slice(0, 200)}`);
  try {
    const second = await send(signer, 'PUT', url, body, { 'if-none-match': '*' }, timeoutMs);
    await second.arrayBuffer();
    if (second.status === 412 || second.status === 409) return { outcome: 'honoured' };
    if (second.ok) return { outcome: 'ignored' };
    throw new Error(`the conditional write answered HTTP ${second.status}`);
  } finally {
    await send(signer, 'DELETE', url, Buffer.alloc(0), {}, timeoutMs).then((res) => res.arrayBuffer()).catch(() => undefined);
  }
}
