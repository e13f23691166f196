import pTimeout, { TimeoutError } from 'p-timeout';

export { TimeoutError };

export interface TimeoutOptions {
  /** Runs when time is up, before the rejection: let go of what the work holds (a connection, a socket). */
  onTimeout?: () => void;
  /** The error to reject with; a TimeoutError by default. */
  error?: () => Error;
}

/** p-timeout's timers, unref'd: a pending timeout never keeps the process alive. */
const unrefTimers = {
  setTimeout: ((callback: () => void, ms: number) => setTimeout(callback, ms).unref()) as unknown as typeof setTimeout,
  clearTimeout,
};

/**
 * The one timeout helper (p-timeout): settles like `work`, unless `ms` pass first; then `onTimeout` runs and the
 * result rejects with `error()`. A failure of `work` after that is ignored. `ms` of 0 or less has already expired.
 */
export function withTimeout<T>(work: Promise<T>, ms: number, options: TimeoutOptions = {}): Promise<T> {
  const expire = (): never => {
    try {
      options.onTimeout?.();
    } catch {
      // Letting go failed; what the caller learns is still that time ran out.
    }
    throw options.error?.() ?? new TimeoutError(`no answer within ${ms} ms`);
  };
  if (!(ms > 0)) {
    work.catch(() => undefined);
    return new Promise<T>(() => expire());
  }
  return pTimeout(work, { milliseconds: ms, customTimers: unrefTimers, fallback: expire });
}
