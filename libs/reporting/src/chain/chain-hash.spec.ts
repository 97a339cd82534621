import { canonicalJson, chainHash, checkChain, GENESIS_HASH } from './chain-hash';

describe('activity chain hashes', () => {
  it('write JSON with members in one order at every depth, arrays as they are', () => {
    expect(canonicalJson({ b: 1, a: { d: [3, { z: 1, y: 2 }], c: null } })).toBe('{"a":{"c":null,"d":[3,{"y":2,"z":1}]},"b":1}');
    expect(canonicalJson({ a: undefined, b: 'x' })).toBe('{"b":"x"}');
  });

  it('link each record to the one before it', () => {
    const r = { event_id: 'e1', kbid: 'k', type: 'visited', date: '2026-11-03T10:00:00Z' };
    const h1 = chainHash(GENESIS_HASH, 1, r);
    expect(h1).toMatch(/^[0-9a-f]{64}$/);
    expect(chainHash(GENESIS_HASH, 1, { ...r, date: new Date('2026-11-03T10:00:00.000Z') })).toBe(h1); // the same instant
    expect(chainHash(GENESIS_HASH, 2, r)).not.toBe(h1); // another position
    expect(chainHash(h1, 1, r)).not.toBe(h1); // another predecessor
    const h2 = chainHash(h1, 2, { ...r, event_id: 'e2' });
    const chain = [
      { ...r, chain_seq: 1, chain_hash: h1 },
      { ...r, event_id: 'e2', chain_seq: 2, chain_hash: h2 },
    ];
    expect(checkChain(chain, { seq: 0, hash: GENESIS_HASH })).toEqual({ verified: 2, last: { seq: 2, hash: h2 }, broken: null });
    expect(checkChain([chain[1]!], { seq: 0, hash: GENESIS_HASH }).broken).toEqual({ seq: 1, reason: 'missing_record' });
    expect(checkChain([{ ...chain[0]!, resource_id: 'r9' }], { seq: 0, hash: GENESIS_HASH }).broken).toEqual({
      seq: 1,
      event_id: 'e1',
      reason: 'hash_mismatch',
    });
  });
});
