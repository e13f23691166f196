import { describe, expect, it, vi } from 'vitest';
import { ConnectorError } from '../../../src/connectors/errors.js';
import {
  classifyAddress,
  parseAllowlist,
  resolveAllowedHost,
  type HostPolicy,
  type LookupAll,
} from '../../../src/connectors/host-policy.js';

const strict: HostPolicy = { allowlist: [], allowPrivate: false, allowLoopback: false };
const open: HostPolicy = { allowlist: [], allowPrivate: true, allowLoopback: true };

function dns(answers: Record<string, string[]>): LookupAll {
  return vi.fn(async (hostname: string) => {
    const addresses = answers[hostname];
    if (!addresses) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
    return addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
  });
}

async function refusal(promise: Promise<unknown>): Promise<ConnectorError> {
  const err = await promise.then(() => null, (e: unknown) => e);
  expect(err).toBeInstanceOf(ConnectorError);
  return err as ConnectorError;
}

describe('classifyAddress', () => {
  it.each([
    ['8.8.8.8', 'public'],
    ['2606:4700:4700::1111', 'public'],
    ['10.1.2.3', 'private'],
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['172.32.0.1', 'public'],
    ['192.168.1.10', 'private'],
    ['100.64.0.1', 'private'],
    ['fc00::1', 'private'],
    ['fd12:3456::1', 'private'],
    ['127.0.0.1', 'loopback'],
    ['127.255.0.9', 'loopback'],
    ['::1', 'loopback'],
    ['169.254.10.20', 'link-local'],
    ['fe80::1', 'link-local'],
    ['fe80::1%eth0', 'link-local'],
    ['febf::1', 'link-local'],
    ['169.254.169.254', 'metadata'],
    ['fd00:ec2::254', 'metadata'],
    ['100.100.100.200', 'metadata'],
    ['0.0.0.0', 'unspecified'],
    ['0.1.2.3', 'unspecified'],
    ['::', 'unspecified'],
    ['224.0.0.1', 'multicast'],
    ['239.255.255.250', 'multicast'],
    ['ff02::1', 'multicast'],
    ['255.255.255.255', 'broadcast'],
    ['240.0.0.1', 'reserved'],
    ['198.18.0.1', 'reserved'],
    ['198.19.255.254', 'reserved'],
    ['192.0.0.8', 'reserved'],
    ['192.0.2.10', 'reserved'],
    ['198.51.100.7', 'reserved'],
    ['203.0.113.9', 'reserved'],
    ['192.88.99.1', 'reserved'],
    ['64:ff9b:1::a00:1', 'reserved'],
    ['2001:0:4136:e378:8000:63bf:3fff:fdd2', 'reserved'],
    ['100::1', 'reserved'],
    ['2001:db8::5', 'reserved'],
    ['2001:2::1', 'reserved'],
    ['fec0::1', 'private'],
  ])('when the address is %s, then it is %s', (address, expected) => {
    expect(classifyAddress(address)).toBe(expected);
  });

  it.each([
    ['::ffff:169.254.169.254', 'metadata'],
    ['::ffff:a9fe:a9fe', 'metadata'],
    ['::ffff:127.0.0.1', 'loopback'],
    ['::ffff:10.0.0.1', 'private'],
    ['64:ff9b::a9fe:a9fe', 'metadata'],
    ['2002:a9fe:a9fe::1', 'metadata'],
    ['::169.254.169.254', 'metadata'],
    ['::ffff:8.8.8.8', 'public'],
    ['::ffff:0:a9fe:a9fe', 'metadata'],
    ['64:ff9b::c612:1', 'reserved'],
    ['2002:c000:0201::1', 'reserved'],
    ['2002:0808:0808::1', 'public'],
  ])('when IPv6 %s carries an IPv4 address, then it is classed by that address (%s)', (address, expected) => {
    expect(classifyAddress(address)).toBe(expected);
  });
});

