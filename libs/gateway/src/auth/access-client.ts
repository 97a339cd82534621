import { createHash } from 'node:crypto';
import { AccountsSubjects, DomainError, ErrorCodes, type AccessGrant, type CheckAccessRequest } from '@kb/contracts';
import type { MessageBus } from '@kb/platform/messaging';

interface Entry {
  expires: number;
  grant?: AccessGrant;
  error?: DomainError;
}

export interface AccessClientOptions {
  /** Seconds a verified grant is reused; 0 turns the cache off. */
  ttlSeconds: number;
  maxEntries: number;
}

/**
 * Asks the accounts service who a credential is and what it may do, and remembers the answer for
 * a few seconds. Revocation and role changes are broadcast by accounts and evict at once, so a
 * deleted key stops working immediately, not when its cache entry expires.
 */
export class AccessClient {
  private readonly cache = new Map<string, Entry>();

  constructor(
    private readonly bus: MessageBus,
    private readonly options: AccessClientOptions,
  ) {}

  async start(): Promise<void> {
    // Ephemeral subscriptions: every gateway replica hears every revocation.
    await this.bus.subscribe(AccountsSubjects.credentialRevoked, async (e) =>
      this.evict((g) => e.credential_ids.includes(g.principal.credential_id)),
    );
    await this.bus.subscribe(AccountsSubjects.accessChanged, async (e) =>
      this.evict(
        (g) =>
          (e.user_ids ?? []).includes(g.principal.user_id ?? '') ||
          (e.kb_ids ?? []).some((k) => k === g.principal.kb_id || k === g.kb_found_id) ||
          (e.account_ids ?? []).some((a) => a === g.account_id || a === g.principal.account_id),
      ),
    );
  }

  async check(req: CheckAccessRequest): Promise<AccessGrant> {
    if (this.options.ttlSeconds <= 0) return this.bus.request(AccountsSubjects.checkAccess, req);
    const key = createHash('sha256')
      .update(`${req.header}\0${req.token}\0${req.kbid ?? ''}\0${req.account ?? ''}`)
      .digest('base64url');
    const now = Date.now();
    const hit = this.cache.get(key);
    if (hit && hit.expires > now) {
      if (hit.error) throw hit.error;
      return hit.grant as AccessGrant;
    }
    try {
      const grant = await this.bus.request(AccountsSubjects.checkAccess, req);
      // A grant must not outlive its credential.
      const credentialExpiry = grant.principal.expires_at ? Date.parse(grant.principal.expires_at) : Infinity;
      this.remember(key, {
        grant: { ...grant, kb_found_id: grant.kb_found ? req.kbid : undefined },
        expires: Math.min(now + this.options.ttlSeconds * 1000, credentialExpiry),
      });
      return grant;
    } catch (err) {
      if (err instanceof DomainError && err.code === ErrorCodes.UNAUTHENTICATED)
        this.remember(key, { error: err, expires: now + this.options.ttlSeconds * 1000 });
      throw err;
    }
  }

  size(): number {
    return this.cache.size;
  }

  private remember(key: string, entry: Entry): void {
    if (this.cache.size >= this.options.maxEntries) {
      const oldest = this.cache.keys().next().value;
      if (oldest !== undefined) this.cache.delete(oldest);
    }
    this.cache.set(key, entry);
  }

  private evict(match: (grant: AccessGrant & { kb_found_id?: string }) => boolean): void {
    for (const [key, entry] of this.cache) if (entry.grant && match(entry.grant)) this.cache.delete(key);
  }
}
