/** Facet counts and distinct tags over a KB's memory index (/search facets, /suggest, entities). */
import type { FilterMask, KbMemoryIndex } from './kb-memory-index';

/**
 * Facets (query/facets.ts, the same counts): for each prefix, its direct children with the number
 * of resources carrying them, over the paragraphs `mask` lets through that hold one of `terms`
 * (all of them when `terms` is empty). Ordered as the statement orders them: count descending,
 * then the tag's bytes.
 */
export function memoryFacets(
  index: KbMemoryIndex,
  prefixes: string[],
  mask: FilterMask,
  terms: string[],
): Record<string, Record<string, number>> {
  let matching = mask.pass;
  if (terms.length > 0) {
    matching = index.holding(terms);
    for (let o = 0; o < index.size; o++) matching[o] &= mask.pass[o] as number;
  }
  const { tagSet, rid } = index.data.columns;
  const tagSets = index.data.attributes.tagSets;
  const clean = prefixes.map((prefix) => prefix.replace(/\/+$/, ''));
  const counted = clean.map(() => new Map<string, Set<number>>());
  // Children per tag set and prefix, worked out once per tag set.
  const children = new Map<number, string[][]>();
  let lastSet = -1;
  let lastRid = -1;
  for (let o = 0; o < index.size; o++) {
    if (matching[o] !== 1) continue;
    const set = tagSet[o] as number;
    const r = rid[o] as number;
    if (set === lastSet && r === lastRid) continue; // a resource's paragraphs mostly come together
    lastSet = set;
    lastRid = r;
    let perPrefix = children.get(set);
    if (!perPrefix) {
      const tags = tagSets[set] ?? [];
      perPrefix = clean.map((c) => {
        const below = `${c}/`;
        return [...new Set(tags.filter((t) => t.startsWith(below)).map((t) => below + (t.slice(below.length).split('/')[0] as string)))];
      });
      children.set(set, perPrefix);
    }
    for (let i = 0; i < clean.length; i++) {
      for (const child of perPrefix[i] as string[]) {
        const rids = (counted[i] as Map<string, Set<number>>).get(child);
        if (rids) rids.add(r);
        else (counted[i] as Map<string, Set<number>>).set(child, new Set([r]));
      }
    }
  }
  const out: Record<string, Record<string, number>> = {};
  prefixes.forEach((prefix, i) => {
    const rows = [...(counted[i] as Map<string, Set<number>>)].map(([tag, rids]) => [tag, rids.size] as const);
    rows.sort((a, b) => b[1] - a[1] || byteOrder(a[0], b[0]));
    out[prefix] = Object.fromEntries(rows);
  });
  return out;
}

/** The distinct tags of the paragraphs `mask` lets through that pass `test`, in byte order, at most `limit`. */
export function memoryTags(index: KbMemoryIndex, mask: FilterMask, test: (tag: string) => boolean, limit: number): string[] {
  const { tagSet } = index.data.columns;
  const seenSets = new Set<number>();
  let last = -1;
  for (let o = 0; o < index.size; o++) {
    if (mask.pass[o] !== 1) continue;
    const set = tagSet[o] as number;
    if (set === last) continue;
    last = set;
    seenSets.add(set);
  }
  const found = new Set<string>();
  for (const set of seenSets) for (const t of index.data.attributes.tagSets[set] ?? []) if (!found.has(t) && test(t)) found.add(t);
  return [...found].sort(byteOrder).slice(0, limit);
}

/**
 * Strings in the order of their UTF-8 bytes (code points): how the statements sort tags (`COLLATE
 * "C"`), whatever the database's own collation.
 */
function byteOrder(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));
}
