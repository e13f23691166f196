/**
 * The invalidation bus over a real Redis (REDIS_URL, default redis://127.0.0.1:6379), two buses standing for two
 * processes: an event reaches each process exactly once, the publisher's at once and the other's through Redis.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { RedisBus } from '../../src/lib/invalidation-bus.js';

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const health = { lost: () => undefined, regained: () => undefined };
const buses: RedisBus[] = [];
afterEach(async () => {
  await Promise.all(buses.splice(0).map((bus) => bus.close()));
});

function open(): RedisBus {
  const bus = new RedisBus(REDIS_URL, health, { queueUntilConnected: true });
  buses.push(bus);
  return bus;
}

const settle = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('the Redis invalidation bus', () => {
  it('when one process publishes, then it and another process each hear the event once', async () => {
    const topic = `connection.changed.test-${process.pid}-${Date.now()}`;
    const [a, b] = [open(), open()];
    const heard = { a: [] as string[], b: [] as string[] };
    a.subscribe(topic, (id) => heard.a.push(id));
    b.subscribe(topic, (id) => heard.b.push(id));
    await settle(300); // both subscribed in Redis
    a.publish(topic, 'db_1');
    expect(heard.a).toEqual(['db_1']);
    await a.flush();
    for (let i = 0; i < 50 && heard.b.length === 0; i += 1) await settle(20);
    await settle(200); // an echo of a's own message would have come back by now
    expect(heard).toEqual({ a: ['db_1'], b: ['db_1'] });
  });
});
