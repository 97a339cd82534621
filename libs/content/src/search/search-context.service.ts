import { Inject, Injectable } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import { UnderstandingSubjects, decodeFloat32, type EmbedQueryResponse, type FilterExpressionOf, type KvCondition } from '@kb/contracts';
import { MESSAGE_BUS, type MessageBus } from '@kb/platform/messaging';
import { CONTENT_DATA_SOURCE } from '../content.tokens';
import { kvExpressionSql } from './query/kv-filter';
import { SqlParams } from './query/sql';

/** Resources a key_value filter may select for the memory index to filter by id; more go to SQL. */
export const KV_MEMORY_MAX_RESOURCES = 10_000;

interface Cached<T> {
  value: T;
  until: number;
}

const TTL_MS = 5_000;

/**
 * What every query needs besides its own members: the KB's languages (to analyse the query for
 * each), how many vectors a vectorset holds (exact scan or HNSW), and the query vector (from the
 * understanding service, which owns the models, as are the cross-encoder reranker's scores). Small per-KB facts are cached for a few seconds.
 */
@Injectable()
export class SearchContextService {
  private readonly languages = new Map<string, Cached<string[]>>();
  private readonly populations = new Map<string, Cached<number>>();

  constructor(
    @Inject(CONTENT_DATA_SOURCE) private readonly ds: DataSource,
    @Inject(MESSAGE_BUS) private readonly bus: MessageBus,
  ) {}

  async kbLanguages(kbid: string): Promise<string[]> {
    const hit = this.languages.get(kbid);
    if (hit && hit.until > Date.now()) return hit.value;
    const rows = (await this.ds.query(`SELECT languages FROM content.search_stats WHERE kbid = $1`, [kbid])) as { languages: string[] }[];
    const value = rows[0]?.languages ?? [];
    this.languages.set(kbid, { value, until: Date.now() + TTL_MS });
    return value;
  }

  async vectorPopulation(kbid: string, vectorset: string): Promise<number> {
    const key = `${kbid}\0${vectorset}`;
    const hit = this.populations.get(key);
    if (hit && hit.until > Date.now()) return hit.value;
    const rows = (await this.ds.query(`SELECT count(*)::int AS n FROM content.search_vectors WHERE kbid = $1 AND vectorset = $2`, [
      kbid,
      vectorset,
    ])) as { n: number }[];
    const value = rows[0]?.n ?? 0;
    this.populations.set(key, { value, until: Date.now() + TTL_MS * 6 });
    return value;
  }

  /**
   * The resources a `key_value` filter expression selects, or undefined when they are more than
   * `max` (the request is then filtered in SQL). Without `not`, only resources with a key_value
   * field can match, so those are the candidates; with it, every resource of the KB.
   */
  async keyValueResources(kbid: string, e: FilterExpressionOf<KvCondition>, max = KV_MEMORY_MAX_RESOURCES): Promise<string[] | undefined> {
    const params = new SqlParams([kbid]);
    const negated = JSON.stringify(e).includes('"not"');
    const sql = negated
      ? `SELECT r.id FROM content.resources r WHERE r.kbid = $1 AND ${kvExpressionSql(params, 'r.id', e)}`
      : `SELECT DISTINCT f0.rid AS id FROM content.fields f0 WHERE f0.kbid = $1 AND f0.field_type = 'key_value' AND ${kvExpressionSql(params, 'f0.rid', e)}`;
    const rows = (await this.ds.query(`${sql} LIMIT ${max + 1}`, params.values)) as { id: string }[];
    return rows.length > max ? undefined : rows.map((r) => r.id);
  }

  /** The vectorset of a KB's stored vectors (for a query that brings its own vector and names none). */
  async defaultVectorset(kbid: string): Promise<string> {
    const rows = (await this.ds.query(`SELECT vectorset FROM content.search_vectors WHERE kbid = $1 LIMIT 1`, [kbid])) as {
      vectorset: string;
    }[];
    return rows[0]?.vectorset ?? '';
  }

  /** The query's vector, sent over the bus as float32 in base64 (`EmbedQueryRequest.encoding`). */
  async embedQuery(kbid: string, text: string, vectorset?: string, signal?: AbortSignal): Promise<EmbedQueryResponse> {
    const res = await this.bus.request(
      UnderstandingSubjects.embedQuery,
      { kbid, text, encoding: 'float32', ...(vectorset ? { vectorset } : {}) },
      { signal },
    );
    const { vector_f32: f32, ...rest } = res;
    return f32 === undefined ? rest : { ...rest, vector: decodeFloat32(f32) };
  }

  /** The cross-encoder reranker's scores of texts for a query (the understanding service runs the model). */
  async crossEncoderScores(query: string, texts: string[], signal?: AbortSignal): Promise<number[]> {
    return (await this.bus.request(UnderstandingSubjects.rerank, { query, texts }, { signal })).scores;
  }
}
