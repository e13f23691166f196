import { describe, expect, it } from 'vitest';
import { LastKnown } from '../../../src/lib/last-known.js';

class Outage extends Error {}
class Refusal extends Error {}

function clocked(graceMs = 60_000) {
  let time = 10_000;
  const memory = new LastKnown<{ n: number }>({ graceMs, isOutage: (error) => error instanceof Outage, now: () => time });
  return { memory, tick: (ms = 1) => (time += ms) };
}

const owners = () => ['database:d1'];
const down = async (): Promise<{ n: number }> => { throw new Outage('store down'); };

describe('LastKnown', () => {
  it('when the store answered and then goes down within the grace, then the remembered answer stands in for it', async () => {
    const { memory, tick } = clocked();
    expect(await memory.read('d1', owners, async () => ({ n: 1 }))).toEqual({ n: 1 });
    tick(59_999);
    expect(await memory.read('d1', owners, down)).toEqual({ n: 1 });
  });

  it('when the store is down and nothing was remembered, then the outage is thrown', async () => {
    const { memory } = clocked();
    await expect(memory.read('d1', owners, down)).rejects.toBeInstanceOf(Outage);
  });

  it('when the store answers with a failure that is not an outage, then it is thrown even with something remembered', async () => {
    const { memory } = clocked();
    await memory.read('d1', owners, async () => ({ n: 1 }));
    await expect(memory.read('d1', owners, async () => { throw new Refusal('gone'); })).rejects.toBeInstanceOf(Refusal);
  });

  it('when the answer is older than the grace, then the outage is thrown', async () => {
    const { memory, tick } = clocked(1_000);
    await memory.read('d1', owners, async () => ({ n: 1 }));
    tick(1_001);
    await expect(memory.read('d1', owners, down)).rejects.toBeInstanceOf(Outage);
  });

  it('when an owner is invalidated, then what was remembered of it goes', async () => {
    const { memory, tick } = clocked();
    await memory.read('d1', owners, async () => ({ n: 1 }));
    tick();
    memory.invalidate('database:d1');
    await expect(memory.read('d1', owners, down)).rejects.toBeInstanceOf(Outage);
  });

  it('when an owner is invalidated while a read is under way, then what that read found is not remembered', async () => {
    const { memory, tick } = clocked();
    await memory.read('d1', owners, async () => {
      tick();
      memory.invalidate('database:d1');
      tick();
      return { n: 1 };
    });
    await expect(memory.read('d1', owners, down)).rejects.toBeInstanceOf(Outage);
  });

  it('when the store answers again, then its newer answer replaces the memory', async () => {
    const { memory, tick } = clocked();
    await memory.read('d1', owners, async () => ({ n: 1 }));
    tick();
    await memory.read('d1', owners, async () => ({ n: 2 }));
    expect(await memory.read('d1', owners, down)).toEqual({ n: 2 });
  });

  it('when the grace is 0, then nothing is remembered', async () => {
    const { memory } = clocked(0);
    await memory.read('d1', owners, async () => ({ n: 1 }));
    await expect(memory.read('d1', owners, down)).rejects.toBeInstanceOf(Outage);
  });

  it('when an answer is fresher than freshMs, then it is used without asking the store; an invalidation or its age makes the next read ask', async () => {
    let time = 10_000;
    const memory = new LastKnown<{ n: number }>({ graceMs: 0, freshMs: 5_000, isOutage: (error) => error instanceof Outage, now: () => time });
    let loads = 0;
    const load = async () => ({ n: (loads += 1) });
    expect(await memory.read('d1', owners, load)).toEqual({ n: 1 });
    time += 4_999;
    expect(await memory.read('d1', owners, load)).toEqual({ n: 1 });
    time += 1;
    expect(await memory.read('d1', owners, load)).toEqual({ n: 2 });
    time += 1;
    memory.invalidate('database:d1');
    time += 1;
    expect(await memory.read('d1', owners, load)).toEqual({ n: 3 });
    // Kept to be fresh is not kept to stand in for an outage: with no grace, an outage is thrown.
    time += 5_000;
    await expect(memory.read('d1', owners, down)).rejects.toBeInstanceOf(Outage);
  });
});

