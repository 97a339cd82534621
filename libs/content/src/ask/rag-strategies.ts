import { GRAPH_STRATEGY_LIMITS, type AskPrequeryRequest, type METADATA_EXTENSION_TYPES, type RagStrategyRequest } from '@kb/contracts';

export interface FullResource {
  name: 'full_resource';
  count?: number;
  includeRemaining: boolean;
  exclude: string[];
}
export interface FieldExtension {
  name: 'field_extension';
  fields: string[];
}
export interface Hierarchy {
  name: 'hierarchy';
  count: number;
}
export interface Neighbours {
  name: 'neighbouring_paragraphs';
  before: number;
  after: number;
}
export interface MetadataExtension {
  name: 'metadata_extension';
  types: (typeof METADATA_EXTENSION_TYPES)[number][];
}
export interface Prequery {
  id: string;
  request: AskPrequeryRequest;
  weight: number;
  prefilter: boolean;
}
export interface Prequeries {
  name: 'prequeries';
  queries: Prequery[];
  mainQueryWeight: number;
}
export interface Conversation {
  name: 'conversation';
  attachmentsText: boolean;
  /** The images attached to the context's messages go to providers that read images (docs/ask.md "Images"). */
  attachmentsImages: boolean;
  full: boolean;
  maxMessages: number;
}

export interface Graph {
  name: 'graph_beta';
  hops: number;
  topK: number;
  excludeProcessorRelations: boolean;
  relationText: boolean;
  ranking: 'reranker' | 'generative';
  detection: 'predict' | 'suggest';
  weight: number;
}

export type RagStrategy = FullResource | FieldExtension | Hierarchy | Neighbours | MetadataExtension | Prequeries | Conversation | Graph;

/**
 * `rag_strategies` (API-MAP 2.4), checked by ragStrategiesCheck (at most one of each name;
 * full_resource not with hierarchy, neighbouring_paragraphs or field_extension),
 * with their defaults.
 */
export function ragStrategiesOf(list: readonly RagStrategyRequest[] | undefined | null): RagStrategy[] {
  const out: RagStrategy[] = [];
  for (const s of list ?? []) {
    switch (s.name) {
      case 'full_resource':
        out.push({
          name: s.name,
          count: s.count ?? undefined,
          includeRemaining: s.include_remaining_text_blocks ?? false,
          exclude: (s.apply_to?.exclude ?? []).filter((x) => typeof x === 'string'),
        });
        break;
      case 'field_extension':
        out.push({ name: s.name, fields: s.fields });
        break;
      case 'hierarchy':
        out.push({ name: s.name, count: s.count ?? 0 });
        break;
      case 'neighbouring_paragraphs':
        out.push({ name: s.name, before: s.before ?? 2, after: s.after ?? 2 });
        break;
      case 'metadata_extension':
        out.push({ name: s.name, types: s.types ?? [] });
        break;
      case 'prequeries':
        out.push({
          name: s.name,
          queries: s.queries.map((q, j) => ({
            id: typeof q.id === 'string' ? q.id : `prequery_${j}`,
            request: q.request,
            weight: q.weight ?? 1,
            prefilter: q.prefilter === true,
          })),
          mainQueryWeight: s.main_query_weight ?? 1,
        });
        break;
      case 'conversation':
        out.push({
          name: s.name,
          attachmentsText: s.attachments_text ?? false,
          attachmentsImages: s.attachments_images ?? false,
          full: s.full ?? false,
          maxMessages: s.max_messages ?? 15,
        });
        break;
      case 'graph_beta': {
        const relationText = s.relation_text_as_paragraphs ?? false;
        out.push({
          name: s.name,
          hops: s.hops ?? GRAPH_STRATEGY_LIMITS.defaultHops,
          topK: s.top_k ?? (relationText ? GRAPH_STRATEGY_LIMITS.defaultTopKRelationText : GRAPH_STRATEGY_LIMITS.defaultTopK),
          excludeProcessorRelations: s.exclude_processor_relations ?? s.agentic_graph_only ?? true,
          relationText,
          ranking: s.relation_ranking ?? 'reranker',
          detection: s.query_entity_detection ?? 'predict',
          weight: s.weight ?? 3,
        });
        break;
      }
    }
  }
  return out;
}
