import { Inject, Injectable } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import { DomainError, ErrorCodes } from '@kb/contracts';
import { CONTENT_DATA_SOURCE } from '../content.tokens';

/** The kinds of saved configurations, each with its own namespace of ids in a KB. */
export type KbConfigKind = 'search' | 'kv_schema' | 'split' | 'extract';

/**
 * `content.kb_configs`: one row per saved configuration of a KB (validated body as JSON). Inserts
 * take a per-KB-and-kind advisory lock, so the count bound holds under concurrent creations.
 */
@Injectable()
export class KbConfigsRepository {
  constructor(@Inject(CONTENT_DATA_SOURCE) private readonly ds: DataSource) {}

  async list<T>(kbid: string, kind: KbConfigKind, limit: number): Promise<{ id: string; body: T }[]> {
    return (await this.ds.query(
      `SELECT id, body FROM content.kb_configs WHERE kbid = $1 AND kind = $2 ORDER BY created_at, id LIMIT ${Number(limit)}`,
      [kbid, kind],
    )) as { id: string; body: T }[];
  }

  async get<T>(kbid: string, kind: KbConfigKind, id: string): Promise<T | undefined> {
    const rows = (await this.ds.query(`SELECT body FROM content.kb_configs WHERE kbid = $1 AND kind = $2 AND id = $3`, [
      kbid,
      kind,
      id,
    ])) as { body: T }[];
    return rows[0]?.body;
  }

  /** Several at once (a job naming two strategies): id → body. */
  async getMany<T>(kbid: string, kind: KbConfigKind, ids: string[]): Promise<Map<string, T>> {
    if (ids.length === 0) return new Map();
    const rows = (await this.ds.query(`SELECT id, body FROM content.kb_configs WHERE kbid = $1 AND kind = $2 AND id = ANY($3::text[])`, [
      kbid,
      kind,
      ids,
    ])) as { id: string; body: T }[];
    return new Map(rows.map((r) => [r.id, r.body]));
  }

  /**
   * Inserts a new one: 409 `conflict` when the id is taken, 422 at `tooMany.loc` when the KB
   * already keeps `max` of this kind.
   */
  async insert(
    kbid: string,
    kind: KbConfigKind,
    id: string,
    body: unknown,
    o: { max: number; tooMany: { loc: string[]; msg: string }; conflict: string },
  ): Promise<void> {
    await this.ds.transaction(async (m) => {
      await m.query(`SELECT pg_advisory_xact_lock(hashtext($1))`, [`kb_configs:${kbid}:${kind}`]);
      const [{ n, taken }] = (await m.query(
        `SELECT count(*)::int AS n, bool_or(id = $3) AS taken FROM content.kb_configs WHERE kbid = $1 AND kind = $2`,
        [kbid, kind, id],
      )) as [{ n: number; taken: boolean | null }];
      if (taken) throw new DomainError(ErrorCodes.CONFLICT, o.conflict);
      if (n >= o.max) throw DomainError.validation([{ loc: o.tooMany.loc, msg: o.tooMany.msg, type: 'too_long' }]);
      await m.query(`INSERT INTO content.kb_configs (kbid, kind, id, body) VALUES ($1, $2, $3, $4::jsonb)`, [
        kbid,
        kind,
        id,
        JSON.stringify(body),
      ]);
    });
  }

  /** Replaces an existing one's body; false when there is none. */
  async update(kbid: string, kind: KbConfigKind, id: string, body: unknown): Promise<boolean> {
    const rows = (await this.ds.query(
      `WITH u AS (UPDATE content.kb_configs SET body = $4::jsonb, modified_at = now() WHERE kbid = $1 AND kind = $2 AND id = $3 RETURNING id) SELECT id FROM u`,
      [kbid, kind, id, JSON.stringify(body)],
    )) as unknown[];
    return rows.length > 0;
  }

  /** False when there was none. */
  async delete(kbid: string, kind: KbConfigKind, id: string): Promise<boolean> {
    const rows = (await this.ds.query(
      `WITH d AS (DELETE FROM content.kb_configs WHERE kbid = $1 AND kind = $2 AND id = $3 RETURNING id) SELECT id FROM d`,
      [kbid, kind, id],
    )) as unknown[];
    return rows.length > 0;
  }
}
