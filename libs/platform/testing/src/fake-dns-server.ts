import { Packet, UDPServer } from 'dns2';

/**
 * An authoritative-looking DNS server on loopback (UDP) answering TXT questions from a table the
 * test fills in; every other name is NXDOMAIN. Point the service's resolver (DNS_SERVERS) at `server`.
 */
export interface FakeDnsServer {
  /** `127.0.0.1:<port>`, as DNS_SERVERS takes it. */
  server: string;
  /** Publishes (adds) a TXT record at `name`. */
  addTxt(name: string, value: string): void;
  /** TXT questions received, lower-cased names, oldest first. */
  queries: string[];
  close(): Promise<void>;
}

export async function startFakeDnsServer(): Promise<FakeDnsServer> {
  const txt = new Map<string, string[]>();
  const queries: string[] = [];
  const server = new UDPServer({ type: 'udp4' });
  server.on('request', (request, send) => {
    const response = Packet.createResponseFromRequest(request);
    const question = request.questions[0];
    const name = (question?.name ?? '').toLowerCase().replace(/\.$/, '');
    if (question?.type === Packet.TYPE.TXT) queries.push(name);
    const values = txt.get(name);
    if (!values)
      response.header.rcode = 3; // NXDOMAIN
    else if (question?.type === Packet.TYPE.TXT) {
      for (const data of values)
        response.answers.push({ name: question.name, type: Packet.TYPE.TXT, class: Packet.CLASS.IN, ttl: 1, data });
    }
    void send(response);
  });
  server.on('requestError', () => undefined);
  await server.listen(0, '127.0.0.1');
  const { port } = server.address();
  return {
    server: `127.0.0.1:${port}`,
    addTxt: (name, value) => txt.set(name.toLowerCase(), [...(txt.get(name.toLowerCase()) ?? []), value]),
    queries,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
