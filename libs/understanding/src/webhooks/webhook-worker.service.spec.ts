import { OutboundHttp } from '@kb/platform/net';
import { createHmac } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { webhookSecret, type DeliverWebhookJob, type WebhookAttemptDto } from '@kb/contracts';
import type { DeliveryMeta, MessageBus } from '@kb/platform/messaging';
import { createLogger } from '@kb/platform/observability';
import { WebhookWorkerService } from './webhook-worker.service';

/** The tests' servers are on loopback: this client's policy names it (as OUTBOUND_ALLOW_CIDRS would). */
const local = new OutboundHttp({ policy: { allowCidrs: ['127.0.0.1'] } });
/** The default policy: public addresses only. */
const strict = new OutboundHttp();
afterAll(() => Promise.all([local.close(), strict.close()]));

describe('WebhookWorkerService', () => {
  const SERVER_SECRET = 's'.repeat(64);
  let server: Server;
  let base: string;
  /** What the receiver answers next, and what it received. */
  let answer = 200;
  const received: { headers: IncomingHttpHeaders; body: string }[] = [];
  const reports: WebhookAttemptDto[] = [];
  const bus = { enqueue: async (_def: unknown, payload: WebhookAttemptDto) => void reports.push(payload) } as unknown as MessageBus;
  const worker = (allowPrivate = true) =>
    new WebhookWorkerService(
      bus,
      {
        consumeJobs: false,
        concurrency: 1,
        maxAttempts: 3,
        outbound: allowPrivate ? local : strict,
        webhookSigningSecret: SERVER_SECRET,
        webhookMaxAttempts: 3,
      },
      createLogger({ service: 't', level: 'silent' }),
    );
  const meta = (deliveryCount: number) => ({ id: 'm', subject: 's', deliveryCount, context: {} }) as DeliveryMeta;
  const job = (over: Partial<DeliverWebhookJob> = {}): DeliverWebhookJob => ({
    delivery_id: 'd-1',
    processing_id: 'p-1',
    event: 'processing.completed',
    uri: `${base}/hook`,
    client: 'client-1',
    headers: { authorization: 'Bearer receiver-token', 'content-type': 'text/evil', 'X-Webhook-Id': 'forged' },
    body: { id: 'd-1', status: 'PROCESSED' },
    ...over,
  });

  beforeAll(async () => {
    server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        received.push({ headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
        res.writeHead(answer, answer === 302 ? { location: 'http://127.0.0.1:1/elsewhere' } : {}).end('ok');
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise((r) => server.close(r)));
  beforeEach(() => {
    received.length = 0;
    reports.length = 0;
    answer = 200;
  });

  it("POSTs the body signed with the client's secret, with its headers but not over the reserved ones", async () => {
    await worker().deliver(job(), meta(1));
    expect(received).toHaveLength(1);
    const got = received[0] as { headers: IncomingHttpHeaders; body: string };
    expect(JSON.parse(got.body)).toEqual({ id: 'd-1', status: 'PROCESSED' });
    expect(got.headers).toMatchObject({
      'content-type': 'application/json',
      authorization: 'Bearer receiver-token',
      'x-webhook-id': 'd-1',
      'x-webhook-event': 'processing.completed',
      'x-webhook-attempt': '1',
    });
    // A receiver verifies the signature with the secret the client reads from GET /processing/webhook-secret.
    const [, t, v1] = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(String(got.headers['x-webhook-signature'])) ?? [];
    expect(Math.abs(Number(t) - Date.now() / 1000)).toBeLessThan(60);
    expect(v1).toBe(createHmac('sha256', webhookSecret(SERVER_SECRET, 'client-1')).update(`${t}.${got.body}`).digest('hex'));
    expect(v1).not.toBe(createHmac('sha256', webhookSecret(SERVER_SECRET, 'client-2')).update(`${t}.${got.body}`).digest('hex'));
    expect(reports).toEqual([
      expect.objectContaining({ delivery_id: 'd-1', attempt: 1, status_code: 200, error: null, outcome: 'delivered' }),
    ]);
  });

  it('retries 5xx, 429 and network errors through the bus, and gives up after the last attempt', async () => {
    answer = 503;
    await expect(worker().deliver(job(), meta(1))).rejects.toThrow(/HTTP 503/);
    answer = 429;
    await expect(worker().deliver(job(), meta(2))).rejects.toThrow(/HTTP 429/);
    answer = 500;
    await worker().deliver(job(), meta(3));
    expect(reports.map((r) => [r.attempt, r.status_code, r.outcome])).toEqual([
      [1, 503, null],
      [2, 429, null],
      [3, 500, 'failed'],
    ]);
    await expect(worker().deliver(job({ uri: 'http://127.0.0.1:1/closed' }), meta(1))).rejects.toThrow();
    expect(reports.at(-1)).toMatchObject({ status_code: null, outcome: null, error: expect.any(String) });
  });

  it('fails at once on other answers (no redirect followed) and on addresses the SSRF guard refuses', async () => {
    answer = 404;
    await worker().deliver(job(), meta(1));
    answer = 302;
    await worker().deliver(job(), meta(1));
    expect(received).toHaveLength(2);
    await worker(false).deliver(job(), meta(1));
    expect(received).toHaveLength(2);
    expect(reports.map((r) => [r.status_code, r.outcome])).toEqual([
      [404, 'failed'],
      [302, 'failed'],
      [null, 'failed'],
    ]);
    expect(reports[2]?.error).toMatch(/127\.0\.0\.1|forbidden|private/i);
  });
});
