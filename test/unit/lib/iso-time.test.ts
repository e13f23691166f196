import { describe, expect, it } from 'vitest';
import { isoTimestamp } from '../../../src/lib/iso-time.js';

describe('isoTimestamp', () => {
  it('when given any millisecond, then exactly what toISOString writes', () => {
    const samples = [0, 1, 9, 10, 99, 100, 999, 1000, -1, -999, -1000, -1001, 1.5, 1_763_800_000_000, 1_763_800_000_999,
      253_402_300_799_999, 253_402_300_800_000, -62_167_219_200_000, -62_167_219_200_001, 8.64e15];
    let seed = 7;
    for (let i = 0; i < 20_000; i++) {
      seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
      samples.push(1_700_000_000_000 + (seed % 400_000_000) * (i % 3 === 0 ? 1 : 7));
    }
    for (const ms of samples) expect(isoTimestamp(ms)).toBe(new Date(Math.floor(ms)).toISOString());
  });

  it('when seconds alternate, then each answer is still right (the kept second is only a shortcut)', () => {
    for (const ms of [1_000_500, 2_000_250, 1_000_001, 2_000_999]) expect(isoTimestamp(ms)).toBe(new Date(ms).toISOString());
  });
});
