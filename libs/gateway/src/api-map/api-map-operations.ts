/**
 * The HTTP operations the reference API map (`../shared/reference/API-MAP.md`, sections 1 to 3:
 * every operation of the spec, the account, user, KB, NUA, search and resource routes around
 * them) names, as `METHOD /api/v1/...` with `{}` for each path parameter; and whether a route of the
 * access table serves one. Used by the test that keeps `docs/unrouted.md` true.
 */

const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS'] as const;
const METHOD_SPAN = new RegExp(`^((?:${METHODS.join('|')})(?:\\|(?:${METHODS.join('|')}))*)(?:\\s+(\\S+))?$`);
/** Sections of the map whose operations are counted (1: the spec's operations, 2: search, 3: resource and KB routes). */
const SECTIONS = /^##+\s+([1-3])[.\s]/;

const ROOTS =
  /^\/(kb|kbs|account|accounts|user|zones|processing|predict|learning|download|nua|service_account_temporal_key|ephemeral_token)(?=\/|$)/;

/**
 * A path as the map writes it → full paths with `{}` for each parameter: `{Z}`/`{G}` hosts and
 * query strings dropped; `/api/v1` added to paths from the API root; other paths are the KB's
 * (`/resources` is `/api/v1/kb/{kbid}/resources`); `...` continues the last full path of the line
 * (or, at the start of a line, is the account of `.../kb/` and `.../account/`, or the KB);
 * optional tails `[/a|/b]` and alternatives `a|b|c` in the last segment are expanded.
 */
function normalisePath(raw: string, anchor: string | undefined): string[] {
  let path = raw
    .replace(/^\{[ZG]\}/, '')
    .replace(/\?.*$/, '')
    .replace(/[.,;:]+$/, '');
  const dots = /^\/?\.\.\.(\/.*)$/.exec(path);
  if (dots) {
    const rest = dots[1] as string;
    if (rest.startsWith('/kb/')) path = `/api/v1/account/{account_id}${rest}`;
    else if (rest.startsWith('/account/')) path = `/api/v1${rest}`;
    else if (anchor) path = anchor.slice(0, anchor.lastIndexOf('/')) + rest;
    else path = `/api/v1/kb/{kbid}${rest}`;
  }
  if (!path.startsWith('/')) return [];
  if (!/^\/api\/v\d\//.test(path)) path = (ROOTS.test(path) ? '/api/v1' : '/api/v1/kb/{kbid}') + path;
  const optional = /^(.*)\[([^\]]+)\]$/.exec(path);
  const bases = optional ? [optional[1] as string, ...(optional[2] as string).split('|').map((t) => `${optional[1]}${t}`)] : [path];
  return bases.flatMap((p) => {
    const segments = p.split('/');
    const last = segments[segments.length - 1] as string;
    const alts = last.includes('|') && !last.includes('{') ? last.split('|') : [last];
    return alts.map((a) => [...segments.slice(0, -1), a].join('/').replace(/\{[^}]+\}/g, '{}'));
  });
}

/** The map's lines, a code span broken over two lines joined into one. */
function logicalLines(markdown: string): string[] {
  const out: string[] = [];
  let pending = '';
  for (const line of markdown.split('\n')) {
    pending = pending ? `${pending} ${line}` : line;
    if ((pending.match(/`/g)?.length ?? 0) % 2 === 0) {
      out.push(pending);
      pending = '';
    }
  }
  if (pending) out.push(pending);
  return out;
}

/** Every operation of the map's sections 1–3, sorted, without repeats. */
export function apiMapOperations(markdown: string): string[] {
  const ops = new Set<string>();
  let inSection = false;
  for (const line of logicalLines(markdown)) {
    const heading = /^##+\s/.test(line);
    if (/^##\s/.test(line) || (heading && SECTIONS.test(line))) {
      const m = SECTIONS.exec(line);
      inSection = !!m;
    }
    if (!inSection) continue;
    let previousRaw: string | undefined;
    let anchor: string | undefined;
    for (const span of line.matchAll(/`([^`]+)`/g)) {
      const m = METHOD_SPAN.exec((span[1] as string).replace(/\\\|/g, '|').trim());
      if (!m) continue;
      const methods = (m[1] as string).split('|');
      const raw = m[2] ?? (/^\s*same\b/.test(line.slice((span.index ?? 0) + span[0].length)) ? previousRaw : undefined);
      if (!raw) continue;
      const paths = normalisePath(raw, anchor);
      previousRaw = raw;
      if (!/^(\{[ZG]\})?\/?\.\.\./.test(raw)) anchor = paths[0]?.replace(/\{\}/g, '{p}') ?? anchor;
      for (const path of paths) for (const method of methods) ops.add(`${method} ${path}`);
    }
  }
  return [...ops].sort();
}

/** An access-table key (`GET /api/v1/kb/:kbid/...`) in the same form. */
export function routeOperation(key: string): string {
  const [method, path] = key.split(' ') as [string, string];
  return `${method} ${path.replace(/:[A-Za-z_]+/g, '{}').replace(/\*[A-Za-z_]+/g, '{*}')}`;
}

/**
 * Whether a route serves an operation as the router would: a route parameter takes any one segment
 * (a literal of the operation too), a trailing wildcard the rest; literals must be equal.
 */
export function routeServes(route: string, operation: string): boolean {
  const [rm, rp] = route.split(' ') as [string, string];
  const [om, op] = operation.split(' ') as [string, string];
  if (rm !== om) return false;
  const r = rp.split('/');
  const o = op.split('/');
  for (let i = 0; i < r.length; i++) {
    if (r[i] === '{*}') return o.length > i;
    if (i >= o.length) return false;
    if (r[i] !== '{}' && r[i] !== o[i]) return false;
  }
  return r.length === o.length;
}
