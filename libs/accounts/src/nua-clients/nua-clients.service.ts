import { Inject, Injectable } from '@nestjs/common';
import { randomBytes, randomUUID } from 'node:crypto';
import type { DataSource, EntityManager } from 'typeorm';
import {
  AccountsSubjects,
  DomainError,
  ErrorCodes,
  keepMaskedSecrets,
  maskSecrets,
  type CreateNuaClientRequest,
  type ListNuaClientsRequest,
  type ModifyNuaClientRequest,
  type NuaClientDto,
  type NuaClientKeyDto,
  type NuaClientListDto,
  type NuaClientRef,
  type NuaClientWebhookDto,
  webhookSecret,
  type WebhookSecretDto,
} from '@kb/contracts';
import { translateUniqueViolation } from '@kb/platform/database';
import { ACCOUNTS_DATA_SOURCE, ACCOUNTS_OPTIONS, type AccountsOptions } from '../accounts.tokens';
import { issueSecret } from '../credentials/secret-tokens';
import { AccountsOutbox, outboxEvent, type OutboxEvent } from '../outbox/accounts-outbox';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** UA keys have no natural expiry: they live until renewed or deleted. */
const UA_KEY_LIFETIME_MS = 100 * 365 * 24 * 3600 * 1000;

interface Row {
  internal_id: string;
  account_id: string;
  client_id: string;
  title: string;
  description: string;
  contact: string;
  partitions: number;
  processing_webhook: { uri: string; headers?: Record<string, string> } | null;
  allow_kb_management: boolean;
  created_at: Date;
}

/** Understanding-API clients of an account and their UA key (one live key at a time). */
@Injectable()
export class NuaClientsService {
  constructor(
    @Inject(ACCOUNTS_OPTIONS) private readonly options: AccountsOptions,
    @Inject(ACCOUNTS_DATA_SOURCE) private readonly ds: DataSource,
    private readonly outbox: AccountsOutbox,
  ) {}

