import type { TxtResolver } from './saml/domain-resolver';

/** Injection tokens and options of the accounts service. */
export const ACCOUNTS_DATA_SOURCE = Symbol('ACCOUNTS_DATA_SOURCE');
export const ACCOUNTS_OPTIONS = Symbol('ACCOUNTS_OPTIONS');

export interface AccountsOptions {
  /** Zone this deployment serves; new KBs are created in it. */
  zone: string;
  /** Server secret: keys the HMAC of stored credential hashes and signs user tokens. */
  secret: string;
  /** Lifetime of user tokens in seconds (short by design). */
  userTokenTtlSeconds: number;
  /** External address of the gateway: invitation links and SAML endpoints are built on it. */
  publicBaseUrl: string;
  /** SMTP server for invitation mails (`smtp://user:pass@host:port`); without it links are returned to the inviter. */
  smtp?: { url: string; from: string };
  /** DNS servers asked for domain-verification TXT records (`host` or `host:port`); default: the system's. */
  dnsServers?: string[];
  /** How often the outbox sweeps events whose publish failed or was cut short (default 5 s). */
  outboxSweepMs?: number;
  /** When the sweep first takes an event the writer has not published yet (default 10 s). */
  outboxFirstRetryMs?: number;
}

/** Answers the TXT lookups of domain verification (tests hand in one pointed at a local DNS server). */
export const DOMAIN_RESOLVER = Symbol('DOMAIN_RESOLVER');
export type { TxtResolver };
