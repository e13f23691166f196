/**
 * Which hosts a database connection may reach (createDatabase: `DB_HOST_ALLOWLIST`, `DB_ALLOW_PRIVATE_HOSTS`).
 * Quarry connects on behalf of users, so a host name is a request to open a socket from inside our network: without
 * a policy it is SSRF. The host is resolved once here and the caller connects to the returned address, so a DNS
 * answer that changes between check and connect (rebinding) cannot redirect the connection.
 */
import { lookup as dnsLookup } from 'node:dns/promises';
import { BlockList, isIP } from 'node:net';
import { ConnectorError } from './errors.js';

export interface HostPolicy {
  /** Hostnames (`db.example.com`, `*.internal.example.com`), addresses, CIDRs, each optionally `:port` (not CIDRs). */
  allowlist: string[];
  /** Private ranges (10/8, 172.16/12, 192.168/16, 100.64/10, fc00::/7) without an allow-list entry. */
  allowPrivate: boolean;
  /** Loopback (127/8, ::1) without an allow-list entry. */
  allowLoopback: boolean;
  /** When true, public hosts must be allow-listed too. */
  allowlistOnly?: boolean;
}

export interface ResolvedHost {
  /** The host as the user gave it, normalised (lower case, no brackets, no trailing dot). */
  hostname: string;
  /** The checked address to open the socket to. */
  address: string;
  family: 4 | 6;
  port: number;
  /** Name for TLS SNI and certificate checks; null when the user gave an IP address. */
  servername: string | null;
}

export type AddressClass =
  | 'public' | 'private' | 'loopback'
  | 'link-local' | 'metadata' | 'unspecified' | 'multicast' | 'broadcast' | 'reserved';

export type LookupAll = (hostname: string) => Promise<Array<{ address: string; family: number }>>;

const ALWAYS_REFUSED: ReadonlySet<AddressClass> = new Set([
  'link-local', 'metadata', 'unspecified', 'multicast', 'broadcast', 'reserved',
]);

/** Names of cloud metadata services, refused before any DNS query. */
const METADATA_HOSTNAMES = new Set(['metadata.google.internal', 'metadata.goog', 'metadata']);

function blockList(entries: Array<[string, number, 'ipv4' | 'ipv6']>): BlockList {
  const list = new BlockList();
  for (const [network, prefix, type] of entries) list.addSubnet(network, prefix, type);
  return list;
}

// Order matters: the first class whose list matches wins (metadata before link-local and private).
const RANGES: Array<[AddressClass, BlockList]> = [
  ['metadata', blockList([['169.254.169.254', 32, 'ipv4'], ['100.100.100.200', 32, 'ipv4'], ['fd00:ec2::254', 128, 'ipv6']])],
  ['unspecified', blockList([['0.0.0.0', 8, 'ipv4'], ['::', 128, 'ipv6']])],
  ['loopback', blockList([['127.0.0.0', 8, 'ipv4'], ['::1', 128, 'ipv6']])],
  ['link-local', blockList([['169.254.0.0', 16, 'ipv4'], ['fe80::', 10, 'ipv6']])],
  ['multicast', blockList([['224.0.0.0', 4, 'ipv4'], ['ff00::', 8, 'ipv6']])],
  ['broadcast', blockList([['255.255.255.255', 32, 'ipv4']])],
  ['reserved', blockList([['240.0.0.0', 4, 'ipv4']])],
  ['private', blockList([
    ['10.0.0.0', 8, 'ipv4'], ['172.16.0.0', 12, 'ipv4'], ['192.168.0.0', 16, 'ipv4'], ['100.64.0.0', 10, 'ipv4'],
    ['fc00::', 7, 'ipv6'], ['fec0::', 10, 'ipv6'],
  ])],
];

