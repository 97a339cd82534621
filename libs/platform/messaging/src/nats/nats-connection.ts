import { readFile } from 'node:fs/promises';
import { credsAuthenticator, type ConnectionOptions } from 'nats';
import { inboxPrefix } from './nats-codec';

/** How one app proves who it is to NATS; the server's per-user permissions do the rest. */
export type NatsAuth = { user: string; pass: string } | { credsFile: string };

/** TLS to the server: a private CA, and a client certificate when the server asks for one. */
export interface NatsTls {
  caFile?: string;
  certFile?: string;
  keyFile?: string;
}

/**
 * Credentials, TLS and the inbox prefix of one app's connection. Replies to an app arrive under
 * `_INBOX.<app>.`, so the server can let each app read its own replies and nobody else's.
 */
export async function connectionOptions(options: {
  servers: string | string[];
  name: string;
  auth?: NatsAuth;
  tls?: NatsTls;
}): Promise<ConnectionOptions> {
  const connection: ConnectionOptions = {
    servers: options.servers,
    name: options.name,
    maxReconnectAttempts: -1,
    inboxPrefix: inboxPrefix(options.name),
  };
  if (options.auth && 'credsFile' in options.auth) connection.authenticator = credsAuthenticator(await readFile(options.auth.credsFile));
  else if (options.auth) Object.assign(connection, { user: options.auth.user, pass: options.auth.pass });
  if (options.tls) connection.tls = { ...options.tls };
  return connection;
}
