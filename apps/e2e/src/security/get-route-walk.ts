import { ACCESS_TABLE } from '@kb/gateway';

/**
 * Every GET route of the gateway (from THE access table), made concrete: path parameters filled
 * with the ids of the objects a test created, each with the query variants that make the route
 * return more (show=values…). A parameter the walk does not know makes `concreteGetPaths` report
 * the route instead of skipping it, so a new GET route cannot escape the walk unnoticed.
 */
export interface WalkIds {
  kbid: string;
  /** The slug of that KB (`/kb/s/{slug}`). */
  kbSlug: string;
  account: string;
  /** Resources to read: id, slug, and their fields as [type, id]. */
  resources: { rid: string; slug: string; fields: [string, string][] }[];
  clientId: string;
  processingId: string;
  labelset: string;
}

const EVERY_SHOW = 'show=basic&show=origin&show=extra&show=relations&show=values&show=extracted&show=errors&show=security';
const EVERY_EXTRACTED =
  'extracted=text&extracted=metadata&extracted=shortened_metadata&extracted=large_metadata&extracted=vectors&extracted=link&extracted=file&extracted=question_answers';

/** Query strings per route: what makes it show the most. Routes not named here are read once, bare. */
function variants(route: string, ids: WalkIds): string[] {
  if (/\/(resource\/:rid|slug\/:rslug)$/.test(route)) return ['', '?show=values', `?${EVERY_SHOW}&${EVERY_EXTRACTED}`];
  if (route.endsWith('/:field_type/:field_id'))
    return ['', '?show=value', '?show=value&show=extracted&show=error', `?show=value&${EVERY_EXTRACTED}`];
  if (route.endsWith('/download/field')) return ['', '?inline=true'];
  if (route.endsWith('/resources')) return ['', '?show_hidden=true&size=200'];
  if (/\/(find|search|suggest|catalog)$/.test(route)) return ['', '?query=secret', `?query=secret&${EVERY_SHOW}&${EVERY_EXTRACTED}`];
  if (route.endsWith('/nua_clients')) return ['', `?client_id=${ids.clientId}`];
  if (route === '/api/v1/processing/requests') return ['', `?kbid=${ids.kbid}&limit=100`];
  if (route === '/api/v1/processing/pull') return ['?timeout=0&limit=50', '?timeout=0&limit=50&from_cursor=0'];
  if (route.endsWith('/processing-status')) return ['', '?limit=100'];
  if (route.endsWith('/predict/:endpoint')) return ['?text=secret'];
  // The legacy activity download: this month's visited records (the walk's own reads), every member.
  if (route.endsWith('/activity/download')) return [`?type=visited&month=${new Date().toISOString().slice(0, 7)}`];
  if (route.endsWith('/usage'))
    return [
      `?from=${encodeURIComponent(new Date(Date.now() - 86_400_000).toISOString())}&aggregation=hour`,
      `?from=2026-01-01T00:00:00Z&knowledgebox=${ids.kbid}`,
    ];
  return [''];
}

/** One route's concrete paths, or the parameters the walk cannot fill. */
function expand(route: string, ids: WalkIds): { paths: string[] } | { unknown: string[] } {
  const simple: Record<string, string> = {
    kbid: ids.kbid,
    kb_id: ids.kbid,
    slug: ids.kbSlug,
    account_id: ids.account,
    client_id: ids.clientId,
    processing_id: ids.processingId,
    labelset: ids.labelset,
    // Models are not stored by the walk's fixtures: the route is still read (its 404 must not leak either).
    model_id: 'no-such-model',
    filename: 'model.bin',
    download_field: 'thumbnail',
    // The activity months of a type that the walk itself produces (every read is a `visited` event).
    event_type: 'visited',
    // An entities group processing finds in the walk's texts when they hold an e-mail address, else a 404 that must not leak.
    group: 'EMAIL',
    // A user the walk did not create: the route is still read (its 404 must not leak either).
    user_id: '00000000-0000-4000-8000-000000000000',
    // A scored answer's activity record id (REMi): the walk's first records, or a 404 that must not leak.
    event_id: '1',
    // An activity download nobody asked for, and a signed link nobody made: 404 and 401 that must not leak.
    request_id: '00000000-0000-4000-8000-000000000000',
    key: 'reporting/kbs/none/activity-downloads/none.csv',
    // An export or import nobody started: 404s that must not leak.
    export_id: '00000000-0000-4000-8000-000000000000',
    import_id: '00000000-0000-4000-8000-000000000000',
    // The predict API's GET endpoint that returns the most (vector, entities, thresholds): a model's answer, never a stored value.
    endpoint: 'query',
    // Saved KB configurations (a preset, a key-value schema, a strategy) that may not exist: a 404 must not leak either.
    config_name: 'walk',
    schema_id: 'walk',
    strategy_id: '00000000-0000-4000-8000-000000000000',
  };
  const params = [...route.matchAll(/[:*]([a-z_]+)/g)].map((m) => m[1] as string);
  const perResource = new Set(['rid', 'rslug', 'field_type', 'field_id']);
  const unknown = params.filter((p) => !(p in simple) && !perResource.has(p));
  if (unknown.length > 0) return { unknown };
  const fill = (path: string) => path.replace(/[:*]([a-z_]+)/g, (whole, p: string) => simple[p] ?? whole);
  if (!params.some((p) => perResource.has(p))) return { paths: [fill(route)] };
  const paths: string[] = [];
  for (const r of ids.resources) {
    const base = route.replace(':rid', r.rid).replace(':rslug', r.slug);
    if (!base.includes(':field_id')) {
      paths.push(fill(base));
      continue;
    }
    for (const [type, id] of r.fields) {
      if (base.includes('/file/:field_id') && type !== 'file') continue;
      paths.push(fill(base.replace(':field_type', type).replace(':field_id', id)));
    }
  }
  return { paths };
}

/**
 * Live streams that do not end by themselves (read to their end, they would hold the walk for
 * minutes). The notifications stream carries only resource ids, titles and sequence ids, never a
 * stored value; its e2e (notifications.e2e-spec.ts) checks every member of what it sends.
 */
const LIVE_STREAMS = new Set(['GET /api/v1/kb/:kbid/notifications']);

export function concreteGetPaths(ids: WalkIds): { paths: string[]; unfillable: string[] } {
  const paths: string[] = [];
  const unfillable: string[] = [];
  for (const key of Object.keys(ACCESS_TABLE)) {
    const [method, route] = key.split(' ') as [string, string];
    if (method !== 'GET' || LIVE_STREAMS.has(key)) continue;
    const expanded = expand(route, ids);
    if ('unknown' in expanded) {
      unfillable.push(`${key} (${expanded.unknown.join(', ')})`);
      continue;
    }
    for (const path of expanded.paths) for (const q of variants(route, ids)) paths.push(`${path}${q}`);
  }
  return { paths, unfillable };
}

/** The text a response shows: its headers, its body, and what base64 strings in it decode to (pull payloads). */
export function visibleText(headers: Headers, body: string): string {
  const decoded = [...body.matchAll(/"([A-Za-z0-9+/]{24,}={0,2})"/g)].map((m) => Buffer.from(m[1] as string, 'base64').toString('utf8'));
  return [...headers.entries()].map(([k, v]) => `${k}: ${v}`).join('\n') + '\n' + body + '\n' + decoded.join('\n');
}
