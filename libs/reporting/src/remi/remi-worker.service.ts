import { Inject, Injectable, Logger, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import { BUILTIN_SEMANTIC_MODEL, UnderstandingSubjects } from '@kb/contracts';
import { MESSAGE_BUS, type MessageBus } from '@kb/platform/messaging';
import { REPORTING_DATA_SOURCE, REPORTING_OPTIONS, type ReportingOptions } from '../reporting.tokens';
import { RemiJudgeClient } from './remi-judge.client';
import { scoreRemi, type EmbedTexts, type RemiInput, type RemiScores } from './remi-scorer';

/** The built-in semantic model (libs/understanding USE-lite), asked for by name: a KB without it is scored lexically. */
const BUILT_IN_VECTORSET = BUILTIN_SEMANTIC_MODEL;
/** Records scored per turn. */
const BATCH = 20;
/** Records with ids this far below the cursor are looked at again: ids are taken before their insert commits, so commits may land out of order. */
const LOOKBACK = 500;
/** Lease of the cursor while one process scores a batch (a crashed holder frees it by expiry); longer when judge calls may run to their time limit. */
const LEASE_SECONDS = 120;
/** Characters of a text sent to the model (it reads the head of longer texts anyway). */
const EMBED_CHARS = 2000;

/** Activity `status` codes (spec 6.1) as REMi statuses. */
export function remiStatus(code: unknown): 'SUCCESS' | 'ERROR' | 'NO_CONTEXT' {
  if (code === -1 || code === '-1') return 'ERROR';
  if (code === -2 || code === -3 || code === '-2' || code === '-3') return 'NO_CONTEXT';
  return 'SUCCESS';
}

interface ChatRow {
  id: string;
  kbid: string;
  date: string;
  details: Record<string, unknown>;
}

/** What the scorer reads of a stored chat record; context given as keys only (failed answers) has no text to score. */
export function remiInput(details: Record<string, unknown>): RemiInput & { status: ReturnType<typeof remiStatus> } {
  const status = remiStatus(details['status']);
  const context = (Array.isArray(details['retrieved_context']) ? details['retrieved_context'] : [])
    .filter(
      (c): c is { key: unknown; text: string } => typeof c === 'object' && c !== null && typeof (c as { text?: unknown }).text === 'string',
    )
    .map((c) => ({ key: String(c.key), text: c.text }));
  return {
    question: typeof details['question'] === 'string' ? details['question'] : '',
    answer: typeof details['answer'] === 'string' ? details['answer'] : '',
    context,
    noContext: status === 'NO_CONTEXT',
    status,
  };
}

/**
 * Scores `/ask` answers after the fact (docs/remi.md): polls the activity log for chat records it
 * has not scored, past a cursor shared by the reporting processes (one holds its lease at a
 * time), and stores their REMi scores. `/ask` never waits on it; a record is scored within about a
 * poll interval of being stored, longer under a backlog.
 */
@Injectable()
export class RemiWorkerService implements OnModuleInit, OnModuleDestroy {
  private readonly logger = new Logger('RemiWorker');
  private timer?: NodeJS.Timeout;
  private running?: Promise<void>;
  private stopped = false;
  private readonly judge: RemiJudgeClient;
  /** Records scored at once: one without the judge (as before it), the judge's concurrency with it. */
  private readonly concurrency: number;
  private readonly leaseSeconds: number;

  constructor(
    @Inject(REPORTING_DATA_SOURCE) private readonly ds: DataSource,
    @Inject(REPORTING_OPTIONS) private readonly options: ReportingOptions,
    @Inject(MESSAGE_BUS) private readonly bus: MessageBus,
  ) {
    this.judge = new RemiJudgeClient(bus, options);
    this.concurrency = options.remiJudge ? Math.max(1, options.remiJudgeConcurrency) : 1;
    // A batch of judge calls that each run to the time limit must not outlast the lease.
    this.leaseSeconds = options.remiJudge
      ? Math.max(LEASE_SECONDS, Math.ceil(BATCH / this.concurrency) * Math.ceil(options.remiJudgeTimeoutMs / 1000) + 60)
      : LEASE_SECONDS;
  }

  onModuleInit(): void {
    if (this.options.remiPollMs > 0) this.schedule();
  }

  async onModuleDestroy(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await this.running;
  }

  private schedule(delay = this.options.remiPollMs): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.running = this.turn()
        .then((full) => this.schedule(full ? 0 : undefined))
        .catch((err: unknown) => {
          this.logger.warn(`REMi scoring failed: ${(err as Error).message}`);
          this.schedule();
        });
    }, delay);
    this.timer.unref();
  }

  /** One batch; true when it was full (more may be waiting). */
  async turn(): Promise<boolean> {
    // Idle turns are one read: the lease (a write) is taken only when there is something to score.
    const [probe] = (await this.ds.query(
      `SELECT EXISTS (SELECT 1 FROM reporting.activity_events e, reporting.remi_cursor c
                       WHERE e.type = 'chat' AND e.id > c.last_row - ${LOOKBACK} AND NOT EXISTS (SELECT 1 FROM reporting.remi_scores s WHERE s.event_row = e.id)) AS pending`,
    )) as { pending: boolean }[];
    if (!probe?.pending) return false;
    // TypeORM answers an UPDATE … RETURNING on PostgreSQL with [rows, affected].
    const leased: [{ last_row: string }[], number] = await this.ds.query(
      `UPDATE reporting.remi_cursor SET lease_until = now() + interval '${this.leaseSeconds} seconds' WHERE lease_until < now() RETURNING last_row`,
    );
    const lease = leased[0];
    if (!lease?.[0]) return false;
    let last = Number(lease[0].last_row);
    try {
      const rows: ChatRow[] = await this.ds.query(
        `SELECT e.id, e.kbid, e.date::text AS date, e.details FROM reporting.activity_events e
          WHERE e.type = 'chat' AND e.id > $1 AND NOT EXISTS (SELECT 1 FROM reporting.remi_scores s WHERE s.event_row = e.id)
          ORDER BY e.id LIMIT ${BATCH}`,
        [Math.max(0, last - LOOKBACK)],
      );
      // `concurrency` records at a time (judge calls wait on a provider); the cursor moves past the
      // highest scored one: any left behind are within the look-back and found next turn.
      let next = 0;
      const lane = async (): Promise<void> => {
        while (next < rows.length && !this.stopped) {
          const row = rows[next++] as ChatRow;
          await this.score(row);
          last = Math.max(last, Number(row.id));
        }
      };
      await Promise.all(Array.from({ length: Math.min(this.concurrency, rows.length) }, lane));
      return rows.length === BATCH;
    } finally {
      await this.ds.query(`UPDATE reporting.remi_cursor SET last_row = GREATEST(last_row, $1), lease_until = '-infinity'`, [last]);
    }
  }

  private async score(row: ChatRow): Promise<void> {
    const input = remiInput(row.details ?? {});
    const judged = await this.judge.judge(row.kbid, input);
    const { scores, scorer } = judged.kind === 'judged' ? judged : await this.offline(row.kbid, input);
    const judgeError = judged.kind === 'offline' ? judged.error : null;
    const avg = (xs: number[]) => (xs.length ? xs.reduce((s, x) => s + x, 0) / xs.length : null);
    const ctx = scores.context_relevance;
    await this.ds.query(
      `INSERT INTO reporting.remi_scores (event_row, kbid, date, status, answer_relevance, answer_reason, context_relevance, groundedness, context_avg, context_min, context_max, groundedness_avg, scorer, judge_error)
       SELECT $1::bigint, $2::uuid, $3::timestamptz, $4::text, $5::smallint, $6::text, ARRAY(SELECT jsonb_array_elements_text($7::jsonb)::smallint), ARRAY(SELECT jsonb_array_elements_text($8::jsonb)::smallint),
              $9::real, $10::real, $11::real, $12::real, $13::text, $14::text
        -- The KB was deleted while the answer was being scored: its scores went with it.
        WHERE NOT EXISTS (SELECT 1 FROM reporting.deleted_kbs d WHERE d.kbid = $2::uuid)
       ON CONFLICT (event_row) DO NOTHING`,
      [
        row.id,
        row.kbid,
        row.date,
        input.status,
        scores.answer_relevance.score,
        scores.answer_relevance.reason,
        JSON.stringify(ctx),
        JSON.stringify(scores.groundedness),
        avg(ctx),
        ctx.length ? Math.min(...ctx) : null,
        ctx.length ? Math.max(...ctx) : null,
        avg(scores.groundedness),
        scorer,
        judgeError,
      ],
    );
  }

  /** The offline scorer: with the built-in model's vectors when the KB has that model, else lexical support alone. */
  private async offline(kbid: string, input: RemiInput): Promise<{ scores: RemiScores; scorer: string }> {
    const embed = this.options.remiSemantic ? this.embedder(kbid) : undefined;
    let scorer = embed ? `offline:${BUILT_IN_VECTORSET}` : 'offline:lexical';
    const scores = await scoreRemi(
      input,
      embed
        ? async (texts) => {
            const out = await embed(texts);
            if (!out) scorer = 'offline:lexical';
            return out;
          }
        : undefined,
    );
    return { scores, scorer };
  }

  /** Vectors of the built-in model through the understanding service; null (lexical only) when the KB has no such model or the call fails. */
  private embedder(kbid: string): EmbedTexts {
    return async (texts) => {
      try {
        const res = await Promise.all(
          texts.map((t) =>
            this.bus.request(UnderstandingSubjects.embedQuery, {
              kbid,
              text: t.slice(0, EMBED_CHARS) || ' ',
              vectorset: BUILT_IN_VECTORSET,
              // Scoring waits behind the queries people are waiting for.
              background: true,
            }),
          ),
        );
        return res.map((r) => r.vector);
      } catch {
        return null;
      }
    };
  }
}
