import type { Socket } from 'node:net';

/**
 * Makes the writes a socket receives in one turn of the event loop leave as one system call.
 *
 * Why: pglite-socket answers each frontend message of a query separately (ParseComplete,
 * BindComplete, RowDescription, DataRows, CommandComplete, ReadyForQuery…), each with its own
 * socket write. On the embedded database's thread those writes were 14 % of its time in the
 * create-resource benchmark. Corking on the first write of a turn and uncorking once the turn's
 * work is done (setImmediate runs after it) sends them together; the client sees the same bytes.
 */
export function coalesceWrites(socket: Socket): Socket {
  let corked = false;
  const write = socket.write.bind(socket) as (...args: unknown[]) => boolean;
  socket.write = ((...args: unknown[]) => {
    if (!corked) {
      corked = true;
      socket.cork();
      setImmediate(() => {
        corked = false;
        socket.uncork();
      });
    }
    return write(...args);
  }) as Socket['write'];
  return socket;
}
