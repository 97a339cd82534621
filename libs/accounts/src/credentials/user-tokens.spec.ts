import { signUserToken, verifyUserToken } from './user-tokens';

describe('user tokens', () => {
  it('round-trips and rejects tampering, other secrets and expiry', async () => {
    const { token, id } = await signUserToken('s1', 'user-1', 60);
    expect(await verifyUserToken('s1', token)).toEqual({ userId: 'user-1', id, expires: expect.any(Date) });
    expect(await verifyUserToken('s2', token)).toBeNull();
    expect(await verifyUserToken('s1', token.slice(0, -2) + 'xx')).toBeNull();
    const expired = await signUserToken('s1', 'user-1', -10);
    expect(await verifyUserToken('s1', expired.token)).toBeNull();
  });
});
