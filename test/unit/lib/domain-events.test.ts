/** Domain events on the in-memory bus: a publisher reaches every subscriber of that event, and no other. */
import { describe, expect, it } from 'vitest';
import { DomainEvents } from '../../../src/lib/domain-events.js';
import { MemoryBus } from '../../../src/lib/invalidation-bus.js';

describe('domain events', () => {
  it('when a connection change is published, then each of its subscribers hears it once and the other events\' do not', () => {
    const events = new DomainEvents(new MemoryBus());
    const heard: string[] = [];
    events.subscribe('connection.changed', ({ databaseId }) => heard.push(`pages:${databaseId}`));
    events.subscribe('connection.changed', ({ databaseId }) => heard.push(`schemas:${databaseId}`));
    events.subscribe('index.synced', ({ databaseId }) => heard.push(`index:${databaseId}`));
    events.publish('connection.changed', { databaseId: 'db_1' });
    expect(heard).toEqual(['pages:db_1', 'schemas:db_1']);
  });

  it('when a file with a slash in its name is replaced, then the subscriber gets its owner and whole name back', () => {
    const bus = new MemoryBus();
    const events = new DomainEvents(bus);
    const heard: unknown[] = [];
    events.subscribe('file.replaced', (file) => heard.push(file));
    events.publish('file.replaced', { userId: 'usr_1', name: 'shop/2026.sqlite' });
    bus.publish('file.replaced', 'no-owner');
    expect(heard).toEqual([{ userId: 'usr_1', name: 'shop/2026.sqlite' }]);
  });

  it('when an event is published on the bus by its topic, then a subscriber of the plain bus hears the same id', () => {
    const bus = new MemoryBus();
    const heard: string[] = [];
    bus.subscribe('index.synced', (id) => heard.push(id));
    new DomainEvents(bus).publish('index.synced', { databaseId: 'db_2' });
    expect(heard).toEqual(['db_2']);
  });
});
