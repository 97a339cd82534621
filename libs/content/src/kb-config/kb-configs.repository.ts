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

  /** Every saved configuration of a KB (an export), oldest first within each kind. */
  async all(kbid: string): Promise<{ kind: KbConfigKind; id: string; body: unknown }[]> {
    return (await this.ds.query(`SELECT kind, id, body FROM content.kb_configs WHERE kbid = $1 ORDER BY kind, created_at, id`, [kbid])) as {
      kind: KbConfigKind;
      id: string;
      body: unknown;
    }[];
  }

  /** How many of each kind a KB keeps, not counting `except` (the ids an import replaces). */
  async countsExcept(kbid: string, except: { kind: KbConfigKind; id: string }[]): Promise<Map<KbConfigKind, number>> {
    const rows = (await this.ds.query(
      `SELECT kind, count(*)::int AS n FROM content.kb_configs c
        WHERE kbid = $1 AND NOT EXISTS (SELECT 1 FROM jsonb_to_recordset($2::jsonb) AS x(kind text, id text) WHERE x.kind = c.kind AND x.id = c.id)
        GROUP BY kind`,
      [kbid, JSON.stringify(except.map((e) => ({ kind: e.kind, id: e.id })))],
    )) as { kind: KbConfigKind; n: number }[];
    return new Map(rows.map((r) => [r.kind, r.n]));
  }

  /**
   * Writes several at once (an import), replacing those of the same kind and id, in one
   * transaction under the per-kind locks; `max` bounds each kind after the write (422 otherwise,
   * nothing written). Returns the ones that did not exist before.
   */
  async upsertMany(
    kbid: string,
    rows: { kind: KbConfigKind; id: string; body: unknown }[],
    max: (kind: KbConfigKind) => number,
  ): Promise<{ kind: KbConfigKind; id: string }[]> {
    if (rows.length === 0) return [];
    return this.ds.transaction(async (m) => {
      const kinds = [...new Set(rows.map((r) => r.kind))].sort();
      for (const kind of kinds) await m.query(`SELECT pg_advisory_xact_lock(hashtext($1))`, [`kb_configs:${kbid}:${kind}`]);
      const created: { kind: KbConfigKind; id: string }[] = [];
      for (const r of rows) {
        const [row] = (await m.query(
          `INSERT INTO content.kb_configs (kbid, kind, id, body) VALUES ($1, $2, $3, $4::jsonb)
           ON CONFLICT (kbid, kind, id) DO UPDATE SET body = EXCLUDED.body, modified_at = now()
           RETURNING (xmax = 0) AS inserted`,
          [kbid, r.kind, r.id, JSON.stringify(r.body)],
        )) as { inserted: boolean }[];
        if (row?.inserted) created.push({ kind: r.kind, id: r.id });
      }
      for (const kind of kinds) {
        const [{ n }] = (await m.query(`SELECT count(*)::int AS n FROM content.kb_configs WHERE kbid = $1 AND kind = $2`, [
          kbid,
          kind,
        ])) as [{ n: number }];
        if (n > max(kind))
          throw DomainError.validation([
            { loc: ['body'], msg: `A Knowledge Box keeps at most ${max(kind)} ${kind} configurations`, type: 'too_long' },
          ]);
      }
      return created;
    });
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
