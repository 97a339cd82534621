import { promises as dns } from 'node:dns';

/** The one DNS question domain verification asks: the TXT records at a name. */
export interface TxtResolver {
  resolveTxt(name: string): Promise<string[][]>;
}

/**
 * Node's resolver, asking `servers` (`host` or `host:port`, as DNS_SERVERS lists them) or the
 * system's resolvers. A fresh Resolver per check: no answer is cached between attempts, so a record
 * published a minute ago is seen when the owner presses "verify" again.
 */
export function systemTxtResolver(servers?: readonly string[]): TxtResolver {
  return {
    resolveTxt: (name) => {
      const resolver = new dns.Resolver({ timeout: 3000, tries: 2 });
      if (servers && servers.length > 0) resolver.setServers([...servers]);
      return resolver.resolveTxt(name);
    },
  };
}

/** The TXT record an account publishes to prove it controls `domain`. */
export const CHALLENGE_PREFIX = '_kb-challenge';
export const VERIFICATION_PREFIX = 'kb-domain-verification=';

/** Whether any TXT record at `_kb-challenge.<domain>` or at `<domain>` itself carries the token. */
export async function domainHasToken(resolver: TxtResolver, domain: string, token: string): Promise<boolean> {
  const expected = `${VERIFICATION_PREFIX}${token}`;
  for (const name of [`${CHALLENGE_PREFIX}.${domain}`, domain]) {
    // NXDOMAIN, no data, a timeout: all mean "not proven (yet)".
    const records = await resolver.resolveTxt(name).catch(() => [] as string[][]);
    // A long TXT record arrives in 255-byte chunks: join them before comparing.
    if (records.some((chunks) => chunks.join('').trim() === expected)) return true;
  }
  return false;
}