/** The 16 bytes of an IPv6 address (already validated by net.isIP). */
function ipv6Bytes(address: string): number[] {
  let text = address;
  const tail: number[] = [];
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (dotted?.[1]) {
    tail.push(...dotted[1].split('.').map(Number));
    text = text.slice(0, -dotted[1].length) + '0:0';
  }
  const [head = '', rest] = text.split('::');
  const groups = (part: string) => (part ? part.split(':').map((g) => parseInt(g, 16)) : []);
  const left = groups(head);
  const right = rest === undefined ? [] : groups(rest);
  const words = [...left, ...new Array(8 - left.length - right.length).fill(0), ...right];
  const bytes = words.flatMap((w) => [w >> 8, w & 0xff]);
  if (tail.length === 4) bytes.splice(12, 4, ...tail);
  return bytes;
}

/** IPv4 carried inside an IPv6 address (mapped, IPv4-compatible, NAT64, 6to4): it reaches that IPv4 host. */
function embeddedIPv4(address: string): string | null {
  const b = ipv6Bytes(address);
  const zero = (from: number, to: number) => b.slice(from, to).every((x) => x === 0);
  let v4: number[] | null = null;
  if (zero(0, 10) && b[10] === 0xff && b[11] === 0xff) v4 = b.slice(12, 16); // ::ffff:a.b.c.d
  else if (zero(0, 12) && !(zero(12, 15) && (b[15] ?? 0) <= 1)) v4 = b.slice(12, 16); // ::a.b.c.d, not :: or ::1
  else if (b[0] === 0x00 && b[1] === 0x64 && b[2] === 0xff && b[3] === 0x9b && zero(4, 12)) v4 = b.slice(12, 16); // 64:ff9b::/96
  else if (b[0] === 0x20 && b[1] === 0x02) v4 = b.slice(2, 6); // 2002::/16
  return v4 ? v4.join('.') : null;
}

function classifyPlain(address: string, type: 'ipv4' | 'ipv6'): AddressClass {
  for (const [cls, list] of RANGES) if (list.check(address, type)) return cls;
  return 'public';
}

const SEVERITY: AddressClass[] = [
  'metadata', 'link-local', 'unspecified', 'multicast', 'broadcast', 'reserved', 'loopback', 'private', 'public',
];

/** The class of an IP address; an IPv6 address that embeds an IPv4 one gets the stricter of the two classes. */
export function classifyAddress(address: string): AddressClass {
  const plain = stripZone(address);
  const family = isIP(plain);
  if (family === 4) return classifyPlain(plain, 'ipv4');
  if (family !== 6) throw new Error(`Not an IP address: ${address}`);
  const own = classifyPlain(plain, 'ipv6');
  const v4 = embeddedIPv4(plain);
  if (!v4) return own;
  const inner = classifyPlain(v4, 'ipv4');
  return SEVERITY.indexOf(inner) < SEVERITY.indexOf(own) ? inner : own;
}

function stripZone(address: string): string {
  const zone = address.indexOf('%');
  return zone === -1 ? address : address.slice(0, zone);
}

export function normalizeHost(host: string): string {
  let h = host.trim().toLowerCase();
  if (h.startsWith('[') && h.endsWith(']')) h = h.slice(1, -1);
  if (h.endsWith('.')) h = h.slice(0, -1);
  return h;
}

type AllowRule =
  | { kind: 'host'; host: string; port: number | null }
  | { kind: 'suffix'; suffix: string; port: number | null }
  | { kind: 'net'; list: BlockList; port: number | null };

function parsePort(text: string, entry: string): number {
  const port = Number(text);
  if (!/^\d{1,5}$/.test(text) || port < 1 || port > 65535) throw new Error(`Invalid port in allow-list entry "${entry}"`);
  return port;
}

function netRule(address: string, prefix: number | null, port: number | null): AllowRule {
  const family = isIP(address);
  const type = family === 6 ? 'ipv6' : 'ipv4';
  const list = new BlockList();
  if (prefix === null) list.addAddress(address, type);
  else list.addSubnet(address, prefix, type);
  return { kind: 'net', list, port };
}

