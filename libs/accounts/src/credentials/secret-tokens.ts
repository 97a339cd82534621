import { createHmac, randomBytes, randomUUID, scrypt as scryptCb, timingSafeEqual } from 'node:crypto';
import { availableParallelism } from 'node:os';
import { promisify } from 'node:util';
import { DomainError, ErrorCodes } from '@kb/contracts';
import { Gate } from '@kb/platform/concurrency';

const scrypt = promisify(scryptCb) as (
  password: string,
  salt: Buffer,
  keylen: number,
  options: { N: number; r: number; p: number; maxmem: number },
) => Promise<Buffer>;

/**
 * Credential tokens look like `<prefix>_<id without dashes>_<secret>`: the id finds the row in one
 * indexed read, the secret is checked against a salted HMAC-SHA256. Secrets are 256 random bits,
 * so a fast keyed hash is safe here (a memory-hard hash is for low-entropy passwords only) and
 * keeps verification well under a millisecond.
 */
export const TOKEN_PREFIX = { api_key: 'kbk', pat: 'kbp', ua_key: 'kbu' } as const;
export type TokenKind = keyof typeof TOKEN_PREFIX;

export interface IssuedSecret {
  id: string;
  token: string;
  salt: string;
  hash: string;
}

export function issueSecret(kind: TokenKind, pepper: string): IssuedSecret {
  const id = randomUUID();
  const secret = randomBytes(32).toString('base64url');
  const salt = randomBytes(16).toString('base64url');
  return { id, token: `${TOKEN_PREFIX[kind]}_${id.replace(/-/g, '')}_${secret}`, salt, hash: hashSecret(secret, salt, pepper) };
}

export function hashSecret(secret: string, salt: string, pepper: string): string {
  return createHmac('sha256', pepper).update(salt).update('\0').update(secret).digest('base64url');
}

export interface ParsedToken {
  kind: TokenKind;
  id: string;
  secret: string;
}

export function parseToken(token: string): ParsedToken | null {
  const match = /^(kbk|kbp|kbu)_([0-9a-f]{32})_([A-Za-z0-9_-]{43})$/.exec(token);
  if (!match) return null;
  const kind = (Object.keys(TOKEN_PREFIX) as TokenKind[]).find((k) => TOKEN_PREFIX[k] === match[1]);
  if (!kind) return null;
  const h = match[2] as string;
  const id = `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
  return { kind, id, secret: match[3] as string };
}

export function secretMatches(secret: string, salt: string, expectedHash: string, pepper: string): boolean {
  const actual = Buffer.from(hashSecret(secret, salt, pepper));
  const expected = Buffer.from(expectedHash);
  return actual.length === expected.length && timingSafeEqual(actual, expected);
}

/** Passwords: scrypt (memory-hard), parameters stored with the hash so they can be raised later. */
const SCRYPT = { N: 16384, r: 8, p: 1, keylen: 32 };

/**
 * Every password hash of this process goes through one limiter: half the cores at once (at least
 * one), a short queue, then 429. The hash parameters are unchanged; only how many run together.
 */
const passwordWork = new Gate(Math.max(1, Math.floor(availableParallelism() / 2)), {
  maxWaiting: 64,
  refuse: () =>
    new DomainError(ErrorCodes.RATE_LIMITED, 'Too many sign-ins in progress; try again in a moment', {
      try_after: Math.ceil(Date.now() / 1000) + 1,
    }),
});

export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const key = await passwordWork.run(() =>
    scrypt(password.normalize('NFKC'), salt, SCRYPT.keylen, { N: SCRYPT.N, r: SCRYPT.r, p: SCRYPT.p, maxmem: 64 * 1024 * 1024 }),
  );
  return `scrypt$${SCRYPT.N}$${SCRYPT.r}$${SCRYPT.p}$${salt.toString('base64url')}$${key.toString('base64url')}`;
}

export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const parts = stored.split('$');
  if (parts.length !== 6 || parts[0] !== 'scrypt') return false;
  const [, n, r, p, saltB64, keyB64] = parts as [string, string, string, string, string, string];
  const expected = Buffer.from(keyB64, 'base64url');
  const key = await passwordWork.run(() =>
    scrypt(password.normalize('NFKC'), Buffer.from(saltB64, 'base64url'), expected.length, {
      N: Number(n),
      r: Number(r),
      p: Number(p),
      maxmem: 64 * 1024 * 1024,
    }),
  );
  return key.length === expected.length && timingSafeEqual(key, expected);
}

export function generatePassword(): string {
  return randomBytes(18).toString('base64url');
}
