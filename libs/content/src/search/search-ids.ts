import { FIELD_TYPE_LETTER } from '@kb/contracts';

/** Letter of every field type a filter or `fields` member can name (generic = title/summary). */
export const TYPE_LETTER: Record<string, string> = { ...FIELD_TYPE_LETTER };

/** Vectorset names end up in DDL (index names, partial-index predicates): only plain characters. */
export function isSafeVectorset(name: string): boolean {
  return /^[A-Za-z0-9._:-]{1,100}$/.test(name);
}
