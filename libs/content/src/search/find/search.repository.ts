import { Inject, Injectable } from '@nestjs/common';
import type { ResourceDto } from '@kb/contracts';
import { prepared, preparedQuery } from '@kb/platform/database';
import type { DataSource } from 'typeorm';
import { CONTENT_DATA_SOURCE } from '../../content.tokens';
import type { ScoreType } from '../query/fusion';
import { relationsSearch, type RelationsResult } from '../query/relations';
import type { SerializationOptions } from '../query/serialization';
import { SqlParams } from '../query/sql';
import { SEARCH_RESOURCES, type SearchResources } from '../search-resources.port';

export interface ParagraphRow {
  id: string;
  rid: string;
  field: string;
  split: string;
  paragraph_id: string;
  start_offset: number;
  end_offset: number;
  idx: number;
  page: number | null;
  /** Seconds into its recording (TRANSCRIPT paragraphs), else null. */
  start_seconds: number | null;
  end_seconds: number | null;
  text: string;
  kind: string;
  language: string;
  labels: string[];
}

/** The columns of a `ParagraphRow`, for every statement that reads paragraphs back. */
export const PARAGRAPH_COLUMNS =
  'id::text AS id, rid::text AS rid, field, split, paragraph_id, start_offset, end_offset, idx, page, start_seconds, end_seconds, text, kind, language, labels';

/** The rows of a request's best paragraphs (a prepared statement: every /find and /ask reads them). */
const PARAGRAPH_ROWS = prepared(`SELECT ${PARAGRAPH_COLUMNS} FROM content.search_paragraphs WHERE id = ANY($1::bigint[])`);

export interface RankedParagraph extends ParagraphRow {
  score: number;
  scoreType: ScoreType;
  order: number;
}

/**
 * What search reads back from the database once the hits are known: paragraph rows, the resources
 * of the hits (through SearchResources, which the resources side implements), and the `relations` feature's graph.
 */
@Injectable()
export class SearchRepository {
  constructor(
    @Inject(CONTENT_DATA_SOURCE) private readonly ds: DataSource,
    @Inject(SEARCH_RESOURCES) private readonly reader: SearchResources,
  ) {}

  async paragraphRows(ids: string[]): Promise<Map<string, ParagraphRow>> {
    if (ids.length === 0) return new Map();
    const rows = await preparedQuery<ParagraphRow>(this.ds, PARAGRAPH_ROWS, [ids]);
    return new Map(rows.map((r) => [r.id, r]));
  }

  /** The resources of the hits, serialized as `show` asks (through the resources' narrow read, SearchResources). */
  resources(kbid: string, rids: string[], s: SerializationOptions): Promise<Map<string, ResourceDto>> {
    return this.reader.resources(kbid, rids, s);
  }

  /** The resources of paragraphs (by paragraph row id), read while their rows are. */
  resourcesOfParagraphs(kbid: string, paragraphIds: string[], s: SerializationOptions): Promise<Map<string, ResourceDto>> {
    return this.reader.resourcesOfParagraphs(kbid, paragraphIds, s);
  }

  /** The `relations` feature: entities named in the query, with the resources and entities around them. */
  relations(plan: { kbid: string; query: string; where: string; params: SqlParams }): Promise<RelationsResult> {
    return relationsSearch(this.ds.manager, { kbid: plan.kbid, where: plan.where, params: new SqlParams(plan.params.values) }, plan.query);
  }
}
