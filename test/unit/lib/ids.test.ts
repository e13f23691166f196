import { afterEach, describe, expect, it, vi } from 'vitest';

afterEach(() => {
  vi.doUnmock('node:crypto');
  vi.resetModules();
});

/** ids.ts with the system generator replaced by `fill`, counting its calls. */
async function idsWith(fill: (buffer: Buffer) => void) {
  const calls = { count: 0 };
  vi.resetModules();
  vi.doMock('node:crypto', async (original) => ({
    ...(await original<typeof import('node:crypto')>()),
    randomFillSync: (buffer: Buffer) => {
      calls.count += 1;
      fill(buffer);
      return buffer;
    },
  }));
  return { ids: await import('../../../src/lib/ids.js'), calls };
}

describe('random ids', () => {
  it('when many ids are made, then the system generator is asked once per 4 KB of bytes, not once per id', async () => {
    const { ids, calls } = await idsWith((buffer) => buffer.fill(7));
    for (let i = 0; i < 186; i += 1) expect(ids.newId('srch')).toBe(`srch_${'H'.repeat(22)}`);
    expect(calls.count).toBe(1); // 186 x 22 = 4,092 bytes of the 4,096
    ids.newId('srch');
    expect(calls.count).toBe(2);
  });

  it('when the generator gives bytes 248-255, then they are skipped, so each character comes from a byte below 248', async () => {
    let next = 0;
    const { ids } = await idsWith((buffer) => {
      for (let i = 0; i < buffer.length; i += 1) buffer[i] = [255, 248, 61, 62, 247][next++ % 5]!;
    });
    // 61 -> '9'; 62 % 62 = 0 -> 'A'; 247 % 62 = 61 -> '9'.
    expect(ids.randomBase62(6)).toBe('9A99A9');
  });

  it('when real bytes are drawn, then ids are 22 base62 characters, all different, every character used', async () => {
    vi.resetModules();
    const ids = await import('../../../src/lib/ids.js');
    const made = Array.from({ length: 5000 }, () => ids.newId('key'));
    expect(new Set(made).size).toBe(5000);
    for (const id of made) expect(id).toMatch(/^key_[A-Za-z0-9]{22}$/);
    expect(new Set(made.join('').replace(/^key_|key_/g, '')).size).toBe(62);
  });
});
