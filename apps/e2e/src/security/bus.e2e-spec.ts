import { AccountsSubjects, UnderstandingSubjects, type BusApp } from '@kb/contracts';
import { connect, createInbox, type NatsConnection, type NatsError } from 'nats';
import { bearer } from '../support/http-client';
import { startDistributed, type Topology } from '../support/topologies';
import { describeAskCancellation } from './bus-cancellation';

const encode = (value: unknown) => new TextEncoder().encode(JSON.stringify(value));
const decode = (data: Uint8Array) => JSON.parse(new TextDecoder().decode(data)) as unknown;

/**
 * Attacks on the bus itself, from someone who reaches NATS (a compromised pod, a neighbour on the
 * network): before the fix any connection could publish and subscribe anything, e.g. ask for a
 * KB's provider keys or inject processing results. Each app now has its own user whose subject
 * permissions follow the bus access table; nobody connects anonymously.
 */
describe('bus security — distributed', () => {
  let topology: Topology;
  const open: NatsConnection[] = [];
  let kbid: string;

  const nats = () => topology.nats as NonNullable<Topology['nats']>;
  const inboxes = new Map<NatsConnection, string>();
  const connectAs = async (app: BusApp) => {
    const nc = await connect({ servers: nats().url, ...nats().credentials(app), maxReconnectAttempts: 0 });
    open.push(nc);
    inboxes.set(nc, `_INBOX.${app}`);
    return nc;
  };
  /** A request as the apps send them: one reply inbox per call, under the app's own prefix. */
  const resolveConfig = (nc: NatsConnection) =>
    nc.request(nats().prefix + AccountsSubjects.resolveKbConfig.subject, encode({ kb_id: kbid }), {
      timeout: 5_000,
      noMux: true,
      reply: createInbox(inboxes.get(nc)),
    });

  beforeAll(async () => {
    topology = await startDistributed();
    const boot = topology.bootstrap();
    // A KB with a provider key: what `accounts.kb-config.resolve` hands out in clear.
    const res = await topology.http.call<{ uuid?: string; id?: string }>('POST', `/api/v1/account/${boot.account.id}/kbs`, {
      credential: bearer(boot.personal_access_token.token),
      body: {
        slug: 'keyed-kb',
        title: 'keyed',
        learning_configuration: {
          generative_model: 'chatgpt-4o-mini',
          user_keys: { openai: { url: 'http://127.0.0.1:9/v1', key: 'sk-the-tenants-secret' } },
        },
      },
    });
    expect(res.status).toBe(201);
    kbid = (res.body.uuid ?? res.body.id) as string;
  }, 240_000);

  afterAll(async () => {
    await Promise.all(open.map((nc) => nc.close().catch(() => undefined)));
    await topology?.stop();
  }, 60_000);

  it('refuses a connection without credentials', async () => {
    await expect(connect({ servers: nats().url, maxReconnectAttempts: 0 })).rejects.toMatchObject({ code: 'AUTHORIZATION_VIOLATION' });
  });

  it('refuses a connection with a wrong password', async () => {
    await expect(connect({ servers: nats().url, user: 'content', pass: 'guessed', maxReconnectAttempts: 0 })).rejects.toMatchObject({
      code: 'AUTHORIZATION_VIOLATION',
    });
  });

  it("gives a KB's provider keys to the content service, which calls the provider", async () => {
    const reply = decode((await resolveConfig(await connectAs('content'))).data);
    expect(JSON.stringify(reply)).toContain('sk-the-tenants-secret');
  });

  it.each(['gateway', 'reporting'] as const)("does not let the %s ask for a KB's provider keys", async (app) => {
    const err = (await resolveConfig(await connectAs(app)).catch((e: unknown) => e)) as NatsError;
    expect(err.code).toBe('PERMISSIONS_VIOLATION');
    expect(err.permissionContext).toEqual({ operation: 'publish', subject: nats().prefix + AccountsSubjects.resolveKbConfig.subject });
  });

  it('does not let the gateway publish processing results', async () => {
    const nc = await connectAs('gateway');
    const fake = {
      processing_id: 'p1',
      kbid,
      rid: '00000000-0000-0000-0000-000000000000',
      field_type: 'text',
      field_id: 'body',
      seqid: 1,
      status: 'ok',
    };
    const err = (await nc
      .jetstream()
      .publish(nats().prefix + UnderstandingSubjects.fieldProcessed.subject, encode(fake))
      .catch((e: unknown) => e)) as NatsError;
    expect(err.code).toBe('PERMISSIONS_VIOLATION');
  });

  it('does not let the gateway read the replies meant for another app', async () => {
    const nc = await connectAs('gateway');
    const refused = new Promise<NatsError | null>((resolve) => {
      nc.subscribe('_INBOX.content.>', { callback: (err) => resolve(err) });
    });
    // The content service asks for the keys meanwhile: its reply must not reach the gateway.
    await resolveConfig(await connectAs('content'));
    expect(await refused).toMatchObject({ code: 'PERMISSIONS_VIOLATION' });
  });

  describeAskCancellation(() => topology);
});
