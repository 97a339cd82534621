import type { ValidationIssue } from '../../common/errors';
import { checks, isPlainObject, whenAbsent, type Loc, type MemberCheck } from '../../common/member-checks';
import { parseGraphQuery } from './graph-query';
import { REQUEST_LIMITS } from './request-limits';

/**
 * Checks shared by the retrieval requests (/find, /search, /suggest, /ask): the members whose
 * shape is a union or whose rule relates several members.
 */

/** `min_score`: a semantic threshold, or `{semantic, bm25}`. */
export const minScoreCheck: MemberCheck = (ms, loc, issues) => {
  if (ms === undefined || ms === null) return;
  if (typeof ms === 'number') return checks.number()(ms, loc, issues, {});
  if (!isPlainObject(ms)) return void issues.push({ loc, msg: 'Input should be a number or {semantic, bm25}', type: 'model_type' });
  for (const k of Object.keys(ms))
    if (k !== 'semantic' && k !== 'bm25') issues.push({ loc: [...loc, k], msg: 'Extra inputs are not permitted', type: 'extra_forbidden' });
  checks.number()(ms['semantic'], [...loc, 'semantic'], issues, {});
  checks.number({ min: 0 })(ms['bm25'], [...loc, 'bm25'], issues, {});
};

/** `rank_fusion`: `'rrf'`, `'legacy'`, `{name: 'rrf', k, window, boosting}` or `{name: 'weighted', boosting: {semantic}, window}`. */
export const rankFusionCheck: MemberCheck = (v, loc, issues) => {
  if (v === undefined || v === null || v === 'rrf' || v === 'legacy') return;
  if (!isPlainObject(v))
    return void issues.push({ loc, msg: "Input should be 'rrf' or {name: 'rrf', k, window, boosting}", type: 'union_tag_invalid' });
  const b = (isPlainObject(v['boosting']) ? v['boosting'] : {}) as Record<string, unknown>;
  if (v['name'] === 'weighted') return checks.number({ min: 0 })(b['semantic'], [...loc, 'boosting', 'semantic'], issues, {});
  if (v['name'] !== undefined && v['name'] !== 'rrf' && v['name'] !== 'legacy')
    issues.push({ loc: [...loc, 'name'], msg: "Input should be 'rrf' or 'weighted'", type: 'enum' });
  checks.number({ min: 0 })(v['k'], [...loc, 'k'], issues, {});
  const w = v['window'];
  if (w !== undefined && w !== null && !(Number.isInteger(w) && (w as number) >= 1 && (w as number) <= 500))
    issues.push({ loc: [...loc, 'window'], msg: 'Input should be an integer between 1 and 500', type: 'less_than_equal' });
  checks.number()(b['keyword'], [...loc, 'boosting', 'keyword'], issues, {});
  checks.number()(b['semantic'], [...loc, 'boosting', 'semantic'], issues, {});
};

/** The `top_k` a request asks for, or its default when absent or invalid (reported on `top_k` itself). */
export function topKOf(owner: Record<string, unknown>, dflt = 20, max = 200): number {
  const t = owner['top_k'];
  return typeof t === 'number' && Number.isInteger(t) && t >= 1 && t <= max ? t : dflt;
}

/**
 * The rerankers a request can name: `predict` (the built-in lexical reranker), `noop` (the fused
 * order) and `cross-encoder` (a model scoring query and paragraph together, run by the
 * understanding service from the folder its operator mounts: RERANKER_MODEL_DIR).
 */
export const RERANKER_NAMES = ['predict', 'noop', 'cross-encoder'] as const;
export type RerankerName = (typeof RERANKER_NAMES)[number];
const rerankerNames = RERANKER_NAMES.map((n) => `'${n}'`).join(', ');

/** `reranker`: a name of RERANKER_NAMES (`'predict'` by default) or `{name, window}` with a window from `top_k` to 200. */
export const rerankerCheck: MemberCheck = (v, loc, issues, owner) => {
  if (v === undefined || v === null || RERANKER_NAMES.includes(v as RerankerName)) return;
  if (!isPlainObject(v)) return void issues.push({ loc, msg: `Input should be ${rerankerNames} or {name, window}`, type: 'enum' });
  if (!RERANKER_NAMES.includes(v['name'] as RerankerName))
    issues.push({ loc: [...loc, 'name'], msg: `Input should be ${rerankerNames}`, type: 'enum' });
  const w = v['window'];
  const topK = topKOf(owner);
  if (w !== undefined && w !== null && (!Number.isInteger(w) || (w as number) < topK || (w as number) > 200)) {
    issues.push({ loc: [...loc, 'window'], msg: `Input should be an integer between top_k (${topK}) and 200`, type: 'value_error' });
  }
};

