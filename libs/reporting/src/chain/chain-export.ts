import { checkChain, GENESIS_HASH, type ChainBreak, type ChainRecord } from './chain-hash';

export interface ExportCheck {
  records: number;
  verified: number;
  last: { seq: number; hash: string } | null;
  broken: (ChainBreak & { line?: number }) | { reason: 'bad_line' | 'not_sealed'; line: number; seq?: number } | null;
}

/**
 * Verifies an exported activity log offline (`npm run activity:verify`): the NDJSON lines of one
 * KB's records of one event type, as the query gives them with `show` including `event_id`,
 * `details`, `chain_seq` and `chain_hash` (and the other stored members). Lines may come in any
 * order; they must be one contiguous slice of the chain, from position 1 (or from `after`, the
 * hash of the record before the slice). With `head` (the verify route's `head.hash`, kept by the
 * third party), the slice must end there.
 */
export function verifyExport(
  lines: string[],
  kbid: string,
  type: string,
  options: { after?: { seq: number; hash: string }; head?: string } = {},
): ExportCheck {
  const records: (ChainRecord & { chain_seq: number; chain_hash: string; line: number })[] = [];
  for (const [i, text] of lines.entries()) {
    if (!text.trim()) continue;
    let row: Record<string, unknown>;
    try {
      row = JSON.parse(text) as Record<string, unknown>;
    } catch {
      return { records: records.length, verified: 0, last: null, broken: { reason: 'bad_line', line: i + 1 } };
    }
    if (typeof row['chain_seq'] !== 'number' || typeof row['chain_hash'] !== 'string' || typeof row['event_id'] !== 'string') {
      return { records: records.length, verified: 0, last: null, broken: { reason: 'not_sealed', line: i + 1 } };
    }
    records.push({
      event_id: row['event_id'],
      kbid: kbid.toLowerCase(),
      type,
      date: String(row['date']),
      user_id: (row['user_id'] as string | null) ?? null,
      user_type: (row['user_type'] as string | null) ?? null,
      client_type: (row['client_type'] as string | null) ?? null,
      total_duration: (row['total_duration'] as number | null) ?? null,
      resource_id: (row['resource_id'] as string | null) ?? null,
      audit_metadata: row['audit_metadata'] ?? {},
      details: row['details'] ?? {},
      learning_id: (row['learning_id'] as string | null) ?? null,
      chain_seq: row['chain_seq'],
      chain_hash: row['chain_hash'],
      line: i + 1,
    });
  }
  records.sort((a, b) => a.chain_seq - b.chain_seq);
  const start = options.after ?? { seq: 0, hash: GENESIS_HASH };
  const check = checkChain(records, start);
  if (check.broken) {
    const line = records.find((r) => r.chain_seq === check.broken?.seq)?.line;
    return { records: records.length, verified: check.verified, last: check.last, broken: { ...check.broken, ...(line ? { line } : {}) } };
  }
  if (options.head !== undefined && check.last?.hash !== options.head) {
    return {
      records: records.length,
      verified: check.verified,
      last: check.last,
      broken: { seq: (check.last?.seq ?? start.seq) + 1, reason: 'head_mismatch' },
    };
  }
  return { records: records.length, verified: check.verified, last: check.last, broken: null };
}
