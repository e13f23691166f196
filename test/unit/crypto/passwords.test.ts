import { describe, expect, it } from 'vitest';
import { hashPassword, passwordProblem, verifyPassword } from '../../../src/crypto/passwords.js';

describe('passwords', () => {
  it('when hashed, then scrypt with a random salt, verifiable, and never the password itself', async () => {
    const a = await hashPassword('correct-horse-42');
    const b = await hashPassword('correct-horse-42');
    expect(a).toMatch(/^scrypt\$32768\$8\$1\$/);
    expect(a).not.toBe(b);
    expect(a).not.toContain('correct-horse-42');
    expect(await verifyPassword('correct-horse-42', a)).toBe(true);
    expect(await verifyPassword('correct-horse-43', a)).toBe(false);
    expect(await verifyPassword('x', 'garbage')).toBe(false);
  });

  it.each([
    ['onlyletters', 'must contain at least one letter and one digit or symbol'],
    ['1234567890', 'must contain at least one letter and one digit or symbol'],
    ['me@example.com', 'must not be the email address'],
  ])('when the password is %j, then %s', (password, problem) => {
    expect(passwordProblem(password, 'me@example.com')).toBe(problem);
  });
});
