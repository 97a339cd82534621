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

export const WRITE_FEATURES = ['processing', 'storage'] as const;

export function quotaFeaturesFor(method: string, path: string): readonly string[] {
  const m = method.toUpperCase();
  if (SEARCH.test(path) && (m === 'GET' || m === 'POST')) return ['search'];
  if (ASK.test(path) && m === 'POST') return ['ask'];
  if (m !== 'POST' && m !== 'PUT' && m !== 'PATCH') return [];
  if (PROCESSING.test(path) && m === 'POST') return WRITE_FEATURES;
  if (KB_WRITE.test(path) && !KB_WRITE_EXCLUDED.test(path)) return WRITE_FEATURES;
  return [];
}
