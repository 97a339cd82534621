import { DomainError, EPHEMERAL_TOKEN_PARAM, ErrorCodes, type CredentialHeader } from '@kb/contracts';

/**
 * The credential headers, with the names clients of the reference system send counted as the
 * same header (X-NUCLIA-* and X-STF-*). A request may carry exactly one of all of these.
 */
export const CREDENTIAL_HEADERS: Record<string, CredentialHeader> = {
  authorization: 'authorization',
  'x-svc-serviceaccount': 'serviceaccount',
  'x-nuclia-serviceaccount': 'serviceaccount',
  'x-stf-serviceaccount': 'serviceaccount',
  'x-svc-uakey': 'uakey',
  'x-nuclia-nuakey': 'uakey',
  'x-stf-nuakey': 'uakey',
};

export interface PresentedCredential {
  header: CredentialHeader;
  /** The header name as sent, for error messages. */
  name: string;
  token: string;
}

type Headers = Record<string, string | string[] | undefined>;

/**
 * Returns the one credential of a request, null when there is none. Two or more (even two
 * copies of the same header) are rejected before anything else is looked at.
 */
export function presentedCredential(headers: Headers): PresentedCredential | null {
  const present: { name: string; value: string }[] = [];
  for (const name of Object.keys(CREDENTIAL_HEADERS)) {
    const raw = headers[name];
    if (raw === undefined) continue;
    const values = Array.isArray(raw) ? raw : [raw];
    for (const v of values) if (v.trim() !== '') present.push({ name, value: v.trim() });
  }
  if (present.length > 1) {
    throw new DomainError(
      ErrorCodes.MULTIPLE_CREDENTIALS,
      `Exactly one credential header is allowed per request; this one carries ${present.length}: ${present.map((p) => p.name).join(', ')}`,
    );
  }
  const only = present[0];
  if (!only) return null;
  const match = /^Bearer\s+(\S+)$/i.exec(only.value);
  if (!match) throw new DomainError(ErrorCodes.UNAUTHENTICATED, `The ${only.name} header must be "Bearer <token>"`);
  return { header: CREDENTIAL_HEADERS[only.name] as CredentialHeader, name: only.name, token: match[1] as string };
}

/**
 * A request's one credential: a header, or the `eph-token` query parameter (download routes).
 * Both at once are refused like two headers; `ephemeral` is the query parameter's token.
 */
export function presentedCredentials(req: { headers: Headers; query?: unknown }): {
  header: PresentedCredential | null;
  ephemeral?: string;
} {
  const header = presentedCredential(req.headers);
  const raw = (req.query as Record<string, unknown> | undefined)?.[EPHEMERAL_TOKEN_PARAM];
  if (raw === undefined) return { header };
  if (header) {
    throw new DomainError(
      ErrorCodes.MULTIPLE_CREDENTIALS,
      `Exactly one credential is allowed per request; this one carries the ${header.name} header and the ${EPHEMERAL_TOKEN_PARAM} query parameter`,
    );
  }
  if (typeof raw !== 'string' || raw.trim() === '' || raw.length > 4096)
    throw new DomainError(ErrorCodes.UNAUTHENTICATED, `The ${EPHEMERAL_TOKEN_PARAM} query parameter must be one token`);
  return { header, ephemeral: raw.trim() };
}
