import { createServer, connect, type Server, type Socket } from 'node:net';
import { coalesceWrites } from './coalesce-writes';

describe('coalesceWrites', () => {
  let server: Server;
  let client: Socket;
  let accepted: Promise<Socket>;

  beforeEach(async () => {
    accepted = new Promise((resolve) => {
      server = createServer((s) => resolve(s));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as { port: number }).port;
    client = connect(port, '127.0.0.1');
  });

  afterEach(async () => {
    client.destroy();
    (await accepted).destroy();
    await new Promise((resolve) => server.close(resolve));
  });

  it('sends the writes of one turn together, in order, and every later turn again', async () => {
    const socket = coalesceWrites(await accepted);
    const writev = jest.spyOn(socket as unknown as { _writev: (...a: unknown[]) => void }, '_writev');
    const received: Buffer[] = [];
    client.on('data', (d: Buffer) => received.push(d));
    const done = jest.fn();
    for (const part of ['P', 'B', 'D', 'E']) socket.write(Buffer.from(part));
    socket.write('Z', done);
    expect(writev).not.toHaveBeenCalled();
    await new Promise((r) => setImmediate(r));
    expect(writev).toHaveBeenCalledTimes(1);
    expect((writev.mock.calls[0]?.[0] as unknown[]).length).toBe(5);
    socket.write('again');
    await new Promise((r) => setImmediate(r));
    const until = Date.now() + 5000;
    while (Buffer.concat(received).toString() !== 'PBDEZagain' && Date.now() < until) await new Promise((r) => setTimeout(r, 10));
    expect(Buffer.concat(received).toString()).toBe('PBDEZagain');
    expect(done).toHaveBeenCalled();
  });
});
