import { describe, expect, it, vi } from 'vitest';
import { TimeoutError, withTimeout } from '../../../src/lib/timeout.js';

const never = () => new Promise<never>(() => {});

describe('withTimeout', () => {
  it('when the work settles in time, then its value, and onTimeout never runs', async () => {
    const onTimeout = vi.fn();
    await expect(withTimeout(Promise.resolve(7), 50, { onTimeout })).resolves.toBe(7);
    await expect(withTimeout(Promise.reject(new Error('boom')), 50, { onTimeout })).rejects.toThrow('boom');
    await new Promise((resolve) => setTimeout(resolve, 80));
    expect(onTimeout).not.toHaveBeenCalled();
  });

  it('when time runs out, then onTimeout runs and it rejects with a TimeoutError, or the error asked for', async () => {
    const onTimeout = vi.fn();
    await expect(withTimeout(never(), 10, { onTimeout })).rejects.toBeInstanceOf(TimeoutError);
    expect(onTimeout).toHaveBeenCalledTimes(1);
    await expect(withTimeout(never(), 10, { error: () => new RangeError('too slow') })).rejects.toThrow(RangeError);
  });

  it('when onTimeout itself throws, then the rejection is still the timeout', async () => {
    const onTimeout = () => {
      throw new Error('could not let go');
    };
    await expect(withTimeout(never(), 10, { onTimeout })).rejects.toBeInstanceOf(TimeoutError);
  });

  it('when the time is already up (0 ms), then it rejects at once and a later failure of the work is not unhandled', async () => {
    const late = new Promise<never>((_, reject) => setTimeout(() => reject(new Error('late')), 5));
    await expect(withTimeout(late, 0)).rejects.toBeInstanceOf(TimeoutError);
    await new Promise((resolve) => setTimeout(resolve, 20));
  });
});
