import { lookup as dnsLookup } from 'node:dns/promises';
import type { LookupFunction } from 'node:net';
import { buildConnector } from 'undici';
import type { AddressPolicy } from './address-policy';
import { OutboundError } from './outbound-error';

/** Resolves a host name to every address it has (as `dns.lookup(host, { all: true })`). */
export type Resolver = (hostname: string) => Promise<{ address: string; family: number }[]>;

export const systemResolver: Resolver = (hostname) => dnsLookup(hostname, { all: true, verbatim: true });

/**
 * A `lookup` for net.connect that resolves once and hands back only the addresses the policy
 * allows: the socket connects to an address that was checked, with no second resolution for a
 * rebinding DNS server to answer differently.
 */
export function guardedLookup(policy: AddressPolicy, resolve: Resolver): LookupFunction {
  return (hostname, options, callback) => {
    const refused = policy.refuseHost(hostname);
    if (refused) return callback(forbidden(hostname, refused), '', 0);
    resolve(hostname).then(
      (answers) => {
        const wanted = answers.filter((a) => !options.family || a.family === options.family);
        const allowed = wanted.filter((a) => !policy.refuseAddress(hostname, a.address));
        if (!allowed.length) {
          const first = wanted[0];
          const why = first ? (policy.refuseAddress(hostname, first.address) ?? '') : 'it has no address';
          return callback(first ? forbidden(hostname, why) : new OutboundError('FETCH_FAILED', `cannot resolve ${hostname}`), '', 0);
        }
        if (options.all) return callback(null, allowed);
        const [one] = allowed as [{ address: string; family: number }];
        callback(null, one.address, one.family);
      },
      (err: Error) =>
        callback(
          new OutboundError('FETCH_FAILED', `cannot resolve ${hostname}: ${(err as NodeJS.ErrnoException).code ?? err.message}`),
          '',
          0,
        ),
    );
  };
}

/**
 * undici's connector with the policy applied where the socket is made: an IP-literal host is
 * checked before any socket exists, a name through `guardedLookup`, and the address the socket
 * actually reached is checked once more before a byte of the request is written.
 */
export function guardedConnector(policy: AddressPolicy, resolve: Resolver, connectTimeoutMs: number): buildConnector.connector {
  const connect = buildConnector({ timeout: connectTimeoutMs, lookup: guardedLookup(policy, resolve) });
  return (options, callback) => {
    const refused = policy.refuseHost(options.hostname);
    if (refused) return callback(forbidden(options.hostname, refused), null);
    connect(options, (err, socket) => {
      if (err || !socket) return callback(err ?? new OutboundError('FETCH_FAILED', `no connection to ${options.hostname}`), null);
      const remote = socket.remoteAddress;
      const late = remote ? policy.refuseAddress(options.hostname, remote) : 'the connection has no remote address';
      if (late) {
        socket.destroy();
        return callback(forbidden(options.hostname, late), null);
      }
      callback(null, socket);
    });
  };
}

function forbidden(host: string, why: string): OutboundError {
  return new OutboundError('FORBIDDEN_ADDRESS', `refusing to connect to ${host}: ${why}`);
}
