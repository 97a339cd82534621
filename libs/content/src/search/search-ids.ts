import type { ContentFieldType } from '@kb/contracts';

/** Field type letters of paragraph and field ids (API-MAP 4.3). */
export const FIELD_LETTER: Record<ContentFieldType, string> = { text: 't', file: 'f', link: 'u', conversation: 'c' };

/** Letter of every field type a filter or `fields` member can name (generic = title/summary). */
export const TYPE_LETTER: Record<string, string> = { text: 't', file: 'f', link: 'u', conversation: 'c', generic: 'a', key_value: 'k' };

/** Vectorset names end up in DDL (index names, partial-index predicates): only plain characters. */
export function isSafeVectorset(name: string): boolean {
  return /^[A-Za-z0-9._:-]{1,100}$/.test(name);
}
