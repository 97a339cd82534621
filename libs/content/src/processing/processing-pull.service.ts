import { Inject, Injectable } from '@nestjs/common';
import type { DataSource, EntityManager } from 'typeorm';
import {
  DomainError,
  ErrorCodes,
  extractedBlobKey,
  type FieldType,
  type ProcessingPullRequest,
  type ProcessingPullResult,
  type PulledMessageDto,
} from '@kb/contracts';
import { BLOB_STORE, type BlobStore } from '@kb/platform/storage';
import { CONTENT_DATA_SOURCE } from '../content.tokens';

/** Messages of one pull stop growing past this many bytes of payload (one message always fits). */
const MAX_PULL_BYTES = 8 * 1024 * 1024;
const DEFAULT_TTL_S = 60;
const PENDING_COUNT_CAP = 1000;

interface CompletedRow {
  processing_id: string;
  completion_seq: string;
  kbid: string;
  rid: string;
  field_type: FieldType;
  field_id: string;
  seqid: string;
  labels: string[];
  completed_at: Date | string;
  failed: boolean;
  retries: number;
  response: string | null;
}

/**
 * The understanding API's Pull (API-MAP §1.5): the completed processing jobs of the client's KBs,
 * in completion order, each with its extracted data.
 *
 * The order is a sequence number given to a completed record only after its completion committed:
 * every pull first numbers the records completed since the last numbering, in one statement under
 * a transaction-scoped advisory lock. Numbers are therefore handed out in commit order of the
 * numbering runs, and a cursor never skips a record that commits later (which numbering at
 * completion time could, with concurrent transactions).
 *
 * v1 is stateless: the client passes the last cursor it handled. v2 keeps, per client, the last
 * acknowledged position and a lease on what it delivered: unacknowledged messages come again once
 * the lease ends, acknowledged ones never.
 */
@Injectable()
export class ProcessingPullService {
  constructor(
    @Inject(CONTENT_DATA_SOURCE) private readonly ds: DataSource,
    @Inject(BLOB_STORE) private readonly blobs: BlobStore,
  ) {}

  async pull(req: ProcessingPullRequest): Promise<ProcessingPullResult> {
    if (req.partition !== undefined && req.partition > req.partitions) {
      throw DomainError.validation([
        {
          loc: ['query', 'partition'],
          msg: `partition must be between 1 and the client's ${req.partitions} partition(s)`,
          type: 'less_than_equal',
        },
      ]);
    }
    await this.number();
    if (req.kbids.length === 0) return { messages: [], cursor: req.from_cursor ?? 0, pending: 0 };
    return req.mode === 'v1' ? this.pullV1(req) : this.pullV2(req);
  }

  /** Gives the records completed since the last run their sequence numbers, in completion order. */
  async number(): Promise<void> {
    await this.ds.transaction(async (m) => {
      await m.query(`SELECT pg_advisory_xact_lock(hashtext('content.processing_completion_seq'))`);
      await m.query(
        `UPDATE content.processing_requests r SET completion_seq = n.seq
           FROM (SELECT processing_id, nextval('content.processing_completion_seq') AS seq
                   FROM (SELECT processing_id FROM content.processing_requests
                          WHERE completion_seq IS NULL AND completed_at IS NOT NULL
                          ORDER BY completed_at, processing_id) ordered) n
          WHERE r.processing_id = n.processing_id`,
      );
    });
  }

  private async pullV1(req: ProcessingPullRequest): Promise<ProcessingPullResult> {
    const from = req.from_cursor ?? 0;
    const rows = await this.read(this.ds.manager, req, from);
    const messages = await this.messages(rows);
    const cursor = messages.length > 0 ? (messages[messages.length - 1] as PulledMessageDto).seq : from;
    return { messages, cursor, pending: await this.pending(req, cursor) };
  }

