import { Agent, createServer, request, type IncomingMessage, type OutgoingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A request the proxy could not get an answer to from any gateway: it answered 502 itself. */
export interface ProxyFailure {
  at: number;
  method: string;
  path: string;
  /** The gateway whose connection failed (the last one tried). */
  upstream: string;
  /** The socket error (ECONNRESET, ECONNREFUSED, …). */
  code: string;
}

/** Methods a load balancer may send again after a failed connection (RFC 9110 9.2.2: idempotent). */
const IDEMPOTENT = new Set(['GET', 'HEAD', 'OPTIONS', 'PUT', 'DELETE']);

/** Headers that describe one connection, not the message (RFC 9110 7.6.1). */
const HOP_BY_HOP = ['connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'upgrade'];

/** How long a gateway that refused a connection is left out of the rotation (passive health check). */
const EJECT_MS = 1_000;

/** Marks the 502s the proxy makes itself, so a test can tell them from a gateway's own 5xx. */
export const PROXY_ERROR_HEADER = 'x-proxy-upstream-error';

/**
 * A small round-robin HTTP reverse proxy in front of several gateway processes, with the rules of
 * the usual load balancers (nginx's `proxy_next_upstream error`, Envoy's connect-failure retry):
 *
 * - each request goes to the next gateway in turn, over a keep-alive connection pool per gateway;
 * - a request whose connection is refused (ECONNREFUSED: the gateway has closed its listener) never
 *   reached a gateway, so it is sent to the next one whatever its method; the refusing gateway is
 *   left out for a second;
 * - a request whose connection breaks before any response (ECONNRESET, "socket hang up") may or may
 *   not have been received: idempotent methods are sent to the next gateway, others (POST, PATCH)
 *   are answered 502 with the header `x-proxy-upstream-error: <code>` and recorded in `failures`;
 * - a gateway's own answer, 5xx included, is passed through unchanged.
 *
 * Bodies are buffered (the load is small JSON), so a retry can send the same bytes again.
 */
export class RoundRobinProxy {
  readonly failures: ProxyFailure[] = [];
  /** Requests sent again to another gateway, by error code. */
  readonly retried: Record<string, number> = {};
  private server?: Server;
  private next = 0;
  private readonly agents = new Map<string, Agent>();
  private readonly ejectedUntil = new Map<string, number>();

  constructor(private readonly upstreams: string[]) {
    for (const u of upstreams) this.agents.set(u, new Agent({ keepAlive: true, maxSockets: 32 }));
  }

  async listen(): Promise<string> {
    this.server = createServer((req, res) => void this.serve(req, res));
    await new Promise<void>((resolve) => this.server?.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  async close(): Promise<void> {
    for (const agent of this.agents.values()) agent.destroy();
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }

  private pick(): string {
    const now = Date.now();
    for (let i = 0; i < this.upstreams.length; i++) {
      const u = this.upstreams[this.next++ % this.upstreams.length] as string;
      if ((this.ejectedUntil.get(u) ?? 0) <= now) return u;
    }
    // Every gateway left out: try the next one anyway.
    return this.upstreams[this.next++ % this.upstreams.length] as string;
  }

  private async serve(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const body = Buffer.concat(chunks);
    const method = req.method ?? 'GET';
    let upstream = this.pick();
    // Each gateway once, plus one more round for a gateway that was restarting.
    for (let attempt = 1; ; attempt++) {
      const outcome = await this.forward(upstream, req, body, res);
      if (outcome === 'done') return;
      const code = outcome.code;
      if (code === 'ECONNREFUSED') this.ejectedUntil.set(upstream, Date.now() + EJECT_MS);
      const retry = (code === 'ECONNREFUSED' || IDEMPOTENT.has(method)) && attempt < this.upstreams.length * 2;
      if (retry) {
        this.retried[code] = (this.retried[code] ?? 0) + 1;
        upstream = this.pick();
        continue;
      }
      this.failures.push({ at: Date.now(), method, path: req.url ?? '', upstream, code });
      if (!res.headersSent) res.writeHead(502, { [PROXY_ERROR_HEADER]: code, 'content-type': 'text/plain' });
      res.end(`upstream ${code}`);
      return;
    }
  }

  /** One try: 'done' once the gateway's response is on its way to the client, or the socket error before it. */
  private forward(upstream: string, req: IncomingMessage, body: Buffer, res: ServerResponse): Promise<'done' | { code: string }> {
    return new Promise((resolve) => {
      const url = new URL(req.url ?? '/', upstream);
      const headers: OutgoingHttpHeaders = { ...req.headers, host: url.host, 'content-length': String(body.length) };
      for (const h of HOP_BY_HOP) delete headers[h];
      const out = request(url, { method: req.method, headers, agent: this.agents.get(upstream) }, (up) => {
        // Hop-by-hop headers stay on their hop (RFC 9110 7.6.1): passed on, the gateway's
        // `keep-alive: timeout=65` told the client to keep an idle connection for a minute that this
        // server closes after 5 s, and a request sent on it as it closed was reset (ECONNRESET).
        const answer = { ...up.headers };
        for (const h of HOP_BY_HOP) delete answer[h];
        res.writeHead(up.statusCode ?? 502, answer);
        up.pipe(res);
        // A connection cut mid-body cannot be retried: the client sees a truncated response.
        up.on('error', () => res.destroy());
        resolve('done');
      });
      out.on('error', (err: NodeJS.ErrnoException) => resolve({ code: err.code ?? err.message }));
      out.end(body);
    });
  }
}
