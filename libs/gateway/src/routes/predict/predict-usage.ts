import { Inject, Injectable, Logger, type OnModuleDestroy } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { ContentSubjects } from '@kb/contracts';
import { AuditPublisher, MESSAGE_BUS, type MessageBus } from '@kb/platform/messaging';
import type { AuthedRequest } from '../../auth/auth.guard';
import { actorOf } from '../../http/request-context';

/** What a self-hosted deployment's call stands for: a search's query vector or query information, or an answer. */
export type SelfHostedUse = 'search' | 'answer';

/**
 * Which calls of an understanding-API key stand for a self-hosted deployment's searches and answers
 * (the spec's `monthly_limit_self_hosted_*`; docs/usage.md): a query's vector (`sentence`, or
 * `compat/embeddings` of one text — a batch embeds passages, as `sentences` does), the query
 * information a search asks for (`query`), and a generated answer (`chat`,
 * `compat/chat/completions`). Other endpoints are predictions only.
 */
export function selfHostedUse(endpoint: string, body?: unknown): SelfHostedUse | undefined {
  if (endpoint === 'sentence' || endpoint === 'query') return 'search';
  if (endpoint === 'chat' || endpoint === 'compat/chat/completions') return 'answer';
  if (endpoint === 'compat/embeddings') {
    const input = body && typeof body === 'object' ? (body as { input?: unknown }).input : undefined;
    return typeof input === 'string' || (Array.isArray(input) && input.length === 1) ? 'search' : undefined;
  }
  return undefined;
}

/** What a call amounted to: the tokens its generator reported, and whether the generation failed after it began. */
export interface PredictOutcome {
  input_tokens?: number;
  output_tokens?: number;
  model?: string;
  failed?: boolean;
}

/** Tokens of the generations a call made (a summary of several resources is several generations). */
export class TokenMeter {
  input = 0;
  output = 0;
  model?: string;
  add(done: { input_tokens?: number; output_tokens?: number; model?: string } | undefined): void {
    if (!done) return;
    this.input += nonNegative(done.input_tokens);
    this.output += nonNegative(done.output_tokens);
    this.model ??= done.model;
  }
  outcome(): PredictOutcome {
    return { input_tokens: this.input, output_tokens: this.output, model: this.model };
  }
}

const nonNegative = (v: unknown): number => (typeof v === 'number' && Number.isFinite(v) && v > 0 ? v : 0);

/**
 * Meters the predict API (docs/usage.md): one `predict` activity event per call that ran a model,
 * published in batches (`content.audit.batch`, the shared AuditPublisher), as content publishes its
 * search and answer events — no bus round trip
 * in the request. The reporting service stores each event once (by its id) and counts it once when
 * it seals it. A call for a KB is the KB's; a call of an understanding-API key names no KB and is
 * its account's (`kbid` = the account id, `details.scope` `account`), with the key (`nua_key_id`).
 * Never fails the request: events lost to a bus outage are logged. Events still waiting at shutdown
 * are published then.
 */
@Injectable()
export class PredictUsage implements OnModuleDestroy {
  private readonly logger = new Logger('PredictUsage');
  private readonly publisher: AuditPublisher;

  constructor(@Inject(MESSAGE_BUS) bus: MessageBus) {
    this.publisher = new AuditPublisher(bus, ContentSubjects.auditBatch, (events, err) =>
      this.logger.warn(`${events.length} predict usage events not published: ${err instanceof Error ? err.message : String(err)}`),
    );
  }

  /**
   * One call of `endpoint` (`sentence`, `compat/embeddings`…) that ran, for `kbid` or (none) for the
   * caller's account. An understanding-API key's call is classed as a self-hosted search or answer
   * either way, and carries the key (`nua_key_id`).
   */
  record(
    req: AuthedRequest,
    kbid: string | undefined,
    endpoint: string,
    started: number,
    outcome: PredictOutcome = {},
    body?: unknown,
  ): void {
    const actor = actorOf(req);
    const account = req.principal?.account_id;
    const scope = kbid ? 'kb' : 'account';
    const owner = kbid ?? account;
    if (!owner) return; // a UA key always names its account (the access rule requires it)
    // A key's call stands for a self-hosted deployment's search or answer, on a KB of its account or not.
    const selfHosted = req.principal?.kind === 'ua_key' ? selfHostedUse(endpoint, body) : undefined;
    const details: Record<string, unknown> = {
      endpoint,
      scope,
      ...(scope === 'account' ? { account_id: owner } : {}),
      ...(selfHosted ? { self_hosted: selfHosted } : {}),
      ...(outcome.input_tokens ? { input_tokens: outcome.input_tokens } : {}),
      ...(outcome.output_tokens ? { output_tokens: outcome.output_tokens } : {}),
      ...(outcome.model ? { model: outcome.model } : {}),
      ...(outcome.failed ? { status: 'error' } : {}),
    };
    this.publisher.record({
      event_id: randomUUID(),
      kbid: owner,
      type: 'predict',
      date: new Date().toISOString(),
      total_duration: Math.max(0, Math.round(performance.now() - started)),
      user_type: actor.user_type ?? 'user',
      ...(actor.user ? { user_id: actor.user } : {}),
      ...(actor.client_type ? { client_type: actor.client_type } : {}),
      ...(actor.nua_key_id ? { nua_key_id: actor.nua_key_id } : {}),
      details,
    });
  }

  /** Publishes the waiting events as one message. */
  flush(): Promise<void> {
    return this.publisher.flush();
  }

  /** Shutdown: the waiting events go out, and the publishes under way finish, before the bus closes. */
  onModuleDestroy(): Promise<void> {
    return this.publisher.close();
  }
}
