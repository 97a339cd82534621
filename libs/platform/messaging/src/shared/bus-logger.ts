/** The three levels the bus needs; pino, Nest's Logger adapters or a test spy all fit. */
export interface BusLogger {
  info(message: string, fields?: Record<string, unknown>): void;
  warn(message: string, fields?: Record<string, unknown>): void;
  error(message: string, fields?: Record<string, unknown>): void;
}

function write(level: 'info' | 'warn' | 'error', message: string, fields?: Record<string, unknown>): void {
  const line = JSON.stringify({ level, time: new Date().toISOString(), component: 'bus', msg: message, ...fields });
  // stderr for problems so they survive `> /dev/null` of normal output.
  if (level === 'info') process.stdout.write(line + '\n');
  else process.stderr.write(line + '\n');
}

/** Default logger: one JSON object per line, like pino, without the dependency. */
export const jsonConsoleLogger: BusLogger = {
  info: (message, fields) => write('info', message, fields),
  warn: (message, fields) => write('warn', message, fields),
  error: (message, fields) => write('error', message, fields),
};

export const silentLogger: BusLogger = { info: () => undefined, warn: () => undefined, error: () => undefined };

/** Serialises an unknown thrown value for a log line (Error objects stringify to `{}`). */
export function describeError(err: unknown): Record<string, unknown> {
  if (err instanceof Error) return { name: err.name, message: err.message, stack: err.stack };
  return { value: String(err) };
}
