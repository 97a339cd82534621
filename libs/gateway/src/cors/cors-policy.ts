import type { NextFunction, Request, Response } from 'express';
import { AccountsSubjects } from '@kb/contracts';
import type { MessageBus } from '@kb/platform/messaging';

/** Request headers a browser client may send (credential headers, client hints, uploads). */
export const CORS_ALLOWED_HEADERS = [
  'authorization',
  'content-type',
  'x-svc-serviceaccount',
  'x-nuclia-serviceaccount',
  'x-stf-serviceaccount',
  'x-svc-uakey',
  'x-nuclia-nuakey',
  'x-stf-nuakey',
  'x-ndb-client',
  'x-synchronous',
  'x-svcdb-user',
  'x-nucliadb-user',
  'x-show-consumption',
  'x-skip-store',
  'x-filename',
  'x-password',
  'x-language',
  'x-md5',
  'x-extract-strategy',
  'x-split-strategy',
  'x-request-id',
  'tus-resumable',
  'upload-length',
  'upload-offset',
  'upload-metadata',
  'upload-defer-length',
  'upload-concat',
  'range',
].join(', ');

/** Response headers a browser client may read. */
export const CORS_EXPOSED_HEADERS = [
  'location',
  'upload-offset',
  'upload-length',
  'tus-resumable',
  'tus-version',
  'tus-extension',
  'tus-max-size',
  'nuclia-learning-id',
  'x-learning-id',
  'x-request-id',
  'content-range',
  'accept-ranges',
  'retry-after',
].join(', ');

/** Paths of one KB, by id. `/kb/s/{slug}` names no KB id (a slug lookup across the caller's KBs): global origins. */
const KB_PATH = /^\/api\/v1\/(?:kb\/(?!s\/)([^/]+)|account\/[^/]+\/kb\/([^/]+))(?:\/|$)/;
/** Posted to by other sites by design: an identity provider's auto-submitted SAML form (no credential, no readable answer). */
const CROSS_SITE_FORM_POST = /^\/api\/v1\/saml\/[^/]+\/acs$/;

/** A page of the gateway calling the gateway (the sign-in forms): same-origin, so CORS does not apply. */
function sameOrigin(origin: string, host: string | undefined): boolean {
  try {
    return host !== undefined && new URL(origin).host === host;
  } catch {
    return false;
  }
}

export interface CorsOptions {
  /** Origins allowed on routes not tied to one KB (accounts, users); '*' allows any. */
  globalOrigins: string[];
  cacheTtlMs: number;
}

/**
 * CORS for browser callers. A KB route allows the origins in that KB's `allowed_origins` ('*' for
 * any); other routes allow the configured global origins. A request from any other origin is
 * refused with 403 (not only left without headers), so the KB's list is enforced, not advisory.
 */
export class CorsPolicy {
  private readonly cache = new Map<string, { origins: string[]; expires: number }>();

  constructor(
    private readonly bus: MessageBus,
    private readonly options: CorsOptions,
  ) {}

  async start(): Promise<void> {
    await this.bus.subscribe(AccountsSubjects.accessChanged, async (e) => {
      for (const id of e.kb_ids ?? []) this.cache.delete(id);
    });
  }

  middleware() {
    return (req: Request, res: Response, next: NextFunction): void => {
      const origin = req.headers.origin;
      if (typeof origin !== 'string' || origin === '') return next();
      if (sameOrigin(origin, req.headers.host) || (req.method === 'POST' && CROSS_SITE_FORM_POST.test(req.path))) return next();
      this.allowedOrigins(req.path)
        .then((allowed) => {
          const ok = allowed.includes('*') || allowed.includes(origin);
          if (!ok) {
            res.status(403).json({
              detail: `Origin ${origin} is not allowed${KB_PATH.test(req.path) ? ' for this Knowledge Box (allowed_origins)' : ''}`,
            });
            return;
          }
          res.setHeader('Access-Control-Allow-Origin', origin);
          res.append('Vary', 'Origin');
          res.setHeader('Access-Control-Expose-Headers', CORS_EXPOSED_HEADERS);
          if (req.method === 'OPTIONS') {
            res.setHeader('Access-Control-Allow-Methods', 'GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS');
            res.setHeader('Access-Control-Allow-Headers', CORS_ALLOWED_HEADERS);
            res.setHeader('Access-Control-Max-Age', '600');
            res.status(204).end();
            return;
          }
          next();
        })
        .catch(next);
    };
  }

  private async allowedOrigins(path: string): Promise<string[]> {
    const match = KB_PATH.exec(path);
    const kbId = match?.[1] ?? match?.[2];
    if (!kbId) return this.options.globalOrigins;
    const now = Date.now();
    const hit = this.cache.get(kbId);
    if (hit && hit.expires > now) return hit.origins;
    const { allowed_origins } = await this.bus.request(AccountsSubjects.kbCors, { kb_id: kbId });
    this.cache.set(kbId, { origins: allowed_origins, expires: now + this.options.cacheTtlMs });
    if (this.cache.size > 50_000) this.cache.delete(this.cache.keys().next().value as string);
    return allowed_origins;
  }
}