function parseAllowRule(raw: string): AllowRule {
  const entry = raw.trim().toLowerCase();
  if (!entry) throw new Error('Empty allow-list entry');
  const cidr = /^([0-9a-f:.]+)\/(\d{1,3})$/.exec(entry);
  if (cidr?.[1] && cidr[2]) {
    const family = isIP(cidr[1]);
    const prefix = Number(cidr[2]);
    if (!family || prefix > (family === 4 ? 32 : 128)) throw new Error(`Invalid CIDR in allow-list: "${raw}"`);
    return netRule(cidr[1], prefix, null);
  }
  const bracketed = /^\[([0-9a-f:.]+)\](?::(\d+))?$/.exec(entry);
  if (bracketed?.[1] && isIP(bracketed[1]) === 6) {
    return netRule(bracketed[1], null, bracketed[2] ? parsePort(bracketed[2], raw) : null);
  }
  if (isIP(entry)) return netRule(entry, null, null);
  const hostPort = /^([^:]+):(\d+)$/.exec(entry);
  const host = normalizeHost(hostPort?.[1] ?? entry);
  const port = hostPort?.[2] ? parsePort(hostPort[2], raw) : null;
  if (isIP(host)) return netRule(host, null, port);
  if (host.startsWith('*.')) return { kind: 'suffix', suffix: host.slice(1), port };
  if (!/^[a-z0-9_]([a-z0-9_.-]*[a-z0-9_])?$/.test(host)) throw new Error(`Invalid allow-list entry "${raw}"`);
  return { kind: 'host', host, port };
}

/** Validates allow-list entries; throws a plain Error naming the first bad one (for configuration at start). */
export function parseAllowlist(entries: string[]): void {
  for (const entry of entries) parseAllowRule(entry);
}

function isAllowListed(rules: AllowRule[], hostname: string, address: string, port: number): boolean {
  const type = isIP(address) === 6 ? 'ipv6' : 'ipv4';
  return rules.some((rule) => {
    if (rule.port !== null && rule.port !== port) return false;
    if (rule.kind === 'host') return rule.host === hostname;
    if (rule.kind === 'suffix') return hostname.endsWith(rule.suffix);
    return rule.list.check(address, type);
  });
}

function refuse(reason: string): ConnectorError {
  return new ConnectorError(
    'HOST_NOT_ALLOWED',
    "Connections to this host are not allowed by the server's connection policy.",
    { reason },
  );
}

const systemLookup: LookupAll = async (hostname) => dnsLookup(hostname, { all: true, verbatim: true });

async function resolveAll(hostname: string, lookup: LookupAll): Promise<string[]> {
  if (isIP(hostname)) return [hostname];
  try {
    const answers = await lookup(hostname);
    if (answers.length === 0) throw Object.assign(new Error('no addresses'), { code: 'ENOTFOUND' });
    return answers.map((a) => a.address);
  } catch (err) {
    throw new ConnectorError('DATABASE_UNREACHABLE', 'The database host name could not be resolved.', {}, { cause: err });
  }
}

/**
 * Resolves `host` and checks every address against the policy; returns the first address to connect to.
 * Throws HOST_NOT_ALLOWED when any address is refused (a name that mixes public and internal answers is refused
 * whole), DATABASE_UNREACHABLE when the name does not resolve.
 */
export async function resolveAllowedHost(
  host: string,
  port: number,
  policy: HostPolicy,
  lookup: LookupAll = systemLookup,
): Promise<ResolvedHost> {
  const hostname = normalizeHost(host);
  if (!hostname) throw refuse('invalid');
  if (!Number.isInteger(port) || port < 1 || port > 65535) throw refuse('invalid_port');
  if (METADATA_HOSTNAMES.has(hostname)) throw refuse('metadata');
  const rules = policy.allowlist.map(parseAllowRule);

  const addresses = (await resolveAll(hostname, lookup)).map(stripZone);
  for (const address of addresses) {
    const cls = classifyAddress(address);
    if (ALWAYS_REFUSED.has(cls)) throw refuse(cls);
    const listed = isAllowListed(rules, hostname, address, port);
    if (listed) continue;
    if (cls === 'private' && !policy.allowPrivate) throw refuse(cls);
    if (cls === 'loopback' && !policy.allowLoopback) throw refuse(cls);
    if (cls === 'public' && policy.allowlistOnly) throw refuse('not_allow_listed');
  }
  const address = addresses[0] as string;
  return {
    hostname,
    address,
    family: isIP(address) === 6 ? 6 : 4,
    port,
    servername: isIP(hostname) ? null : hostname,
  };
}
