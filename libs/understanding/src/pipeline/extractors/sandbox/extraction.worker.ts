import { parentPort } from 'node:worker_threads';
import { ExtractionError } from '../extraction.error';
import type { SandboxReply, SandboxRequest } from './sandbox-protocol';
import { runSandboxTask } from './sandbox-tasks';

/**
 * Entry of a sandbox worker thread (see extraction-sandbox.ts): runs one task per message and
 * answers with its result or its ExtractionError. Anything else a parser throws is the file's
 * fault (CORRUPT_FILE); running out of heap or time is handled by the pool, which kills the thread.
 */
const port = parentPort;
if (!port) throw new Error('extraction.worker must run in a worker thread');

// Parsers print warnings; they do not belong in the service's logs. (Piping the worker's stdio
// instead would keep the process alive: Node does not unref those streams with the worker.)
const silent = (): boolean => true;
process.stdout.write = silent;
process.stderr.write = silent;

port.on('message', (request: SandboxRequest) => {
  void runSandboxTask(request.task).then(
    (result) => port.postMessage({ id: request.id, ok: true, result } satisfies SandboxReply),
    (err: unknown) => {
      const error = err instanceof ExtractionError ? err : new ExtractionError(`File could not be read: ${err instanceof Error ? err.message : String(err)}`, 'CORRUPT_FILE');
      port.postMessage({ id: request.id, ok: false, code: error.code, message: error.message } satisfies SandboxReply);
    },
  );
});
