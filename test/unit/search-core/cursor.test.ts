import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { decodeCursor, encodeCursor, searchFingerprint } from '../../../src/search-core/cursor.js';

const secret = randomBytes(32);
const fingerprint = searchFingerprint({ u: 'usr_1', q: 'battery' });

describe('search cursors', () => {
  it('when a cursor is decoded for the search that made it, then it gives back the offset', () => {
    expect(decodeCursor(secret, fingerprint, encodeCursor(secret, fingerprint, 40), 1000)).toBe(40);
  });

  it('when any character changes, then the cursor is refused', () => {
    const cursor = encodeCursor(secret, fingerprint, 40);
    for (let i = 0; i < cursor.length; i += 1) {
      const changed = cursor.slice(0, i) + (cursor[i] === 'A' ? 'B' : 'A') + cursor.slice(i + 1);
      expect(decodeCursor(secret, fingerprint, changed, 1000), changed).toBeNull();
    }
  });

  it('when it is used for another search, another secret or past the bound, then it is refused', () => {
    const cursor = encodeCursor(secret, fingerprint, 40);
    expect(decodeCursor(secret, searchFingerprint({ u: 'usr_2', q: 'battery' }), cursor, 1000)).toBeNull();
    expect(decodeCursor(randomBytes(32), fingerprint, cursor, 1000)).toBeNull();
    expect(decodeCursor(secret, fingerprint, encodeCursor(secret, fingerprint, 1020), 1000)).toBeNull();
  });

  it.each(['', '.', 'a.b', 'x'.repeat(600), '{"v":1,"o":0}.AAAAAAAAAAAAAAAAAAAAAA'])('when it is garbage (%s), then it is refused', (garbage) => {
    expect(decodeCursor(secret, fingerprint, garbage, 1000)).toBeNull();
  });
});