/** `vector`: a non-empty list of finite numbers (the query's own embedding). */
export const vectorCheck: MemberCheck = (v, loc, issues) => {
  if (v === undefined || v === null) return;
  if (!Array.isArray(v) || v.length === 0 || v.some((x) => typeof x !== 'number' || !Number.isFinite(x)))
    issues.push({ loc, msg: 'Input should be a non-empty list of numbers', type: 'list_type' });
};

/** `security`: `{groups}` (or `access_groups`), at most REQUEST_LIMITS.listItems groups. */
export const securityCheck: MemberCheck = (s, loc, issues) => {
  if (s === undefined || s === null) return;
  if (!isPlainObject(s)) return void issues.push({ loc, msg: 'Input should be a valid object', type: 'model_type' });
  const g = s['groups'] ?? s['access_groups'];
  for (const k of Object.keys(s))
    if (k !== 'groups' && k !== 'access_groups')
      issues.push({ loc: [...loc, k], msg: 'Extra inputs are not permitted', type: 'extra_forbidden' });
  if (g !== undefined && (!Array.isArray(g) || g.some((x) => typeof x !== 'string')))
    issues.push({ loc: [...loc, 'groups'], msg: 'Input should be a list of strings', type: 'list_type' });
  else if (Array.isArray(g) && (g.length > REQUEST_LIMITS.listItems || g.some((x: string) => x.length > REQUEST_LIMITS.itemChars))) {
    issues.push({
      loc: [...loc, 'groups'],
      msg: `Input should be at most ${REQUEST_LIMITS.listItems} groups of at most ${REQUEST_LIMITS.itemChars} characters`,
      type: 'too_long',
    });
  }
};

/** `audit_metadata`: an object of at most 10 KB as JSON. */
export const auditMetadataCheck: MemberCheck = (v, loc, issues) => {
  if (v === undefined || v === null) return;
  if (!isPlainObject(v)) return void issues.push({ loc, msg: 'Input should be a valid object', type: 'model_type' });
  if (JSON.stringify(v).length > 10_240) issues.push({ loc, msg: 'audit_metadata must be at most 10 KB', type: 'value_error' });
};

/** An enumeration list as every search member reads it: an empty list means the defaults. */
export const enumListCheck = (allowed: readonly string[]): MemberCheck =>
  checks.stringList({ maxItems: REQUEST_LIMITS.enumItems, max: REQUEST_LIMITS.itemChars, allowed });

/** A list of tags, fields, keywords, ids or groups. */
export const stringListCheck = (): MemberCheck => checks.stringList({ maxItems: REQUEST_LIMITS.listItems, max: REQUEST_LIMITS.itemChars });

/** The features a request asks for once defaults apply: the valid items, or `dflt` when none. */
export function featuresOf(owner: Record<string, unknown>, allowed: readonly string[], dflt: readonly string[]): string[] {
  const f = owner['features'];
  const valid = Array.isArray(f) ? f.filter((x): x is string => typeof x === 'string' && allowed.includes(x)) : [];
  return valid.length ? valid : [...dflt];
}

/**
 * `graph_query` (the graph feature's path query, the language of graph-query.ts): required with
 * the graph feature and checked all through, refused without it, never with `relations`.
 */
export function graphQueryCheck(allowed: readonly string[], dflt: readonly string[]): MemberCheck {
  return whenAbsent((v, loc, issues, owner) => {
    const features = featuresOf(owner, allowed, dflt);
    const given = v !== undefined && v !== null;
    if (features.includes('graph')) {
      if (!given) issues.push({ loc, msg: 'graph_query is required with the graph feature', type: 'missing' });
      else parseGraphQuery(v, loc, { issue: (at, msg, type) => issues.push({ loc: at, msg, type }) });
      if (features.includes('relations'))
        issues.push({ loc: [...loc.slice(0, -1), 'features'], msg: 'relations and graph cannot be asked together', type: 'value_error' });
    } else if (given) issues.push({ loc, msg: 'graph_query needs the graph feature', type: 'value_error' });
  });
}

export type { Loc, ValidationIssue };
