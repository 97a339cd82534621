import type { ResourceDto } from '@kb/contracts';
import type { SerializationOptions } from './query/serialization';

/**
 * What search reads of resources (the hits' resources, serialized as a request's `show`,
 * `field_type_filter` and `extracted` ask): a narrow port that the resources side implements
 * (resources/search-resources.reader.ts), so that search does not import resources.
 */
export interface SearchResources {
  /** The resources of `rids` in the KB that exist, by id (missing ones left out). */
  resources(kbid: string, rids: string[], s: SerializationOptions): Promise<Map<string, ResourceDto>>;
  /**
   * The resources of the paragraphs `paragraphIds` (content.search_paragraphs ids) in the KB, by id:
   * read while the paragraphs' own rows are, before their resource ids are known.
   */
  resourcesOfParagraphs(kbid: string, paragraphIds: string[], s: SerializationOptions): Promise<Map<string, ResourceDto>>;
}

export const SEARCH_RESOURCES = Symbol('SEARCH_RESOURCES');
