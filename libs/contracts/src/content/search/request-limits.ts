/**
 * Bounds on what one search, find, suggest, catalog, graph or ask request may name: far above
 * what a real client sends, low enough that no request can make a statement with tens of
 * thousands of parameters or a loop over a million items. GET and POST forms share them (the
 * gateway turns a GET query into the same body). Documented in docs/operations.md. Lives in the contracts: the request DTOs declare them.
 */
export const REQUEST_LIMITS = {
  /** Characters of a query string (find, search, ask, suggest, catalog). */
  queryChars: 20_000,
  /** Words of a catalog title query (each is one condition). */
  catalogQueryWords: 100,
  /** Items of a list of tags, fields, keywords, resource ids, security groups, extra context. */
  listItems: 100,
  /** Items of a list of options (features, show, extracted, field types). */
  enumItems: 20,
  /** Characters of one tag, field id, keyword, resource id or group. */
  itemChars: 1_000,
  /** Characters of one extra-context passage or chat-history turn. */
  passageChars: 20_000,
  /** Turns of chat history (`chat_history` / `context`). */
  chatTurns: 100,
  /** JSON levels of a filter expression, legacy filter or graph query. */
  expressionDepth: 16,
  /** JSON values (objects, lists, scalars) in a filter expression, legacy filter or graph query. */
  expressionNodes: 1_000,
  /** Facet prefixes of /search, /catalog and /catalog/facets. */
  facets: 50,
} as const;

/** Depth and size of a JSON value, counted iteratively; stops counting once past the limits. */
export function expressionSize(value: unknown): { depth: number; nodes: number } {
  let depth = 0;
  let nodes = 0;
  const stack: { v: unknown; d: number }[] = [{ v: value, d: 1 }];
  for (let top = stack.pop(); top; top = stack.pop()) {
    const { v, d } = top;
    nodes++;
    depth = Math.max(depth, d);
    if (nodes > REQUEST_LIMITS.expressionNodes || depth > REQUEST_LIMITS.expressionDepth) break;
    if (Array.isArray(v)) for (const item of v) stack.push({ v: item, d: d + 1 });
    else if (typeof v === 'object' && v !== null) for (const item of Object.values(v)) stack.push({ v: item, d: d + 1 });
  }
  return { depth, nodes };
}
