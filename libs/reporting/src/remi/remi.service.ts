import { Inject, Injectable } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import {
  DomainError,
  ErrorCodes,
  type RemiEventRequest,
  type RemiEventResponse,
  type RemiQueryRequest,
  type RemiQueryResponse,
  type RemiScoresRequest,
  type RemiScoresResponse,
} from '@kb/contracts';
import { REPORTING_DATA_SOURCE } from '../reporting.tokens';
import { parseRemiRange, remiQueryOf } from './remi-query';
import { remiStatus } from './remi-worker.service';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const ROW_ID = /^\d{1,18}$/;

const SCORES = `s.answer_relevance, s.answer_reason, to_jsonb(s.context_relevance) AS context_relevance, to_jsonb(s.groundedness) AS groundedness`;

interface ScoreRow {
  answer_relevance: number;
  answer_reason: string;
  context_relevance: number[];
  groundedness: number[];
}

const remiOf = (r: ScoreRow) => ({
  answer_relevance: { score: Number(r.answer_relevance), reason: r.answer_reason },
  context_relevance: (r.context_relevance ?? []).map(Number),
  groundedness: (r.groundedness ?? []).map(Number),
});
const str = (v: unknown): string => (typeof v === 'string' ? v : '');

/** Query Rag Requests By Scores, Aggregated Remi Scores Across Time and one scored request (spec 4.4, docs/remi.md). */
@Injectable()
export class RemiService {
  constructor(@Inject(REPORTING_DATA_SOURCE) private readonly ds: DataSource) {}

  async query(req: RemiQueryRequest): Promise<RemiQueryResponse> {
    const q = remiQueryOf(req.body);
    if (!UUID.test(req.kbid)) return { data: [], has_more: false };
    const params: unknown[] = [req.kbid, q.from, q.to];
    const add = (v: unknown) => `$${params.push(v)}`;
    const where = ['s.kbid = $1::uuid', 's.date >= $2::timestamptz', 's.date < $3::timestamptz'];
    if (q.context) where.push(`s.${q.context.column} ${q.context.op} ${add(q.context.value)}`);
    if (q.status) where.push(`s.status = ${add(q.status)}`);
    if (q.feedbackGood !== undefined) where.push(`(e.feedback ->> 'good') = ${add(String(q.feedbackGood))}`);
    if (q.startingAfter !== undefined) where.push(`s.event_row > ${add(q.startingAfter)}`);
    const rows: (ScoreRow & { id: string; details: Record<string, unknown> })[] = await this.ds.query(
      `SELECT s.event_row AS id, e.details, ${SCORES}
         FROM reporting.remi_scores s
         JOIN reporting.activity_events e ON e.id = s.event_row AND e.date = s.date AND e.type = 'chat' AND e.date >= $2::timestamptz AND e.date < $3::timestamptz
        WHERE ${where.join(' AND ')}
        ORDER BY s.event_row LIMIT ${q.limit + 1}`,
      params,
    );
    return {
      data: rows
        .slice(0, q.limit)
        .map((r) => ({ id: Number(r.id), question: str(r.details?.['question']), answer: str(r.details?.['answer']), remi: remiOf(r) })),
      has_more: rows.length > q.limit,
    };
  }

  async scores(req: RemiScoresRequest): Promise<RemiScoresResponse> {
    const range = parseRemiRange(req.aggregation, req.from, req.to);
    if (!UUID.test(req.kbid)) return [];
    const rows: Record<string, unknown>[] = await this.ds.query(
      `SELECT to_char(date_trunc($4, s.date AT TIME ZONE 'UTC'), 'YYYY-MM-DD"T"HH24:MI:SS"Z"') AS bucket,
              min(s.answer_relevance) AS ar_min, max(s.answer_relevance) AS ar_max, avg(s.answer_relevance) AS ar_avg,
              min(s.context_avg) AS cr_min, max(s.context_avg) AS cr_max, avg(s.context_avg) AS cr_avg,
              min(s.groundedness_avg) AS g_min, max(s.groundedness_avg) AS g_max, avg(s.groundedness_avg) AS g_avg
         FROM reporting.remi_scores s
        WHERE s.kbid = $1::uuid AND s.date >= $2::timestamptz AND s.date < $3::timestamptz
        GROUP BY 1 ORDER BY 1`,
      [req.kbid, range.from, range.to, range.aggregation],
    );
    const num = (v: unknown) => (v === null || v === undefined ? null : Math.round(Number(v) * 1000) / 1000);
    return rows.map((r) => ({
      timestamp: new Date(String(r['bucket'])).toISOString(),
      metrics: [
        { name: 'answer_relevance', min: num(r['ar_min']), max: num(r['ar_max']), average: num(r['ar_avg']) },
        { name: 'context_relevance', min: num(r['cr_min']), max: num(r['cr_max']), average: num(r['cr_avg']) },
        { name: 'groundedness', min: num(r['g_min']), max: num(r['g_max']), average: num(r['g_avg']) },
      ],
    }));
  }

  async event(req: RemiEventRequest): Promise<RemiEventResponse> {
    const missing = () => DomainError.notFound(ErrorCodes.NOT_FOUND, `No scored request ${req.event_id} in this knowledge box`);
    if (!UUID.test(req.kbid) || !ROW_ID.test(req.event_id)) throw missing();
    const rows: (ScoreRow & {
      id: string;
      date: string;
      status: string;
      scorer: string;
      judge_error: string | null;
      details: Record<string, unknown>;
      feedback: Record<string, unknown> | null;
    })[] = await this.ds.query(
      `SELECT s.event_row AS id, s.date, s.status, s.scorer, s.judge_error, e.details, e.feedback, ${SCORES}
         FROM reporting.remi_scores s JOIN reporting.activity_events e ON e.id = s.event_row AND e.date = s.date AND e.type = 'chat'
        WHERE s.kbid = $1::uuid AND s.event_row = $2`,
      [req.kbid, req.event_id],
    );
    const r = rows[0];
    if (!r) throw missing();
    const d = r.details ?? {};
    const remi = remiOf(r);
    const pieces = (Array.isArray(d['retrieved_context']) ? d['retrieved_context'] : []) as unknown[];
    let scored = 0;
    const context = pieces.map((c) => {
      if (typeof c === 'object' && c !== null && typeof (c as { text?: unknown }).text === 'string') {
        const cr = remi.context_relevance[scored++] ?? null;
        return { key: String((c as { key?: unknown }).key), text: (c as { text: string }).text, context_relevance: cr };
      }
      return { key: String(c), text: '', context_relevance: null };
    });
    return {
      id: Number(r.id),
      date: new Date(r.date).toISOString(),
      status: remiStatus(d['status']),
      question: str(d['question']),
      rephrased_question: typeof d['rephrased_question'] === 'string' ? d['rephrased_question'] : null,
      answer: str(d['answer']),
      model: typeof d['model'] === 'string' ? d['model'] : null,
      chat_history: Array.isArray(d['chat_history']) ? d['chat_history'] : [],
      feedback: r.feedback ?? null,
      context,
      remi,
      scorer: r.scorer,
      judge_error: r.judge_error ?? null,
    };
  }
}
