import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';

/**
 * Tells every Quarry process that something cached must be dropped (a revoked key, a changed connection).
 * In memory it reaches this process only, which is all there is without Redis; with Redis it is pub/sub, so
 * several processes behind a load balancer drop the same entries within a round trip.
 */
export interface InvalidationBus {
  publish(topic: string, id: string): void;
  subscribe(topic: string, handler: (id: string) => void): void;
  close(): Promise<void>;
}

export class MemoryBus implements InvalidationBus {
  private readonly handlers = new Map<string, Array<(id: string) => void>>();

  publish(topic: string, id: string): void {
    for (const handler of this.handlers.get(topic) ?? []) handler(id);
  }

  subscribe(topic: string, handler: (id: string) => void): void {
    this.handlers.set(topic, [...(this.handlers.get(topic) ?? []), handler]);
  }

  async close(): Promise<void> {}

  /** Nothing leaves this process, so nothing is ever on its way. */
  async flush(): Promise<void> {}
}

/** Told when a Redis user loses Redis and when it has it again (RedisOutageLog), so an outage is reported once. */
export interface RedisHealthSink {
  lost(error: unknown): void;
  regained(): void;
}

export interface RedisBusOptions {
  /**
   * Hold what is published before the connection is up, instead of dropping it (a server has long been connected
   * when it publishes; a one-shot operator command publishes at once). A failed connection still fails the message.
   */
  queueUntilConnected?: boolean;
}

/** Who sent a message, so a process hears each of its own messages once: at once, not again when Redis echoes it. */
const ORIGIN = /^[0-9a-f]{16}:/;

/** Redis pub/sub; the local handlers also run at once, so this process never waits for its own message. */
export class RedisBus implements InvalidationBus {
  private readonly local = new MemoryBus();
  private readonly origin = randomBytes(8).toString('hex');
  private readonly publisher: Redis;
  private readonly subscriber: Redis;
  private readonly channelPrefix = 'quarry:invalidate:';
  private readonly ready = new Set<Redis>();
  /** Messages on their way to Redis. */
  private readonly sending = new Set<Promise<unknown>>();

  constructor(url: string, private readonly health: RedisHealthSink, busOptions: RedisBusOptions = {}) {
    const options = { maxRetriesPerRequest: 0, connectTimeout: 1000, enableOfflineQueue: false, lazyConnect: false };
    this.publisher = new Redis(url, { ...options, enableOfflineQueue: busOptions.queueUntilConnected ?? false });
    this.subscriber = new Redis(url, { ...options, enableOfflineQueue: true });
    // ioredis retries in the background and reports every attempt: the health sink turns that into one outage.
    for (const client of [this.publisher, this.subscriber]) {
      client.on('error', (error) => {
        this.ready.delete(client);
        this.health.lost(error);
      });
      client.on('close', () => this.ready.delete(client));
      client.on('ready', () => {
        this.ready.add(client);
        if (this.ready.size === 2) this.health.regained();
      });
    }
    this.subscriber.on('message', (channel: string, message: string) => {
      if (!channel.startsWith(this.channelPrefix)) return;
      // A domain event is told once to each process: this process's own were handled when it published them.
      const sent = ORIGIN.test(message) ? { origin: message.slice(0, 16), id: message.slice(17) } : { origin: null, id: message };
      if (sent.origin !== this.origin) this.local.publish(channel.slice(this.channelPrefix.length), sent.id);
    });
  }

  publish(topic: string, id: string): void {
    this.local.publish(topic, id);
    // While Redis is away a publish fails at once (no offline queue): the outage is already reported.
    const sent = this.publisher.publish(this.channelPrefix + topic, `${this.origin}:${id}`).catch((error: Error) => this.health.lost(error));
    this.sending.add(sent);
    void sent.finally(() => this.sending.delete(sent));
  }

  /** Waits until what was published so far reached Redis or failed: a process about to exit must not drop it. */
  async flush(): Promise<void> {
    await Promise.all(this.sending);
  }

  subscribe(topic: string, handler: (id: string) => void): void {
    this.local.subscribe(topic, handler);
    this.subscriber.subscribe(this.channelPrefix + topic).catch((error: Error) => this.health.lost(error));
  }

  async close(): Promise<void> {
    this.publisher.disconnect();
    this.subscriber.disconnect();
  }
}
