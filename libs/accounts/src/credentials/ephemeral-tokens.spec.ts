import { signEphemeralToken, verifyEphemeralToken } from './ephemeral-tokens';
import { signTemporalKey, verifyTemporalKey } from './temporal-keys';
import { signUserToken, verifyUserToken } from './user-tokens';

const SECRET = 's'.repeat(64);
const KB = '0b6f6a4e-5a43-4c51-9d8c-2f1b7d2f4e10';

describe('ephemeral tokens', () => {
  it('carry their KB and maker, and verify with the server secret only', async () => {
    const token = await signEphemeralToken(SECRET, { kbid: KB, owner: { kind: 'user', id: 'u-1' } }, 300, 'tab-1');
    const claims = await verifyEphemeralToken(SECRET, token);
    expect(claims).toMatchObject({ kbid: KB, owner: { kind: 'user', id: 'u-1' }, id: expect.any(String) });
    expect((claims?.expires.getTime() ?? 0) - Date.now()).toBeGreaterThan(290_000);
    expect(await verifyEphemeralToken('t'.repeat(64), token)).toBeNull();
    const key = await signEphemeralToken(SECRET, { kbid: KB, owner: { kind: 'api_key', id: 'k-1' } }, 60);
    expect((await verifyEphemeralToken(SECRET, key))?.owner).toEqual({ kind: 'api_key', id: 'k-1' });
  });

  it('are refused once expired, and when tampered with', async () => {
    const expired = await signEphemeralToken(SECRET, { kbid: KB, owner: { kind: 'user', id: 'u-1' } }, -1);
    expect(await verifyEphemeralToken(SECRET, expired)).toBeNull();
    const token = await signEphemeralToken(SECRET, { kbid: KB, owner: { kind: 'user', id: 'u-1' } }, 300);
    const [h, p, s] = token.split('.') as [string, string, string];
    const forged = Buffer.from(
      JSON.stringify({ ...JSON.parse(Buffer.from(p, 'base64url').toString()), kb: '99999999-9999-4999-8999-999999999999' }),
    ).toString('base64url');
    expect(await verifyEphemeralToken(SECRET, `${h}.${forged}.${s}`)).toBeNull();
  });

  it('are no other kind of token, and no other kind is one', async () => {
    const eph = await signEphemeralToken(SECRET, { kbid: KB, owner: { kind: 'user', id: 'u-1' } }, 300);
    expect(await verifyUserToken(SECRET, eph)).toBeNull();
    expect(await verifyTemporalKey(SECRET, eph)).toBeNull();
    expect(await verifyEphemeralToken(SECRET, (await signUserToken(SECRET, 'u-1', 300)).token)).toBeNull();
    expect(await verifyEphemeralToken(SECRET, await signTemporalKey(SECRET, 'k-1', 10))).toBeNull();
  });
});
