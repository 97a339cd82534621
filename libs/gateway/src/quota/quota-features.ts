import { selfHostedUse } from '../routes/predict/predict-usage';

/**
 * Which usage-limited features a route admits work for (issue 19). Checked after the access
 * decision, against the in-memory blocks: a search counts against searches, an answer against
 * answers, and writes that store or process content against processing and storage. Reads,
 * deletions (which free space) and the continuation of an upload already accepted are never refused.
 */
const SEARCH = /^\/api\/v1\/kb\/:kbid\/(?:(?:resource\/:rid|slug\/:rslug)\/)?(?:find|search)$/;
const ASK = /^\/api\/v1\/kb\/:kbid\/(?:(?:resource\/:rid|slug\/:rslug)\/)?ask$/;
const KB_WRITE = /^\/api\/v1\/kb\/:kbid\/(?:resources|upload|tusupload|(?:resource\/:rid|slug\/:rslug)(?:\/.*)?)$/;
const KB_WRITE_EXCLUDED = /\/(?:reindex|tusupload\/:upload_id|messages\/:message_ident)$/;
const PROCESSING = /^\/api\/v1\/processing\/(?:push|upload|tusupload)$/;
/** An archive imported into a KB adds resources and stored bytes (metered as they are written). */
const KB_IMPORT = '/api/v1/kb/:kbid/import';

export const WRITE_FEATURES = ['processing', 'storage'] as const;

/**
 * The predict routes of understanding-API keys (with or without a KB of the key's account): which of
 * their calls count as self-hosted searches and answers depends on the endpoint.
 */
const UA_PREDICT = /^\/api\/v1\/predict\/(:endpoint|compat\/chat\/completions|compat\/embeddings)(?:\/:kbid)?$/;

/** Whether the features of this route depend on the request (its `{endpoint}`, its body): see predictQuotaFeatures. */
export function isPerRequestQuotaRoute(method: string, path: string): boolean {
  return UA_PREDICT.test(path) && (method.toUpperCase() === 'GET' || method.toUpperCase() === 'POST');
}

/**
 * A predict call of an understanding-API key (docs/usage.md): a self-hosted deployment's search
 * (a query's vector or query information) is refused when the account's self-hosted searches are
 * exhausted, its answer when its self-hosted answers are. The other endpoints are never refused.
 */
export function predictQuotaFeatures(path: string, endpoint: string | undefined, body: unknown): readonly string[] {
  const route = UA_PREDICT.exec(path)?.[1];
  const name = route === ':endpoint' ? (endpoint ?? '') : (route ?? '');
  const use = selfHostedUse(name, body);
  return use === 'search' ? ['self_hosted_search'] : use === 'answer' ? ['self_hosted_ask'] : [];
}

export function quotaFeaturesFor(method: string, path: string): readonly string[] {
  const m = method.toUpperCase();
  if (SEARCH.test(path) && (m === 'GET' || m === 'POST')) return ['search'];
  if (ASK.test(path) && m === 'POST') return ['ask'];
  if (m !== 'POST' && m !== 'PUT' && m !== 'PATCH') return [];
  if (PROCESSING.test(path) && m === 'POST') return WRITE_FEATURES;
  if (path === KB_IMPORT && m === 'POST') return ['storage'];
  if (KB_WRITE.test(path) && !KB_WRITE_EXCLUDED.test(path)) return WRITE_FEATURES;
  return [];
}
