import { describe, expect, it } from 'vitest';
import { SeenVersion } from '../../../src/search-index/seen-version.js';

/** A table whose version the test sets, counting the calls into it; after `hold()`, answers wait for `release()`. */
function fakeTable(start = 1) {
  let version = start;
  let gate: Promise<void> | null = null;
  let open: () => void = () => undefined;
  const table = {
    calls: 0,
    set: (v: number) => void (version = v),
    hold: () => void (gate = new Promise<void>((resolve) => (open = resolve))),
    release: () => {
      gate = null;
      open();
    },
    async version() {
      table.calls += 1;
      const answer = version;
      if (gate) await gate;
      return answer;
    },
  };
  return table;
}

describe('SeenVersion', () => {
  it('when asked again within the reuse time, then the last answer is given without asking the table', async () => {
    let now = 1_000;
    const seen = new SeenVersion(100, () => now);
    const table = fakeTable(7);
    expect(await seen.of(table)).toBe(7);
    table.set(8);
    now += 99;
    expect(await seen.of(table)).toBe(7);
    expect(table.calls).toBe(1);
    now += 1;
    expect(await seen.of(table)).toBe(8);
    expect(table.calls).toBe(2);
  });

  it('when several ask at once, then the table is asked once for all of them', async () => {
    const seen = new SeenVersion(100, () => 0);
    const table = fakeTable(3);
    expect(await Promise.all([seen.of(table), seen.of(table), seen.of(table)])).toEqual([3, 3, 3]);
    expect(table.calls).toBe(1);
  });

  it('when the table is written, then the next caller reads the new version at once', async () => {
    const seen = new SeenVersion(100, () => 0);
    const table = fakeTable(3);
    expect(await seen.of(table)).toBe(3);
    table.set(4);
    seen.forget();
    expect(await seen.of(table)).toBe(4);
    expect(table.calls).toBe(2);
  });

  it('when an answer asked for before a write comes after it, then it is not kept', async () => {
    const seen = new SeenVersion(100, () => 0);
    const table = fakeTable(3);
    table.hold();
    const before = seen.of(table);
    table.set(4);
    seen.forget();
    table.release();
    expect(await before).toBe(3);
    expect(await seen.of(table)).toBe(4);
    expect(table.calls).toBe(2);
  });

  it('when the reuse time is 0 (strong consistency), then every caller asks the table', async () => {
    const seen = new SeenVersion(0, () => 0);
    const table = fakeTable(3);
    await Promise.all([seen.of(table), seen.of(table)]);
    await seen.of(table);
    expect(table.calls).toBe(3);
  });
});
