import { jwtVerify, SignJWT } from 'jose';

const ISSUER = 'kb-service';
const AUDIENCE = 'kb-temporal-key';

function key(secret: string): Uint8Array {
  return new TextEncoder().encode(`temporal-key:${secret}`);
}

export interface TemporalKeyClaims {
  /** Credential id of the API key it derives from: revoking that key revokes this one. */
  parentKeyId: string;
  groups?: string[];
  expires: Date;
}

/** A signed, self-contained key of at most a few seconds; nothing is stored for it. */
export async function signTemporalKey(secret: string, parentKeyId: string, ttlSeconds: number, groups?: string[]): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  return new SignJWT(groups && groups.length > 0 ? { grp: groups } : {})
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .setSubject(parentKeyId)
    .setIssuer(ISSUER)
    .setAudience(AUDIENCE)
    .setIssuedAt(now)
    .setExpirationTime(now + ttlSeconds)
    .sign(key(secret));
}

export async function verifyTemporalKey(secret: string, token: string): Promise<TemporalKeyClaims | null> {
  try {
    // No clock tolerance: the lifetime is the point of these keys.
    const { payload } = await jwtVerify(token, key(secret), { issuer: ISSUER, audience: AUDIENCE, algorithms: ['HS256'] });
    if (!payload.sub || !payload.exp) return null;
    const grp = payload['grp'];
    const groups = Array.isArray(grp) && grp.every((g) => typeof g === 'string') ? (grp as string[]) : undefined;
    return { parentKeyId: payload.sub, groups, expires: new Date(payload.exp * 1000) };
  } catch {
    return null;
  }
}
