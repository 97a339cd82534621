import { createHash } from 'node:crypto';

/** The hash before a chain's first record: each (KB, event type) chain starts from it. */
export const GENESIS_HASH = '0'.repeat(64);

/** The members of an activity record that its chain hash covers (feedback, merged in later, is not one). */
export interface ChainRecord {
  event_id: string;
  kbid: string;
  type: string;
  date: string | Date;
  user_id?: string | null;
  user_type?: string | null;
  client_type?: string | null;
  total_duration?: number | null;
  resource_id?: string | null;
  audit_metadata?: unknown;
  details?: unknown;
  learning_id?: string | null;
}

/** JSON with object members in code-point order at every depth: the same value always gives the same text. */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value ?? null);
  if (Array.isArray(value)) return `[${value.map((v) => canonicalJson(v === undefined ? null : v)).join(',')}]`;
  const entries = Object.entries(value as Record<string, unknown>)
    .filter(([, v]) => v !== undefined)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
}

/** The text a record contributes to its chain: its position and every member it was stored with. */
export function chainText(seq: number, r: ChainRecord): string {
  return canonicalJson({
    seq,
    event_id: r.event_id,
    kbid: r.kbid,
    type: r.type,
    date: new Date(r.date).toISOString(),
    user_id: r.user_id ?? null,
    user_type: r.user_type ?? null,
    client_type: r.client_type ?? null,
    total_duration: r.total_duration ?? null,
    resource_id: r.resource_id ?? null,
    audit_metadata: r.audit_metadata ?? {},
    details: r.details ?? {},
    learning_id: r.learning_id ?? null,
  });
}

/** SHA-256 (hex) of the previous record's hash, a newline and this record's text. */
export function chainHash(previous: string, seq: number, r: ChainRecord): string {
  return createHash('sha256').update(previous).update('\n').update(chainText(seq, r)).digest('hex');
}

export type ChainBreak = { seq: number; event_id?: string; reason: 'hash_mismatch' | 'missing_record' | 'head_mismatch' };

export interface ChainCheck {
  /** Records whose hash was recomputed and matched, in order, before any break. */
  verified: number;
  last: { seq: number; hash: string } | null;
  broken: ChainBreak | null;
}

/**
 * Checks records of one chain in `chain_seq` order, starting after `previous` (the genesis, or the
 * record before the first one given): each must be the next position and hash to what it carries.
 * Stops at the first break. Used online (the verify route) and offline (an exported log).
 */
export function checkChain(
  records: Iterable<ChainRecord & { chain_seq: number; chain_hash: string }>,
  previous: { seq: number; hash: string },
): ChainCheck {
  let verified = 0;
  let last: { seq: number; hash: string } | null = null;
  let prev = previous;
  for (const r of records) {
    const seq = Number(r.chain_seq);
    if (seq !== prev.seq + 1) return { verified, last, broken: { seq: prev.seq + 1, reason: 'missing_record' } };
    if (chainHash(prev.hash, seq, r) !== r.chain_hash)
      return { verified, last, broken: { seq, event_id: r.event_id, reason: 'hash_mismatch' } };
    verified++;
    prev = last = { seq, hash: r.chain_hash };
  }
  return { verified, last, broken: null };
}
