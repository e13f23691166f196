/**
 * A client-side deadline behind each engine's own statement timeout: if the server neither answers nor cancels
 * (a dead network path, a hung server), the caller still gets DATABASE_TIMEOUT and the connection is discarded.
 */
import { withTimeout } from '../lib/timeout.js';

/** Extra time the server's own timeout gets before the client gives up on the connection. */
export const CLIENT_GRACE_MS = 1000;

/**
 * How long a pool's orderly close (a goodbye to the server on each connection) may take before its sockets are
 * destroyed: a server that stopped answering would otherwise hold a shutdown forever.
 */
export const CLOSE_GRACE_MS = 2000;

export class DeadlineExceeded extends Error {
  readonly code = 'ETIMEDOUT';
}

/** Settles like `work`, unless `ms` pass first: then `onExpire` runs (to destroy the connection) and it rejects with DeadlineExceeded. */
export function withDeadline<T>(work: Promise<T>, ms: number, onExpire: () => void): Promise<T> {
  return withTimeout(work, ms, { onTimeout: onExpire, error: () => new DeadlineExceeded('deadline exceeded') });
}

/**
 * Closes gracefully within `ms`; past it, `force` destroys what is left (the sockets) and the close counts as done.
 * Never rejects: a pool that cannot say goodbye is closed all the same.
 */
export async function closeWithin(graceful: Promise<unknown>, ms: number, force: () => void): Promise<void> {
  await withDeadline(graceful, ms, force).catch(() => undefined);
}

/** The sockets a pool opened, so a close that the server never answers can destroy them. */
export class SocketSet {
  private readonly sockets = new Set<import('node:net').Socket>();

  add<S extends import('node:net').Socket>(socket: S): S {
    this.sockets.add(socket);
    socket.once('close', () => this.sockets.delete(socket));
    return socket;
  }

  destroyAll(): void {
    for (const socket of this.sockets) socket.destroy();
    this.sockets.clear();
  }
}
