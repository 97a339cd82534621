import { generatePassword, hashPassword, issueSecret, parseToken, secretMatches, verifyPassword } from './secret-tokens';

describe('secret tokens', () => {
  const pepper = 'test-pepper';

  it('issues a token whose secret matches only its own hash', () => {
    const issued = issueSecret('api_key', pepper);
    const parsed = parseToken(issued.token);
    expect(parsed).toEqual({ kind: 'api_key', id: issued.id, secret: expect.any(String) });
    expect(secretMatches(parsed!.secret, issued.salt, issued.hash, pepper)).toBe(true);
    expect(secretMatches(parsed!.secret, issued.salt, issued.hash, 'other-pepper')).toBe(false);
    expect(
      secretMatches(
        parsed!.secret.replace(/.$/, (c) => (c === 'A' ? 'B' : 'A')),
        issued.salt,
        issued.hash,
        pepper,
      ),
    ).toBe(false);
    expect(issued.hash).not.toContain(parsed!.secret);
  });

  it.each(['', 'kbk_', 'Bearer x', 'kbk_zz_abc', 'kbx_' + 'a'.repeat(32) + '_' + 'b'.repeat(43)])('rejects malformed token %j', (t) => {
    expect(parseToken(t)).toBeNull();
  });

  it('hashes passwords with scrypt and verifies them', async () => {
    const password = generatePassword();
    const stored = await hashPassword(password);
    expect(stored.startsWith('scrypt$')).toBe(true);
    expect(stored).not.toContain(password);
    expect(await verifyPassword(password, stored)).toBe(true);
    expect(await verifyPassword(password + 'x', stored)).toBe(false);
    expect(await verifyPassword(password, 'garbage')).toBe(false);
  });
});
