/**
 * What happened in the domain that other parts of Quarry keep copies of, told on the invalidation bus so every
 * process hears it (Redis pub/sub when configured, this process alone otherwise). A publisher does not know who
 * listens: caches drop what the event makes stale, and nothing that must finish before an operation answers waits on
 * an event (that is an interface the composition root passes, such as the connections' lifecycle).
 *
 * Each event travels as a plain id on a topic of its own name, as the bus's other topics do.
 */
import type { InvalidationBus } from './invalidation-bus.js';

export interface DomainEventPayloads {
  /** A connection's settings changed, or it was removed: what was read through it (schemas, pages) is stale. */
  'connection.changed': { databaseId: string };
  /** The index's rows of a connection changed (a sync or a change read ended, tables left the index). */
  'index.synced': { databaseId: string };
  /** An uploaded SQLite file was replaced or removed: each process's own copy of it is stale. */
  'file.replaced': { userId: string; name: string };
}

export type DomainEvent = keyof DomainEventPayloads;

/** Each event's payload as the one string the bus carries, and back (null: not an event of this kind). */
const wire: { [E in DomainEvent]: { write(payload: DomainEventPayloads[E]): string; read(id: string): DomainEventPayloads[E] | null } } = {
  'connection.changed': { write: ({ databaseId }) => databaseId, read: (databaseId) => ({ databaseId }) },
  'index.synced': { write: ({ databaseId }) => databaseId, read: (databaseId) => ({ databaseId }) },
  // A user id has no slash; a file name may.
  'file.replaced': {
    write: ({ userId, name }) => `${userId}/${name}`,
    read: (id) => {
      const cut = id.indexOf('/');
      return cut > 0 ? { userId: id.slice(0, cut), name: id.slice(cut + 1) } : null;
    },
  },
};

export interface EventPublisher {
  publish<E extends DomainEvent>(event: E, payload: DomainEventPayloads[E]): void;
}

export interface EventSubscriber {
  subscribe<E extends DomainEvent>(event: E, handler: (payload: DomainEventPayloads[E]) => void): void;
}

/** The domain's events over the bus: publishers and subscribers meet here, never each other. */
export class DomainEvents implements EventPublisher, EventSubscriber {
  constructor(private readonly bus: Pick<InvalidationBus, 'publish' | 'subscribe'>) {}

  publish<E extends DomainEvent>(event: E, payload: DomainEventPayloads[E]): void {
    this.bus.publish(event, wire[event].write(payload));
  }

  subscribe<E extends DomainEvent>(event: E, handler: (payload: DomainEventPayloads[E]) => void): void {
    this.bus.subscribe(event, (id) => {
      const payload = wire[event].read(id);
      if (payload) handler(payload);
    });
  }
}
