import { ExtractionError } from '../extraction.error';
import type { SandboxReply, SandboxRequest } from './sandbox-protocol';
import { runSandboxTask } from './sandbox-tasks';

/**
 * Entry of a sandbox worker process (see extraction-sandbox.ts): runs one task per message and
 * answers with its result or its ExtractionError. Anything else a parser throws is the file's
 * fault (CORRUPT_FILE); running out of heap or time is handled by the pool, which kills the process.
 */
const send = process.send?.bind(process);
if (!send) throw new Error('extraction.worker must run as a child process with an IPC channel');

process.on('message', (request: SandboxRequest) => {
  void runSandboxTask(request.task).then(
    (result) => send({ id: request.id, ok: true, result } satisfies SandboxReply),
    (err: unknown) => {
      const error =
        err instanceof ExtractionError
          ? err
          : new ExtractionError(`File could not be read: ${err instanceof Error ? err.message : String(err)}`, 'CORRUPT_FILE');
      send({ id: request.id, ok: false, code: error.code, message: error.message } satisfies SandboxReply);
    },
  );
});
// The service went away (even without killing us): nothing will ask for work again.
process.on('disconnect', () => process.exit(0));
