import { jwtVerify, SignJWT } from 'jose';
import { randomUUID } from 'node:crypto';

const ISSUER = 'kb-service';
const AUDIENCE = 'kb-ephemeral';

/** Its own key: a token of another kind (user token, temporal key) never verifies as this one, nor this as them. */
function key(secret: string): Uint8Array {
  return new TextEncoder().encode(`ephemeral-token:${secret}`);
}

export interface EphemeralTokenClaims {
  /** The KB it opens (read-only, download routes). */
  kbid: string;
  /** Who it acts for: a user, or an API key (credential id), whose rights it never exceeds. */
  owner: { kind: 'user' | 'api_key'; id: string };
  id: string;
  expires: Date;
}

/** A signed, self-contained browser token of a few minutes; nothing is stored for it. */
export async function signEphemeralToken(
  secret: string,
  claims: Omit<EphemeralTokenClaims, 'id' | 'expires'>,
  ttlSeconds: number,
  agentSession?: string,
): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  return new SignJWT({ kb: claims.kbid, own: claims.owner.kind === 'user' ? 'u' : 'k', ...(agentSession ? { ses: agentSession } : {}) })
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .setSubject(claims.owner.id)
    .setJti(randomUUID())
    .setIssuer(ISSUER)
    .setAudience(AUDIENCE)
    .setIssuedAt(now)
    .setExpirationTime(now + ttlSeconds)
    .sign(key(secret));
}

export async function verifyEphemeralToken(secret: string, token: string): Promise<EphemeralTokenClaims | null> {
  try {
    // No clock tolerance: an expired token is refused at once.
    const { payload } = await jwtVerify(token, key(secret), { issuer: ISSUER, audience: AUDIENCE, algorithms: ['HS256'] });
    const kb = payload['kb'];
    const own = payload['own'];
    if (!payload.sub || !payload.jti || !payload.exp || typeof kb !== 'string' || (own !== 'u' && own !== 'k')) return null;
    return {
      kbid: kb,
      owner: { kind: own === 'u' ? 'user' : 'api_key', id: payload.sub },
      id: payload.jti,
      expires: new Date(payload.exp * 1000),
    };
  } catch {
    return null;
  }
}
