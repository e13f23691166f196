/**
 * A client-side deadline behind each engine's own statement timeout: if the server neither answers nor cancels
 * (a dead network path, a hung server), the caller still gets DATABASE_TIMEOUT and the connection is discarded.
 */

/** Extra time the server's own timeout gets before the client gives up on the connection. */
export const CLIENT_GRACE_MS = 1000;

export class DeadlineExceeded extends Error {
  readonly code = 'ETIMEDOUT';
}

/**
 * Settles like `work`, unless `ms` pass first: then `onExpire` runs (to destroy the connection) and the result
 * rejects with DeadlineExceeded. The timer is unref'd so it never holds the process open.
 */
export function withDeadline<T>(work: Promise<T>, ms: number, onExpire: () => void): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    let expired = false;
    const timer = setTimeout(() => {
      expired = true;
      try {
        onExpire();
      } finally {
        reject(new DeadlineExceeded('deadline exceeded'));
      }
    }, ms);
    timer.unref();
    work.then(
      (value) => {
        clearTimeout(timer);
        if (!expired) resolve(value);
      },
      (err: unknown) => {
        clearTimeout(timer);
        if (!expired) reject(err);
      },
    );
  });
}