describe('resolveAllowedHost', () => {
  it('when the host resolves to a public address, then that address is returned with the name kept for TLS', async () => {
    const lookup = dns({ 'db.example.com': ['93.184.216.34', '2606:2800:220:1::1'] });
    const resolved = await resolveAllowedHost('DB.Example.com.', 5432, strict, lookup);
    expect(resolved).toEqual({
      hostname: 'db.example.com', address: '93.184.216.34', family: 4, port: 5432, servername: 'db.example.com',
    });
  });

  it('when the host is an IP literal, then no DNS query is made and there is no TLS server name', async () => {
    const lookup = dns({});
    const resolved = await resolveAllowedHost('[2606:4700:4700::1111]', 3306, strict, lookup);
    expect(resolved).toMatchObject({ address: '2606:4700:4700::1111', family: 6, servername: null });
    expect(lookup).not.toHaveBeenCalled();
  });

  it.each([
    ['169.254.169.254', 'metadata'],
    ['[fd00:ec2::254]', 'metadata'],
    ['169.254.1.1', 'link-local'],
    ['[fe80::1]', 'link-local'],
    ['0.0.0.0', 'unspecified'],
    ['224.0.0.5', 'multicast'],
    ['255.255.255.255', 'broadcast'],
  ])('when the host is %s, then it is refused even by the most open policy (%s)', async (host, reason) => {
    const err = await refusal(resolveAllowedHost(host, 5432, { allowlist: [host.replace(/[[\]]/g, '')], allowPrivate: true, allowLoopback: true }));
    expect(err.code).toBe('HOST_NOT_ALLOWED');
    expect(err.details.reason).toBe(reason);
  });

  it('when the host is metadata.google.internal, then it is refused before any DNS query', async () => {
    const lookup = dns({ 'metadata.google.internal': ['8.8.8.8'] });
    const err = await refusal(resolveAllowedHost('metadata.google.internal', 80, open, lookup));
    expect(err.code).toBe('HOST_NOT_ALLOWED');
    expect(lookup).not.toHaveBeenCalled();
  });

  it.each([['10.0.0.5'], ['172.20.1.1'], ['192.168.0.2'], ['[fd00::5]']])(
    'when private %s is asked for and private hosts are not allowed, then it is refused',
    async (host) => {
      const err = await refusal(resolveAllowedHost(host, 5432, strict));
      expect(err.code).toBe('HOST_NOT_ALLOWED');
      expect(err.details.reason).toBe('private');
    },
  );

  it('when private hosts are allowed, then a private address is accepted', async () => {
    await expect(resolveAllowedHost('10.0.0.5', 5432, { ...strict, allowPrivate: true })).resolves.toMatchObject({ address: '10.0.0.5' });
  });

  it('when loopback is not allowed, then 127.0.0.1, ::1 and localhost are refused', async () => {
    const lookup = dns({ localhost: ['127.0.0.1', '::1'] });
    for (const host of ['127.0.0.1', '[::1]', 'localhost']) {
      const err = await refusal(resolveAllowedHost(host, 5432, { ...strict, allowPrivate: true }, lookup));
      expect(err.details.reason).toBe('loopback');
    }
  });

  it('when loopback is allowed, then localhost is accepted', async () => {
    const lookup = dns({ localhost: ['127.0.0.1'] });
    await expect(resolveAllowedHost('localhost', 5432, { ...strict, allowLoopback: true }, lookup)).resolves.toMatchObject({
      address: '127.0.0.1',
    });
  });

  it('when a public name resolves to a private address, then it is refused (DNS cannot smuggle a private host)', async () => {
    const lookup = dns({ 'innocent.example.com': ['192.168.1.1'] });
    const err = await refusal(resolveAllowedHost('innocent.example.com', 5432, strict, lookup));
    expect(err.details.reason).toBe('private');
  });

  it('when a name resolves to a public and a metadata address, then the whole name is refused', async () => {
    const lookup = dns({ 'rebind.example.com': ['93.184.216.34', '169.254.169.254'] });
    const err = await refusal(resolveAllowedHost('rebind.example.com', 5432, open, lookup));
    expect(err.details.reason).toBe('metadata');
  });

  it('when a name resolves to a link-local address, then it is refused even where private hosts are allowed', async () => {
    const lookup = dns({ 'linklocal.example.com': ['169.254.1.1'] });
    const err = await refusal(resolveAllowedHost('linklocal.example.com', 5432, open, lookup));
    expect(err.code).toBe('HOST_NOT_ALLOWED');
    expect(err.details.reason).toBe('link-local');
  });

  it('when a name resolves to an IPv4-mapped metadata address, then it is refused', async () => {
    const lookup = dns({ 'mapped.example.com': ['::ffff:169.254.169.254'] });
    const err = await refusal(resolveAllowedHost('mapped.example.com', 5432, open, lookup));
    expect(err.details.reason).toBe('metadata');
  });

  it('when the name does not resolve, then the error is DATABASE_UNREACHABLE', async () => {
    const err = await refusal(resolveAllowedHost('nowhere.invalid', 5432, strict, dns({})));
    expect(err.code).toBe('DATABASE_UNREACHABLE');
    expect(err.message).not.toContain('nowhere.invalid');
  });

  describe('allow-list', () => {
    const lookup = dns({
      'db.internal': ['10.0.0.7'],
      'replica.corp.example': ['10.0.0.8'],
      'other.internal': ['10.0.0.9'],
    });

    it('when a private host name is allow-listed, then it is accepted without allowPrivate', async () => {
      const policy = { ...strict, allowlist: ['db.internal'] };
      await expect(resolveAllowedHost('db.internal', 5432, policy, lookup)).resolves.toMatchObject({ address: '10.0.0.7' });
      await expect(resolveAllowedHost('other.internal', 5432, policy, lookup)).rejects.toMatchObject({ code: 'HOST_NOT_ALLOWED' });
    });

    it('when an entry names a port, then only that port is accepted', async () => {
      const policy = { ...strict, allowlist: ['db.internal:5432'] };
      await expect(resolveAllowedHost('db.internal', 5432, policy, lookup)).resolves.toMatchObject({ address: '10.0.0.7', port: 5432 });
      await expect(resolveAllowedHost('db.internal', 22, policy, lookup)).rejects.toMatchObject({ code: 'HOST_NOT_ALLOWED' });
    });

    it('when a CIDR is allow-listed, then addresses inside it are accepted', async () => {
      const policy = { ...strict, allowlist: ['10.0.0.0/29'] };
      await expect(resolveAllowedHost('db.internal', 5432, policy, lookup)).resolves.toMatchObject({ address: '10.0.0.7' });
      await expect(resolveAllowedHost('10.0.0.9', 5432, policy, lookup)).rejects.toMatchObject({ code: 'HOST_NOT_ALLOWED' });
    });

    it('when a wildcard suffix is allow-listed, then sub-domains are accepted', async () => {
      const policy = { ...strict, allowlist: ['*.corp.example'] };
      await expect(resolveAllowedHost('replica.corp.example', 5432, policy, lookup)).resolves.toMatchObject({ hostname: 'replica.corp.example', address: '10.0.0.8' });
    });

    it('when loopback is allow-listed by address and port, then only that port on loopback is accepted', async () => {
      const policy = { ...strict, allowlist: ['127.0.0.1:5432', '[::1]:5432'] };
      await expect(resolveAllowedHost('127.0.0.1', 5432, policy)).resolves.toMatchObject({ address: '127.0.0.1', family: 4 });
      await expect(resolveAllowedHost('[::1]', 5432, policy)).resolves.toMatchObject({ address: '::1', family: 6 });
      await expect(resolveAllowedHost('127.0.0.1', 6379, policy)).rejects.toMatchObject({ code: 'HOST_NOT_ALLOWED' });
    });

    it('when allowlistOnly is set, then a public host outside the list is refused', async () => {
      const policy = { ...strict, allowlist: ['db.example.com'], allowlistOnly: true };
      const publicDns = dns({ 'db.example.com': ['93.184.216.34'], 'evil.example.com': ['93.184.216.35'] });
      await expect(resolveAllowedHost('db.example.com', 5432, policy, publicDns)).resolves.toMatchObject({ address: '93.184.216.34' });
      await expect(resolveAllowedHost('evil.example.com', 5432, policy, publicDns)).rejects.toMatchObject({
        code: 'HOST_NOT_ALLOWED',
        details: { reason: 'not_allow_listed' },
      });
    });

    it('when an IPv4 network is allow-listed, then an IPv4-mapped IPv6 answer inside it is accepted too', async () => {
      const mapped = dns({ 'db.internal': ['::ffff:10.0.0.7'] });
      await expect(resolveAllowedHost('db.internal', 5432, { ...strict, allowlist: ['10.0.0.0/24'] }, mapped)).resolves.toMatchObject({ hostname: 'db.internal' });
    });

    it('when an entry is malformed, then parseAllowlist names it', () => {
      expect(() => parseAllowlist(['db.internal', '10.0.0.0/40'])).toThrow(/10\.0\.0\.0\/40/);
      expect(() => parseAllowlist(['db.internal:99999'])).toThrow(/port/);
      expect(() => parseAllowlist(['bad host'])).toThrow(/bad host/);
      expect(() => parseAllowlist(['fd00::/129'])).toThrow(/fd00::\/129/);
      expect(() => parseAllowlist(['db.internal', '*.corp.example', '[fd00::1]:5432', 'fd00::/8'])).not.toThrow();
    });
  });
});
