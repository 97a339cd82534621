import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AccountsSubjects, ErrorCodes, rpc } from '@kb/contracts';
import { silentLogger, type BusLogger, type MessageBus } from '@kb/platform/messaging';
import { startAuthNatsServer, type AuthNatsServer } from '@kb/platform/testing';
import { createRuntimeBus, readRuntimeEnv } from '../src';

/** A CA and a server certificate for 127.0.0.1, made with openssl for this run only. */
function makeCertificates(dir: string): { caFile: string; certFile: string; keyFile: string } {
  const file = (name: string) => join(dir, name);
  const openssl = (...args: string[]) => execFileSync('openssl', args, { stdio: 'ignore' });
  openssl(
    'req',
    '-x509',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-days',
    '1',
    '-subj',
    '/CN=test CA',
    '-keyout',
    file('ca.key'),
    '-out',
    file('ca.pem'),
  );
  openssl('req', '-newkey', 'rsa:2048', '-nodes', '-subj', '/CN=127.0.0.1', '-keyout', file('server.key'), '-out', file('server.csr'));
  writeFileSync(file('san.cnf'), 'subjectAltName=IP:127.0.0.1,DNS:localhost\n');
  openssl(
    'x509',
    '-req',
    '-in',
    file('server.csr'),
    '-CA',
    file('ca.pem'),
    '-CAkey',
    file('ca.key'),
    '-CAcreateserial',
    '-days',
    '1',
    '-extfile',
    file('san.cnf'),
    '-out',
    file('server.pem'),
  );
  return { caFile: file('ca.pem'), certFile: file('server.pem'), keyFile: file('server.key') };
}

describe('an app connecting to NATS with its own user over TLS (from the environment)', () => {
  let dir: string;
  let server: AuthNatsServer;
  let caFile: string;
  const buses: MessageBus[] = [];

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'kb-nats-tls-'));
    const certs = makeCertificates(dir);
    caFile = certs.caFile;
    server = await startAuthNatsServer({ tls: { certFile: certs.certFile, keyFile: certs.keyFile } });
  }, 60_000);

  afterAll(async () => {
    await Promise.all(buses.map((bus) => bus.close()));
    await server?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  const busFor = async (env: Record<string, string>, name: string, logger: BusLogger = silentLogger) => {
    const { runtime, reader } = readRuntimeEnv({ BUS_TRANSPORT: 'nats', ...env }, { transport: 'nats', port: 0 });
    reader.done();
    const bus = await createRuntimeBus(runtime, name, logger);
    buses.push(bus);
    return bus;
  };

  it('answers a request between two apps over TLS, each with its own password (one read from a file)', async () => {
    const passwordFile = join(dir, 'gateway.password');
    writeFileSync(passwordFile, `${server.credentials('gateway').pass}\n`, { mode: 0o600 });
    const accounts = await busFor({ ...server.appEnv('accounts'), NATS_TLS_CA: caFile }, 'accounts');
    const gateway = await busFor(
      { NATS_URL: server.url, NATS_USER: 'gateway', NATS_PASSWORD_FILE: passwordFile, NATS_TLS_CA: caFile },
      'gateway',
    );
    const def = rpc<{ kb_id: string }, { kb: string }>('accounts.kb.get');
    await accounts.handle(def, async (req) => ({ kb: req.kb_id }));
    await expect(gateway.request(def, { kb_id: 'kb1' })).resolves.toEqual({ kb: 'kb1' });
  }, 30_000);

  it('logs what the server refused when an app sends a request it may not send', async () => {
    const errors: Record<string, unknown>[] = [];
    const logger: BusLogger = { ...silentLogger, error: (_message, fields) => errors.push(fields ?? {}) };
    const gateway = await busFor({ ...server.appEnv('gateway'), NATS_TLS_CA: caFile }, 'gateway', logger);
    await expect(gateway.request(AccountsSubjects.resolveKbConfig, { kb_id: 'kb1' }, { timeoutMs: 500 })).rejects.toMatchObject({
      code: ErrorCodes.BUS_TIMEOUT,
    });
    expect(errors).toContainEqual({ operation: 'publish', subject: AccountsSubjects.resolveKbConfig.subject });
  }, 30_000);

  it('refuses a server whose certificate the CA did not sign', async () => {
    await expect(busFor({ ...server.appEnv('accounts') }, 'accounts')).rejects.toThrow();
  }, 30_000);

  it('reports NATS_PASSWORD without NATS_USER as a configuration error', () => {
    const { reader } = readRuntimeEnv({ NATS_PASSWORD: 'x' }, { transport: 'nats', port: 0 });
    expect(() => reader.done()).toThrow(/NATS_USER is required/);
  });
});
