import { Inject, Injectable } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import type { AskAugmentedParagraph, AskItem } from '@kb/contracts';
import { CONTENT_DATA_SOURCE } from '../content.tokens';
import type { FindOutcome } from '../search/find/find-results';
import { PARAGRAPH_COLUMNS, type ParagraphRow, type RankedParagraph } from '../search/find/search.repository';
import type { GenerationContext } from './generation';
import type { RagStrategy } from './rag-strategies';

/** A piece of an answer's context: a paragraph (retrieved or added by a strategy) or an extra_context text. */
export interface ContextItem extends GenerationContext {
  rid: string;
  /** The paragraph's field (`f/<id>`) and kind; absent for extra_context. */
  field?: string;
  kind?: string;
  /** Why it is there: retrieved, or added by a strategy (API-MAP augmented_context). */
  augmentation?: string;
  parent?: string;
  /** The paragraph's split (a conversation message's ident). */
  split?: string;
  position?: { start: number; end: number; index: number; page_number: number };
}

/** Prequery (and graph) results join the main ones by weighted reciprocal rank (each list counts by its weight). */
export function mergeRanked(
  main: RankedParagraph[],
  mainWeight: number,
  lists: { weight: number; outcome: FindOutcome | undefined }[],
): RankedParagraph[] {
  const scored = new Map<string, { p: RankedParagraph; score: number }>();
  const add = (list: RankedParagraph[], weight: number) =>
    list.forEach((p, rank) => {
      const prev = scored.get(p.paragraph_id);
      const score = weight / (60 + rank);
      if (prev) prev.score += score;
      else scored.set(p.paragraph_id, { p, score });
    });
  add(main, mainWeight);
  for (const l of lists) add(l.outcome?.paragraphs ?? [], l.weight);
  return [...scored.values()].sort((a, b) => b.score - a.score).map((x, order) => ({ ...x.p, score: x.score, order }));
}

/** The context /ask sends to the generator: the ranked paragraphs, extended by the RAG strategies. */
@Injectable()
export class AskContextAssembler {
  constructor(@Inject(CONTENT_DATA_SOURCE) private readonly ds: DataSource) {}

  private async fieldParagraphs(rid: string, fields?: string[]): Promise<ParagraphRow[]> {
    const params: unknown[] = [rid];
    const cond = fields?.length ? ` AND field = ANY($2::text[])` : '';
    if (fields?.length) params.push(fields);
    return (await this.ds.query(
      `SELECT ${PARAGRAPH_COLUMNS} FROM content.search_paragraphs WHERE rid = $1${cond} ORDER BY (field = 'a/title') DESC, field, split, start_offset`,
      params,
    )) as ParagraphRow[];
  }