  async create(req: CreateNuaClientRequest): Promise<NuaClientKeyDto> {
    const internalId = randomUUID();
    const clientId = req.body.client_id ?? `client-${randomBytes(6).toString('hex')}`;
    const b = req.body;
    return translateUniqueViolation(
      () =>
        this.ds.transaction(async (m) => {
          await m.query(
            `INSERT INTO accounts.nua_clients (internal_id, account_id, client_id, title, description, contact, processing_webhook, allow_kb_management)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
            [
              internalId,
              req.account_id,
              clientId,
              b.title ?? clientId,
              b.description ?? '',
              b.contact,
              b.processing_webhook ? JSON.stringify(b.processing_webhook) : null,
              b.allow_kb_management ?? false,
            ],
          );
          return { token: await this.newKey(m, internalId), client_id: clientId, internal_id: internalId };
        }),
      { code: ErrorCodes.CONFLICT, message: `A client with client_id "${clientId}" already exists in this account` },
    );
  }

  async list(req: ListNuaClientsRequest): Promise<NuaClientListDto> {
    const rows: Row[] = await this.ds.query(
      `SELECT * FROM accounts.nua_clients WHERE account_id = $1 AND ($2::text IS NULL OR client_id = $2) ORDER BY created_at`,
      [req.account_id, req.client_id ?? null],
    );
    return { clients: rows.map(toDto) };
  }

  async get(ref: NuaClientRef): Promise<NuaClientDto> {
    return toDto(await this.require(ref));
  }

  /** The webhook in clear: only on the internal bus, for the push that schedules its calls. */
  async webhook(ref: NuaClientRef): Promise<NuaClientWebhookDto> {
    return { processing_webhook: (await this.require(ref)).processing_webhook };
  }

  async modify(req: ModifyNuaClientRequest): Promise<null> {
    const row = await this.require(req);
    const b = req.body;
    // A webhook read back (its headers masked) and sent again keeps the stored headers.
    const webhook = b.processing_webhook ? keepMaskedSecrets(b.processing_webhook, row.processing_webhook) : b.processing_webhook;
    await this.ds.query(
      `UPDATE accounts.nua_clients SET title = $2, description = $3, contact = $4, processing_webhook = $5 WHERE internal_id = $1`,
      [
        row.internal_id,
        b.title ?? row.title,
        b.description ?? row.description,
        b.contact ?? row.contact,
        webhook === undefined
          ? row.processing_webhook
            ? JSON.stringify(row.processing_webhook)
            : null
          : webhook
            ? JSON.stringify(webhook)
            : null,
      ],
    );
    return null;
  }

  async delete(ref: NuaClientRef): Promise<null> {
    const row = await this.require(ref);
    await this.outbox.commit(this.ds, async (m) => {
      const keys: { id: string }[] = await m.query(
        `WITH d AS (DELETE FROM accounts.secret_credentials WHERE owner_id = $1 AND kind = 'ua_key' RETURNING id) SELECT id FROM d`,
        [row.internal_id],
      );
      await m.query(`DELETE FROM accounts.nua_clients WHERE internal_id = $1`, [row.internal_id]);
      return { result: undefined, events: revocation(keys) };
    });
    return null;
  }

  /** A new key for the client; the previous one stops working at once. */
  /** Derived from the server secret and the client's internal id, as the webhook workers derive it to sign. */
  async webhookSecret(ref: NuaClientRef): Promise<WebhookSecretDto> {
    const row = await this.require(ref);
    return { secret: webhookSecret(this.options.secret, row.internal_id) };
  }

  async renewKey(ref: NuaClientRef): Promise<NuaClientKeyDto> {
    const row = await this.require(ref);
    const token = await this.outbox.commit(this.ds, async (m) => {
      const old: { id: string }[] = await m.query(
        `WITH d AS (DELETE FROM accounts.secret_credentials WHERE owner_id = $1 AND kind = 'ua_key' RETURNING id) SELECT id FROM d`,
        [row.internal_id],
      );
      return { result: await this.newKey(m, row.internal_id), events: revocation(old) };
    });
    return { token, client_id: row.client_id, internal_id: row.internal_id };
  }

  private async newKey(m: EntityManager, internalId: string): Promise<string> {
    const issued = issueSecret('ua_key', this.options.secret);
    await m.query(
      `INSERT INTO accounts.secret_credentials (id, kind, owner_id, description, salt, secret_hash, created_at, expires_at) VALUES ($1, 'ua_key', $2, '', $3, $4, now(), $5)`,
      [issued.id, internalId, issued.salt, issued.hash, new Date(Date.now() + UA_KEY_LIFETIME_MS)],
    );
    return issued.token;
  }

  private async require(ref: NuaClientRef): Promise<Row> {
    const rows: Row[] = await this.ds.query(
      `SELECT * FROM accounts.nua_clients WHERE account_id = $1 AND (client_id = $2 OR ($3::boolean AND internal_id::text = $2))`,
      [ref.account_id, ref.client, UUID.test(ref.client)],
    );
    if (!rows[0]) throw new DomainError(ErrorCodes.NOT_FOUND, 'Understanding-API client not found');
    return rows[0];
  }
}

function toDto(r: Row): NuaClientDto {
  return {
    title: r.title,
    description: r.description,
    contact: r.contact,
    created: new Date(r.created_at).toISOString(),
    partitions: r.partitions,
    client_id: r.client_id,
    internal_id: r.internal_id,
    account_id: r.account_id,
    processing_webhook: r.processing_webhook ? maskSecrets(r.processing_webhook) : null,
    allow_kb_management: r.allow_kb_management,
  };
}

/** The credentialRevoked event for deleted keys (none for none). */
function revocation(keys: { id: string }[]): OutboxEvent[] {
  return keys.length > 0 ? [outboxEvent(AccountsSubjects.credentialRevoked, { credential_ids: keys.map((k) => k.id) })] : [];
}
