import { jwtVerify, SignJWT } from 'jose';
import { randomUUID } from 'node:crypto';

const ISSUER = 'kb-service';
const AUDIENCE = 'kb-user';

function key(secret: string): Uint8Array {
  return new TextEncoder().encode(`user-token:${secret}`);
}

/** Short-lived signed user token (HS256). Carries only the user id and a token id. */
export async function signUserToken(
  secret: string,
  userId: string,
  ttlSeconds: number,
): Promise<{ token: string; id: string; expires: Date }> {
  const id = randomUUID();
  const now = Math.floor(Date.now() / 1000);
  const token = await new SignJWT({})
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .setSubject(userId)
    .setJti(id)
    .setIssuer(ISSUER)
    .setAudience(AUDIENCE)
    .setIssuedAt(now)
    .setExpirationTime(now + ttlSeconds)
    .sign(key(secret));
  return { token, id, expires: new Date((now + ttlSeconds) * 1000) };
}

export async function verifyUserToken(secret: string, token: string): Promise<{ userId: string; id: string; expires: Date } | null> {
  try {
    const { payload } = await jwtVerify(token, key(secret), { issuer: ISSUER, audience: AUDIENCE, algorithms: ['HS256'] });
    if (!payload.sub || !payload.jti || !payload.exp) return null;
    return { userId: payload.sub, id: payload.jti, expires: new Date(payload.exp * 1000) };
  } catch {
    return null;
  }
}