  /** The context in rank order, extended by the strategies (API-MAP 2.4 rag_strategies). */
  async assemble(ranked: RankedParagraph[], strategies: RagStrategy[]): Promise<ContextItem[]> {
    const out: ContextItem[] = [];
    const seen = new Set<string>();
    const push = (p: ParagraphRow, augmentation?: string, parent?: string): void => {
      if (seen.has(p.paragraph_id)) return;
      seen.add(p.paragraph_id);
      out.push({
        key: p.paragraph_id,
        text: p.text,
        rid: p.rid,
        field: p.field,
        kind: p.kind,
        augmentation,
        parent,
        split: p.split,
        position: { start: p.start_offset, end: p.end_offset, index: p.idx, page_number: p.page ?? 0 },
      });
    };
    const full = strategies.find((s) => s.name === 'full_resource');
    const neighbours = strategies.find((s) => s.name === 'neighbouring_paragraphs');
    const extension = strategies.find((s) => s.name === 'field_extension');
    const conversation = strategies.find((s) => s.name === 'conversation');
    const rids = [...new Set(ranked.map((p) => p.rid))];
    if (full && full.name === 'full_resource') {
      const take = full.count ?? rids.length;
      for (const rid of rids.slice(0, take)) {
        for (const p of await this.fieldParagraphs(rid))
          if (!full.exclude.some((f) => p.field === f || p.field.endsWith(`/${f}`))) push(p, 'full_resource');
      }
      if (full.includeRemaining) for (const p of ranked) if (!rids.slice(0, take).includes(p.rid)) push(p);
    } else {
      for (const p of ranked) {
        if (neighbours && neighbours.name === 'neighbouring_paragraphs') {
          const around = (await this.ds.query(
            `SELECT ${PARAGRAPH_COLUMNS} FROM content.search_paragraphs WHERE rid = $1 AND field = $2 AND split = $3 AND idx BETWEEN $4 AND $5 ORDER BY idx`,
            [p.rid, p.field, p.split, p.idx - neighbours.before, p.idx + neighbours.after],
          )) as ParagraphRow[];
          for (const n of around) if (n.idx < p.idx) push(n, 'neighbouring_paragraphs', p.paragraph_id);
          push(p);
          for (const n of around) if (n.idx > p.idx) push(n, 'neighbouring_paragraphs', p.paragraph_id);
        } else push(p);
        if (conversation && conversation.name === 'conversation' && p.field.startsWith('c/')) {
          const messages = (await this.fieldParagraphs(p.rid, [p.field])).filter((m) => m.paragraph_id !== p.paragraph_id);
          const pick = conversation.full
            ? messages
            : messages.sort((a, b) => Math.abs(a.idx - p.idx) - Math.abs(b.idx - p.idx)).slice(0, conversation.maxMessages);
          for (const m of pick) push(m, 'conversation', p.paragraph_id);
        }
      }
      if (extension && extension.name === 'field_extension') {
        for (const rid of rids) for (const p of await this.fieldParagraphs(rid, extension.fields)) push(p, 'field_extension');
      }
    }
    const hierarchy = strategies.find((s) => s.name === 'hierarchy');
    const metadata = strategies.find((s) => s.name === 'metadata_extension');
    if (hierarchy || metadata) {
      const resources = (await this.ds.query(
        `SELECT id::text AS id, title, summary, origin, usermetadata, extra, search_tags FROM content.resources WHERE id = ANY($1::uuid[])`,
        [[...new Set(out.map((c) => c.rid).filter(Boolean))]],
      )) as {
        id: string;
        title: string;
        summary: string;
        origin: Record<string, unknown>;
        usermetadata: Record<string, unknown>;
        extra: Record<string, unknown>;
        search_tags: string[];
      }[];
      const byId = new Map(resources.map((x) => [x.id, x]));
      for (const c of out) {
        const res = byId.get(c.rid);
        if (!res) continue;
        const head: string[] = [];
        if (hierarchy) head.push(`${res.title}${res.summary ? `\n${res.summary}` : ''}`);
        if (metadata && metadata.name === 'metadata_extension') {
          for (const t of metadata.types) {
            if (t === 'origin' && Object.keys(res.origin ?? {}).length) head.push(`Resource origin: ${JSON.stringify(res.origin)}`);
            if (t === 'classification_labels') {
              const labels = res.search_tags.filter((x) => x.startsWith('/l/')).map((x) => x.slice(3));
              if (labels.length) head.push(`Resource labels: ${labels.join(', ')}`);
            }
            if (t === 'ners') {
              const ners = res.search_tags.filter((x) => x.startsWith('/e/')).map((x) => x.slice(3));
              if (ners.length) head.push(`Resource named entities: ${ners.join(', ')}`);
            }
            if (t === 'extra_metadata' && Object.keys(res.extra ?? {}).length)
              head.push(`Resource extra metadata: ${JSON.stringify(res.extra)}`);
          }
        }
        if (head.length) c.text = `${head.join('\n')}\n\n${c.text}`;
      }
    }
    return out;
  }
}

/** The `augmented_context` item: the paragraphs the strategies added, with what added each. */
export function augmentedItem(context: ContextItem[]): AskItem {
  const paragraphs: Record<string, AskAugmentedParagraph> = {};
  for (const c of context) {
    if (!c.augmentation) continue;
    paragraphs[c.key] = {
      id: c.key,
      text: c.text,
      position: c.position ?? null,
      parent: c.parent ?? null,
      augmentation_type: c.augmentation,
    };
  }
  return { type: 'augmented_context', augmented: { paragraphs, fields: {} } };
}
