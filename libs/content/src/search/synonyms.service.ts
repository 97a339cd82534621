import { Inject, Injectable } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import { DomainError, type KbSynonymsDto, type ValidationIssue } from '@kb/contracts';
import { CONTENT_DATA_SOURCE } from '../content.tokens';

const MAX_TERMS = 10_000;
const MAX_PER_TERM = 100;
const MAX_LENGTH = 200;
const TTL_MS = 30_000;

/**
 * Custom synonyms of a knowledge box (`GET|PUT|DELETE /custom-synonyms`). With `with_synonyms`,
 * a query that contains a term (a word or phrase, case-insensitive) also looks for its synonyms:
 * they are added to the keyword query, so a paragraph with either matches. Semantic search is not
 * affected (meaning already covers synonyms). Read per KB with a short cache (a change shows at once
 * on the instance that made it, within 30 s on others).
 */
@Injectable()
export class SynonymsService {
  private readonly cache = new Map<string, { value: Record<string, string[]>; until: number }>();

  constructor(@Inject(CONTENT_DATA_SOURCE) private readonly ds: DataSource) {}

  async get(kbid: string): Promise<KbSynonymsDto> {
    const hit = this.cache.get(kbid);
    if (hit && hit.until > Date.now()) return { synonyms: hit.value };
    const rows = (await this.ds.query(`SELECT synonyms FROM content.kb_synonyms WHERE kbid = $1`, [kbid])) as {
      synonyms: Record<string, string[]>;
    }[];
    const value = rows[0]?.synonyms ?? {};
    this.cache.set(kbid, { value, until: Date.now() + TTL_MS });
    return { synonyms: value };
  }

  async set(kbid: string, body: unknown): Promise<Record<string, never>> {
    const synonyms = checkSynonyms(body);
    await this.ds.query(
      `INSERT INTO content.kb_synonyms (kbid, synonyms) VALUES ($1, $2::jsonb) ON CONFLICT (kbid) DO UPDATE SET synonyms = EXCLUDED.synonyms, updated_at = now()`,
      [kbid, JSON.stringify(synonyms)],
    );
    this.cache.delete(kbid);
    return {};
  }

  async delete(kbid: string): Promise<Record<string, never>> {
    await this.ds.query(`DELETE FROM content.kb_synonyms WHERE kbid = $1`, [kbid]);
    this.cache.delete(kbid);
    return {};
  }

  /** The query with the synonyms of the terms it contains appended (the query itself when none match). */
  async expand(kbid: string, query: string): Promise<string> {
    const { synonyms } = await this.get(kbid);
    const padded = ` ${query
      .toLowerCase()
      .replace(/[^\p{L}\p{N}]+/gu, ' ')
      .trim()} `;
    const extra = new Set<string>();
    for (const [term, list] of Object.entries(synonyms)) {
      const key = term
        .toLowerCase()
        .replace(/[^\p{L}\p{N}]+/gu, ' ')
        .trim();
      if (key && padded.includes(` ${key} `)) for (const s of list) extra.add(s);
    }
    return extra.size ? `${query} ${[...extra].join(' ')}` : query;
  }
}

/** `{synonyms: {term: [synonym…]}}`, every problem listed; terms and synonyms trimmed, duplicates dropped. */
export function checkSynonyms(body: unknown): Record<string, string[]> {
  const issues: ValidationIssue[] = [];
  const raw = body && typeof body === 'object' && !Array.isArray(body) ? (body as Record<string, unknown>)['synonyms'] : undefined;
  if (!raw || typeof raw !== 'object' || Array.isArray(raw))
    throw DomainError.validation([
      { loc: ['body', 'synonyms'], msg: 'Field required: an object of term → list of synonyms', type: 'dict_type' },
    ]);
  const entries = Object.entries(raw as Record<string, unknown>);
  if (entries.length > MAX_TERMS) issues.push({ loc: ['body', 'synonyms'], msg: `At most ${MAX_TERMS} terms`, type: 'too_long' });
  const out: Record<string, string[]> = {};
  for (const [term, list] of entries.slice(0, MAX_TERMS)) {
    const key = term.trim();
    if (!key || key.length > MAX_LENGTH)
      issues.push({ loc: ['body', 'synonyms', term], msg: `A term is 1 to ${MAX_LENGTH} characters`, type: 'string_too_long' });
    if (
      !Array.isArray(list) ||
      list.some((s) => typeof s !== 'string' || !s.trim() || s.length > MAX_LENGTH) ||
      list.length > MAX_PER_TERM
    ) {
      issues.push({
        loc: ['body', 'synonyms', term],
        msg: `A list of 0 to ${MAX_PER_TERM} synonyms of 1 to ${MAX_LENGTH} characters`,
        type: 'list_type',
      });
      continue;
    }
    out[key] = [...new Set((list as string[]).map((s) => s.trim()))];
  }
  if (issues.length) throw DomainError.validation(issues);
  return out;
}
