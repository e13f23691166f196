/**
 * The batching both stream readers share: keys gathered over transactions, written when the batch is full or its
 * oldest change has waited `flushMs`, one task at a time. No database: the batch writer is a recording function.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ChangeBatcher, type PendingKeys } from '../../../src/search-index/changes/change-batcher.js';

function keysOf(batch: PendingKeys): Record<string, string[]> {
  return Object.fromEntries([...batch].map(([src, keys]) => [src, [...keys.keys()]]));
}

function recording(options: { batchKeys?: number; flushMs?: number; write?: (batch: PendingKeys) => Promise<void> } = {}) {
  const written: PendingKeys[] = [];
  const disconnect = vi.fn(async () => undefined);
  const batcher = new ChangeBatcher({
    batchKeys: options.batchKeys,
    flushMs: options.flushMs,
    write: async (batch) => {
      written.push(batch);
      await options.write?.(batch);
    },
    disconnect,
  });
  return { batcher, written, disconnect };
}

describe('ChangeBatcher', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it('gathers a row changed several times as one key, with its last values', async () => {
    const { batcher, written } = recording();
    batcher.add('docs', '[1]', [1]);
    batcher.add('docs', '[1]', ['1']);
    batcher.add('docs', '[2]', [2]);
    batcher.add('notes', '[1]', [1]);
    expect(batcher.size).toBe(3);
    await batcher.flushNow();
    expect(written).toHaveLength(1);
    expect(keysOf(written[0]!)).toEqual({ docs: ['[1]', '[2]'], notes: ['[1]'] });
    expect(written[0]!.get('docs')!.get('[1]')).toEqual(['1']);
    expect(batcher.size).toBe(0);
  });

  it('drops what was gathered for a table, and counts it no more', () => {
    const { batcher } = recording();
    batcher.add('docs', '[1]', [1]);
    batcher.add('docs', '[2]', [2]);
    batcher.add('notes', '[1]', [1]);
    batcher.drop('docs');
    expect(batcher.size).toBe(1);
  });

  it('writes a full batch when its transaction ends, without waiting for the timer', async () => {
    const { batcher, written } = recording({ batchKeys: 2, flushMs: 10_000 });
    await batcher.run(async () => {
      batcher.add('docs', '[1]', [1]);
      await batcher.committed();
    });
    expect(written).toHaveLength(0);
    expect(batcher.idle).toBe(false);
    await batcher.run(async () => {
      batcher.add('docs', '[2]', [2]);
      await batcher.committed();
    });
    expect(written.map(keysOf)).toEqual([{ docs: ['[1]', '[2]'] }]);
    expect(batcher.idle).toBe(true);
  });

  it('writes a batch that is not full once its first change has waited flushMs', async () => {
    const { batcher, written } = recording({ batchKeys: 100, flushMs: 500 });
    await batcher.run(async () => {
      batcher.add('docs', '[1]', [1]);
      await batcher.committed();
    });
    await vi.advanceTimersByTimeAsync(300);
    await batcher.run(async () => {
      batcher.add('docs', '[2]', [2]);
      await batcher.committed();
    });
    expect(written).toHaveLength(0);
    // The timer is not restarted by the second transaction: the first change waits 500 ms at most.
    await vi.advanceTimersByTimeAsync(200);
    expect(written.map(keysOf)).toEqual([{ docs: ['[1]', '[2]'] }]);
    await vi.advanceTimersByTimeAsync(5_000);
    expect(written).toHaveLength(1);
  });

  it('writes at once when asked (a truncate), whatever the batch holds', async () => {
    const { batcher, written } = recording({ batchKeys: 100, flushMs: 500 });
    await batcher.run(() => batcher.committed(true));
    expect(written).toHaveLength(1);
  });

  it('never writes a batch while another is being written, nor while a change is gathered', async () => {
    const events: string[] = [];
    let release!: () => void;
    const { batcher } = recording({
      batchKeys: 1,
      flushMs: 10,
      write: async (batch) => {
        events.push(`start ${Object.keys(keysOf(batch)).join()}`);
        if (batch.has('docs')) await new Promise<void>((resolve) => (release = resolve));
        events.push(`end ${Object.keys(keysOf(batch)).join()}`);
      },
    });
    const first = batcher.run(async () => {
      batcher.add('docs', '[1]', [1]);
      await batcher.committed();
    });
    const second = batcher.run(async () => {
      events.push('gather notes');
      batcher.add('notes', '[1]', [1]);
      await batcher.committed();
    });
    const third = batcher.flushNow();
    await vi.advanceTimersByTimeAsync(1_000);
    expect(events).toEqual(['start docs']);
    release();
    await Promise.all([first, second, third]);
    expect(events).toEqual(['start docs', 'end docs', 'gather notes', 'start notes', 'end notes', 'start ', 'end ']);
  });

  it('ends the stream as failed when a write fails, disconnects it, and runs no task after it', async () => {
    const error = new Error('the index refused the rows');
    const { batcher, disconnect } = recording({ flushMs: 50, write: async () => Promise.reject(error) });
    await batcher.run(async () => {
      batcher.add('docs', '[1]', [1]);
      await batcher.committed();
    });
    await vi.advanceTimersByTimeAsync(50);
    await expect(batcher.done).resolves.toEqual({ status: 'failed', error });
    expect(disconnect).toHaveBeenCalledTimes(1);
    expect(batcher.ended).toBe(true);
    const later = vi.fn(async () => undefined);
    await batcher.run(later);
    expect(later).not.toHaveBeenCalled();
  });

  it('when ended, lets the running task finish before disconnecting, and writes nothing after', async () => {
    const events: string[] = [];
    let release!: () => void;
    const { batcher, written, disconnect } = recording({ flushMs: 50 });
    disconnect.mockImplementation(async () => {
      events.push('disconnect');
    });
    const running = batcher.run(async () => {
      batcher.add('docs', '[1]', [1]);
      await batcher.committed();
      await new Promise<void>((resolve) => (release = resolve));
      events.push('task done');
    });
    const queued = vi.fn(async () => undefined);
    void batcher.run(queued);
    await vi.advanceTimersByTimeAsync(0); // the first task is under way, waiting on its release
    batcher.end({ status: 'stopped' });
    batcher.end({ status: 'lost' });
    await vi.advanceTimersByTimeAsync(1_000);
    expect(events).toEqual([]);
    release();
    await running;
    await expect(batcher.done).resolves.toEqual({ status: 'stopped' });
    expect(events).toEqual(['task done', 'disconnect']);
    expect(queued).not.toHaveBeenCalled();
    await batcher.flushNow();
    expect(written).toHaveLength(0);
  });

  it('when abandoned (the process dies), disconnects at once and ends as lost, writing nothing gathered', async () => {
    const { batcher, written, disconnect } = recording({ flushMs: 50 });
    await batcher.run(async () => {
      batcher.add('docs', '[1]', [1]);
      await batcher.committed();
    });
    await batcher.abandon();
    await expect(batcher.done).resolves.toEqual({ status: 'lost' });
    expect(disconnect).toHaveBeenCalledTimes(1);
    await vi.advanceTimersByTimeAsync(1_000);
    expect(written).toHaveLength(0);
  });
});
