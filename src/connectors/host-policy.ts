/**
 * Which hosts a database connection may reach (createDatabase: `DB_HOST_ALLOWLIST`, `DB_ALLOW_PRIVATE_HOSTS`).
 * Quarry connects on behalf of users, so a host name is a request to open a socket from inside our network: without
 * a policy it is SSRF. The host is resolved once here and the caller connects to the returned address, so a DNS
 * answer that changes between check and connect (rebinding) cannot redirect the connection.
 */
import { lookup as dnsLookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';
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

type Address = ipaddr.IPv4 | ipaddr.IPv6;

const ALWAYS_REFUSED: ReadonlySet<AddressClass> = new Set([
  'link-local', 'metadata', 'unspecified', 'multicast', 'broadcast', 'reserved',
]);

/** Names of cloud metadata services, refused before any DNS query. */
const METADATA_HOSTNAMES = new Set(['metadata.google.internal', 'metadata.goog', 'metadata']);

/** Cloud metadata services (AWS, GCP, Azure; Alibaba; AWS over IPv6): refused whatever the policy or allow-list. */
const METADATA = ['169.254.169.254', '100.100.100.200', 'fd00:ec2::254'].map((address) => ipaddr.parse(address));

/**
 * Our class of each range ipaddr.js names (`range()`, its table of IANA special-purpose ranges). Every named range
 * that is not a way to reach an ordinary host (documentation and benchmarking nets, 192.0.0.0/24, 6to4 relays,
 * AS112, AMT, Teredo, ORCHID, discard-only 100::/64, local-use NAT64 64:ff9b:1::/48, ...) is reserved; only
 * `unicast`, which is what no special range matched, is public. Ranges that carry an IPv4 address are classed by
 * that address (embeddedIPv4), before this table is read.
 */
const CLASS_OF_RANGE: Record<string, AddressClass> = {
  unicast: 'public',
  private: 'private',
  carrierGradeNat: 'private',
  uniqueLocal: 'private',
  deprecatedSiteLocal: 'private',
  loopback: 'loopback',
  linkLocal: 'link-local',
  unspecified: 'unspecified',
  multicast: 'multicast',
  broadcast: 'broadcast',
};

/** NAT64's well-known prefix (RFC 6052): the IPv4 host is the last 32 bits. Its local-use /48 has no fixed place for it. */
const NAT64_WELL_KNOWN = ipaddr.parseCIDR('64:ff9b::/96');

/**
 * The IPv4 host an IPv6 address reaches: IPv4-mapped and -translated (::ffff:a.b.c.d, ::ffff:0:a.b.c.d), NAT64's
 * well-known prefix, 6to4 (2002:AABB:CCDD::/48) and the deprecated IPv4-compatible form (::a.b.c.d, not :: or ::1).
 */
function embeddedIPv4(address: ipaddr.IPv6): ipaddr.IPv4 | null {
  const bytes = address.toByteArray();
  const range = address.range() as string;
  const last32 = () => ipaddr.fromByteArray(bytes.slice(12, 16)) as ipaddr.IPv4;
  if (range === 'ipv4Mapped' || range === 'rfc6145') return last32();
  if (address.match(NAT64_WELL_KNOWN)) return last32();
  if (range === '6to4') return ipaddr.fromByteArray(bytes.slice(2, 6)) as ipaddr.IPv4;
  if (address.parts.slice(0, 6).every((part) => part === 0) && !['unspecified', 'loopback'].includes(range)) return last32();
  return null;
}

function classify(address: Address): AddressClass {
  if (METADATA.some((metadata) => metadata.kind() === address.kind() && address.match(metadata, address.kind() === 'ipv4' ? 32 : 128))) {
    return 'metadata';
  }
  if (address.kind() === 'ipv6') {
    const v4 = embeddedIPv4(address as ipaddr.IPv6);
    if (v4) return classify(v4);
  }
  return CLASS_OF_RANGE[address.range()] ?? 'reserved';
}

/** The class of an IP address; an IPv6 address that carries an IPv4 one is classed by that IPv4 address. */
export function classifyAddress(address: string): AddressClass {
  const plain = stripZone(address);
  if (!isIP(plain)) throw new Error(`Not an IP address: ${address}`);
  return classify(ipaddr.parse(plain));
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
  | { kind: 'net'; network: [Address, number]; port: number | null };

function parsePort(text: string, entry: string): number {
  const port = Number(text);
  if (!/^\d{1,5}$/.test(text) || port < 1 || port > 65535) throw new Error(`Invalid port in allow-list entry "${entry}"`);
  return port;
}

/** An address as the socket sees it: an IPv4-mapped IPv6 address is that IPv4 address (ipaddr.process). */
const asSocketAddress = (address: string): Address => ipaddr.process(stripZone(address));

function netRule(address: string, prefix: number | null, port: number | null): AllowRule {
  const parsed = asSocketAddress(address);
  return { kind: 'net', network: [parsed, prefix ?? (parsed.kind() === 'ipv4' ? 32 : 128)], port };
}

function parseAllowRule(raw: string): AllowRule {
  const entry = raw.trim().toLowerCase();
  if (!entry) throw new Error('Empty allow-list entry');
  const cidr = /^([0-9a-f:.]+)\/(\d{1,3})$/.exec(entry);
  if (cidr?.[1] && cidr[2]) {
    if (!isIP(cidr[1]) || !ipaddr.isValidCIDR(entry)) throw new Error(`Invalid CIDR in allow-list: "${raw}"`);
    const [network, prefix] = ipaddr.parseCIDR(entry);
    return { kind: 'net', network: [network, prefix], port: null };
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
  const socketAddress = asSocketAddress(address);
  return rules.some((rule) => {
    if (rule.port !== null && rule.port !== port) return false;
    if (rule.kind === 'host') return rule.host === hostname;
    if (rule.kind === 'suffix') return hostname.endsWith(rule.suffix);
    return rule.network[0].kind() === socketAddress.kind() && socketAddress.match(rule.network);
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
