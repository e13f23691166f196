import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { Chores } from '../../../src/lib/chores.js';

describe('Chores', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it('runs each chore at its own interval until stopped', async () => {
    const chores = new Chores({ warn: vi.fn() }, 'worker');
    const heartbeat = vi.fn(async () => undefined);
    const tick = vi.fn(async () => undefined);
    chores.every(100, heartbeat);
    chores.every(250, tick);
    await vi.advanceTimersByTimeAsync(500);
    expect([heartbeat.mock.calls.length, tick.mock.calls.length]).toEqual([5, 2]);
    chores.stop();
    await vi.advanceTimersByTimeAsync(1_000);
    expect([heartbeat.mock.calls.length, tick.mock.calls.length]).toEqual([5, 2]);
  });

  it('logs a chore that fails under the worker name, and runs it again at its next turn', async () => {
    const warn = vi.fn();
    const chores = new Chores({ warn }, 'change poller');
    const error = new Error('the store did not answer');
    const chore = vi.fn(async () => Promise.reject(error));
    chores.every(100, chore);
    await vi.advanceTimersByTimeAsync(200);
    expect(chore).toHaveBeenCalledTimes(2);
    expect(warn).toHaveBeenCalledWith({ err: error }, 'change poller');
    chores.stop();
  });

  it('keeps no process alive: its timers are unref\'d', () => {
    vi.useRealTimers();
    const chores = new Chores({ warn: vi.fn() }, 'worker');
    const spy = vi.spyOn(globalThis, 'setInterval');
    chores.every(60_000, async () => undefined);
    const timer = spy.mock.results[0]!.value as NodeJS.Timeout;
    expect(timer.hasRef()).toBe(false);
    chores.stop();
    spy.mockRestore();
  });
});