  private async pullV2(req: ProcessingPullRequest): Promise<ProcessingPullResult> {
    const ttl = req.ttl_s ?? DEFAULT_TTL_S;
    return this.ds.transaction(async (m) => {
      await m.query(`INSERT INTO content.processing_pull_consumers (consumer) VALUES ($1) ON CONFLICT (consumer) DO NOTHING`, [
        req.consumer,
      ]);
      const [state] = (await m.query(
        `SELECT acked_seq, delivered_seq, lease_until > now() AS leased FROM content.processing_pull_consumers WHERE consumer = $1 FOR UPDATE`,
        [req.consumer],
      )) as { acked_seq: string; delivered_seq: string; leased: boolean | null }[];
      let acked = Number(state?.acked_seq ?? 0);
      const delivered = Number(state?.delivered_seq ?? 0);
      // An ack names a delivered position; one beyond what was delivered is ignored, not trusted.
      for (const token of req.ack ?? []) {
        const seq = /^\d{1,18}$/.test(token) ? Number(token) : NaN;
        if (!Number.isFinite(seq))
          throw DomainError.validation([{ loc: ['body', 'ack'], msg: `Unknown ack token ${token.slice(0, 40)}`, type: 'value_error' }]);
        if (seq <= delivered && seq > acked) acked = seq;
      }
      // While the lease runs, what was delivered belongs to that delivery; after it, it comes again.
      const leased = state?.leased === true && delivered > acked;
      const from = leased ? delivered : acked;
      const rows = await this.read(m, req, from);
      const messages = await this.messages(rows);
      const last = messages.length > 0 ? (messages[messages.length - 1] as PulledMessageDto).seq : from;
      // Past an expired lease, delivery starts again from the acknowledged position.
      const nowDelivered = leased ? Math.max(last, delivered) : Math.max(last, acked);
      await m.query(
        `UPDATE content.processing_pull_consumers
            SET acked_seq = $2::bigint, delivered_seq = greatest($3::bigint, $2::bigint),
                lease_until = CASE WHEN $4::boolean THEN now() + ($5::int * interval '1 second') ELSE lease_until END
          WHERE consumer = $1`,
        [req.consumer, acked, nowDelivered, messages.length > 0, ttl],
      );
      return { messages, cursor: last, pending: await this.pending(req, last, m) };
    });
  }

  private read(m: EntityManager, req: ProcessingPullRequest, after: number): Promise<CompletedRow[]> {
    const [filter, params] = this.partitionFilter(req, 4);
    return m.query(
      `SELECT processing_id, completion_seq, kbid, rid, field_type, field_id, seqid, labels, completed_at, failed, retries, response
         FROM content.processing_requests
        WHERE kbid = ANY($1::uuid[]) AND completion_seq > $2 ${filter}
        ORDER BY completion_seq LIMIT $3`,
      [req.kbids, after, req.limit, ...params],
    );
  }

  private async pending(req: ProcessingPullRequest, after: number, m: EntityManager = this.ds.manager): Promise<number> {
    const [filter, params] = this.partitionFilter(req, 4);
    const [row] = (await m.query(
      `SELECT count(*)::int AS n FROM (SELECT 1 FROM content.processing_requests
         WHERE kbid = ANY($1::uuid[]) AND completion_seq > $2 ${filter} LIMIT $3) x`,
      [req.kbids, after, PENDING_COUNT_CAP, ...params],
    )) as { n: number }[];
    return row?.n ?? 0;
  }

  /** A resource's jobs always fall in one partition (hash of its id), so its results keep their order. */
  private partitionFilter(req: ProcessingPullRequest, next: number): [string, unknown[]] {
    if (req.partitions <= 1 || req.partition === undefined) return ['', []];
    return [`AND mod(abs(hashtext(rid::text)::bigint), $${next}) + 1 = $${next + 1}`, [req.partitions, req.partition]];
  }

  private async messages(rows: CompletedRow[]): Promise<PulledMessageDto[]> {
    const out: PulledMessageDto[] = [];
    let bytes = 0;
    for (const row of rows) {
      const payload = Buffer.from(JSON.stringify(await this.document(row)), 'utf8').toString('base64');
      if (out.length > 0 && bytes + payload.length > MAX_PULL_BYTES) break;
      bytes += payload.length;
      const seq = Number(row.completion_seq);
      out.push({ seq, processing_id: row.processing_id, payload, ack_token: String(seq) });
    }
    return out;
  }

  /** The message document: the job's record, and its extracted data unless a newer write replaced it. */
  private async document(row: CompletedRow): Promise<Record<string, unknown>> {
    const seqid = Number(row.seqid);
    const ids = { kbid: row.kbid, rid: row.rid, field_type: row.field_type, field_id: row.field_id, seqid };
    let extracted: unknown = null;
    let superseded = false;
    if (!row.failed) {
      try {
        const got = await this.blobs.get(extractedBlobKey(ids));
        const chunks: Buffer[] = [];
        for await (const c of got.body) chunks.push(c as Buffer);
        extracted = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      } catch (err) {
        if (!(err instanceof DomainError && err.code === ErrorCodes.NOT_FOUND)) throw err;
        superseded = true;
      }
    }
    const [code, ...rest] = (row.response ?? '').split(': ');
    return {
      processing_id: row.processing_id,
      kbid: row.kbid,
      resource_id: row.rid,
      field: { type: row.field_type, id: row.field_id },
      seqid,
      status: row.failed ? 'ERROR' : 'PROCESSED',
      completed_at: new Date(row.completed_at).toISOString(),
      retries: row.retries,
      labels: row.labels,
      error: row.failed ? { code_str: code ?? '', body: rest.join(': ') } : null,
      extracted,
      ...(superseded ? { superseded: true } : {}),
    };
  }
}
