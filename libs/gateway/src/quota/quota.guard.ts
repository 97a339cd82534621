import { Inject, Injectable, type CanActivate, type ExecutionContext } from '@nestjs/common';
import { DomainError, ErrorCodes } from '@kb/contracts';
import type { AuthedRequest } from '../auth/auth.guard';
import type { BlockingView } from './blocking-view';
import { isPerRequestQuotaRoute, predictQuotaFeatures, quotaFeaturesFor } from './quota-features';

export const BLOCKING_VIEW = Symbol('BLOCKING_VIEW');

/** Marks a route whose features depend on the request (the predict routes of understanding-API keys). */
const PER_REQUEST: readonly string[] = Object.freeze([]);

const WHAT: Record<string, string> = {
  search: 'the monthly limit of searches',
  ask: 'the monthly limit of generated answers',
  processing: 'a monthly processing limit (paragraphs, characters, documents, files or media seconds)',
  storage: 'a storage limit (resources or bytes per Knowledge Box, or paragraphs stored this month)',
  self_hosted_search: 'the monthly limit of self-hosted searches (predict calls of understanding-API keys for a query)',
  self_hosted_ask: 'the monthly limit of self-hosted answers (predict calls of understanding-API keys that generate)',
};

/**
 * Refuses work for a feature whose usage limit the account has reached: 402 with what was reached.
 * Runs after the access decision (which names the account); reads the in-memory blocks only.
 */
@Injectable()
export class QuotaGuard implements CanActivate {
  /** Features per route pattern (as many entries as routes): the patterns are matched once per route, not per request. */
  private readonly byRoute = new Map<string, readonly string[]>();

  constructor(@Inject(BLOCKING_VIEW) private readonly view: BlockingView) {}

  canActivate(context: ExecutionContext): boolean {
    const req = context.switchToHttp().getRequest<AuthedRequest>();
    const route = (req.route as { path?: string } | undefined)?.path;
    if (!route) return true; // no route matched: a 404 follows
    const key = `${req.method} ${route}`;
    let features = this.byRoute.get(key);
    if (!features)
      this.byRoute.set(key, (features = isPerRequestQuotaRoute(req.method, route) ? PER_REQUEST : quotaFeaturesFor(req.method, route)));
    if (features === PER_REQUEST) {
      const endpoint = typeof req.params['endpoint'] === 'string' ? req.params['endpoint'] : undefined;
      features = predictQuotaFeatures(route, endpoint, req.body);
    }
    if (features.length === 0) return true;
    const accountId = req.grant?.account_id ?? req.principal?.account_id;
    const kbid = typeof req.params['kbid'] === 'string' ? req.params['kbid'] : undefined;
    const blocked = this.view.blocked(accountId, kbid, features);
    if (blocked) {
      throw new DomainError(
        ErrorCodes.QUOTA_EXCEEDED,
        `The account has reached ${WHAT[blocked] ?? `a usage limit (${blocked})`}; it is blocked for ${blocked} until the month turns or the limit is raised`,
      );
    }
    return true;
  }
}
