import { Inject, Injectable } from '@nestjs/common';
import type { DataSource, EntityManager } from 'typeorm';
import {
  AuditEventTypes,
  DomainError,
  type ActivityChainReport,
  type VerifyActivityChainRequest,
  type AuditEventType,
} from '@kb/contracts';
import { Gate } from '@kb/platform/concurrency';
import { REPORTING_DATA_SOURCE } from '../reporting.tokens';
import { checkChain, GENESIS_HASH, type ChainBreak } from './chain-hash';
import { CHAIN_COLUMNS, type StoredChainRow } from './chain-rows';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** Records read per statement while verifying. */
const PAGE = 2000;
export const DEFAULT_VERIFY_LIMIT = 100_000;
export const MAX_VERIFY_LIMIT = 1_000_000;
/** Verifications running at once in this process (each reads and hashes up to MAX_VERIFY_LIMIT records). */
const MAX_RUNNING = 2;

/**
 * Verifies a (KB, event type) chain of the activity log: recomputes every record's hash from the
 * stored members and the previous hash, in chain order, and reports the first broken link (a record
 * altered, a record removed, or an end that is not the recorded head). A long chain is verified in
 * slices (`from_seq`, `limit`), each resuming from the hash of the record before it.
 */
@Injectable()
export class ChainVerifyService {
  /** At most MAX_RUNNING verifications at once, none waiting: the next is refused with 429. */
  private readonly running = new Gate(MAX_RUNNING, {
    maxWaiting: 0,
    refuse: () => DomainError.rateLimited('Another verification is running: try again when it has finished', 5),
  });

  constructor(@Inject(REPORTING_DATA_SOURCE) private readonly ds: DataSource) {}

  async verify(req: VerifyActivityChainRequest): Promise<ActivityChainReport> {
    const type = req.event_type.toLowerCase() as AuditEventType;
    const issues = [];
    if (!AuditEventTypes.includes(type))
      issues.push({ loc: ['path', 'event_type'], msg: `Input should be ${AuditEventTypes.map((t) => `'${t}'`).join(', ')}`, type: 'enum' });
    const from = req.from_seq ?? 1;
    const limit = req.limit ?? DEFAULT_VERIFY_LIMIT;
    if (!Number.isInteger(from) || from < 1)
      issues.push({ loc: ['query', 'from_seq'], msg: 'Input should be an integer of at least 1', type: 'greater_than_equal' });
    if (!Number.isInteger(limit) || limit < 1 || limit > MAX_VERIFY_LIMIT)
      issues.push({ loc: ['query', 'limit'], msg: `Input should be an integer from 1 to ${MAX_VERIFY_LIMIT}`, type: 'value_error' });
    if (issues.length > 0) throw DomainError.validation(issues);
    const empty: ActivityChainReport = {
      kbid: req.kbid,
      event_type: type,
      from_seq: from,
      verified: 0,
      last: null,
      head: null,
      unsealed: 0,
      broken: null,
      next_seq: null,
    };
    if (!UUID.test(req.kbid)) return empty;
    // One snapshot: read at different moments, a seal committing in between would show records the head does not name yet.
    return this.running.run(() =>
      this.ds.transaction('REPEATABLE READ', (m) => this.run(m, req.kbid.toLowerCase(), type, from, limit, empty)),
    );
  }

  private async run(
    m: EntityManager,
    kbid: string,
    type: string,
    from: number,
    limit: number,
    report: ActivityChainReport,
  ): Promise<ActivityChainReport> {
    const [head] = (await m.query(`SELECT seq, hash FROM reporting.activity_chain_heads WHERE kbid = $1 AND type = $2`, [kbid, type])) as {
      seq: string;
      hash: string;
    }[];
    const [pending] = (await m.query(
      `SELECT count(*)::int AS n FROM reporting.activity_events WHERE kbid = $1 AND type = $2 AND chain_seq IS NULL`,
      [kbid, type],
    )) as { n: number }[];
    report.head = head ? { seq: Number(head.seq), hash: head.hash } : null;
    report.unsealed = pending?.n ?? 0;
    let previous = { seq: from - 1, hash: GENESIS_HASH };
    if (from > 1) {
      const [before] = (await m.query(`SELECT chain_hash FROM reporting.activity_events WHERE kbid = $1 AND type = $2 AND chain_seq = $3`, [
        kbid,
        type,
        from - 1,
      ])) as { chain_hash: string }[];
      if (!before) return { ...report, broken: { seq: from - 1, reason: 'missing_record' } };
      previous = { seq: from - 1, hash: before.chain_hash };
    }
    const end = from + limit - 1;
    while (previous.seq < end) {
      const rows: (StoredChainRow & { chain_seq: number; chain_hash: string })[] = await m.query(
        `SELECT ${CHAIN_COLUMNS}, e.chain_seq::float8 AS chain_seq, e.chain_hash FROM reporting.activity_events e
          WHERE e.kbid = $1 AND e.type = $2 AND e.chain_seq > $3 AND e.chain_seq <= $4 ORDER BY e.chain_seq LIMIT ${PAGE}`,
        [kbid, type, previous.seq, end],
      );
      const check = checkChain(rows, previous);
      report.verified += check.verified;
      if (check.last) report.last = check.last;
      if (check.broken) return { ...report, broken: check.broken };
      if (rows.length < PAGE) break;
      previous = check.last ?? previous;
    }
    const reached = report.last ?? (from === 1 ? null : previous);
    // The slice ended before the head: say where the next one starts.
    if (report.head && reached && reached.seq < report.head.seq) {
      if (reached.seq >= end) return { ...report, next_seq: reached.seq + 1 };
      return { ...report, broken: { seq: reached.seq + 1, reason: 'missing_record' } };
    }
    const mismatch: ChainBreak | null = headMismatch(report.head, reached);
    return { ...report, broken: mismatch };
  }
}

/** The chain must end where its recorded head says: a removed last record (or a head rewritten) shows here. */
function headMismatch(head: { seq: number; hash: string } | null, reached: { seq: number; hash: string } | null): ChainBreak | null {
  if (!head) return reached ? { seq: reached.seq, reason: 'head_mismatch' } : null;
  if (!reached) return { seq: 1, reason: 'missing_record' };
  if (reached.seq !== head.seq || reached.hash !== head.hash) return { seq: Math.min(reached.seq, head.seq), reason: 'head_mismatch' };
  return null;
}
