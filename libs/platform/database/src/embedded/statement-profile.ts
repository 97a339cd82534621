import { writeFileSync } from 'node:fs';

/*
 * Where the embedded database's time goes, per statement text: for finding what bounds a write
 * path on PGlite (one WebAssembly thread serves every connection, so its busy time is the
 * ceiling). Enabled by EMBEDDED_DB_STATEMENT_STATS=<file>: the host rewrites the file every few
 * seconds with the statements that took the most time. Off by default: it costs a clock read
 * per wire message.
 */

const PARSE = 0x50; // 'P'
const QUERY = 0x51; // 'Q'
/** Distinct statement texts kept; later ones are counted under OTHER. */
const MAX_STATEMENTS = 2000;
const LABEL_LENGTH = 160;
export const OTHER = '(other statements)';

export interface StatementTotals {
  statement: string;
  /** Parse or simple-query messages carrying this text. */
  count: number;
  /** Milliseconds PGlite spent on this statement's messages (Parse up to the next statement). */
  ms: number;
}

/** The SQL text of a Parse ('P') or simple Query ('Q') frontend message, else undefined. */
export function statementText(message: Uint8Array): string | undefined {
  const type = message[0];
  if (type !== PARSE && type !== QUERY) return undefined;
  let start = 5; // type byte and int32 length
  if (type === PARSE) {
    while (start < message.length && message[start] !== 0) start++; // the statement's name
    start++;
  }
  let end = start;
  while (end < message.length && message[end] !== 0) end++;
  return Buffer.from(message.subarray(start, end)).toString('utf8');
}

/** Accumulates PGlite's time per statement text over the wire messages it serves. */
export class StatementProfile {
  private readonly totals = new Map<string, { count: number; ms: number }>();
  private current = OTHER;

  /** Notes which statement the following time belongs to; call before serving `message`. */
  observe(message: Uint8Array): void {
    const text = statementText(message);
    if (text === undefined) return;
    let label = text.replace(/\s+/g, ' ').trim().slice(0, LABEL_LENGTH);
    if (!this.totals.has(label) && this.totals.size >= MAX_STATEMENTS) label = OTHER;
    this.current = label;
    this.entry(label).count++;
  }

  /** Adds the time PGlite took to serve one message to the statement it belongs to. */
  record(ms: number): void {
    this.entry(this.current).ms += ms;
  }

  top(n: number): StatementTotals[] {
    return [...this.totals.entries()]
      .map(([statement, t]) => ({ statement, count: t.count, ms: t.ms }))
      .sort((a, b) => b.ms - a.ms)
      .slice(0, n);
  }

  report(n = 60): string {
    const total = [...this.totals.values()].reduce((s, t) => s + t.ms, 0);
    const lines = this.top(n).map(
      (t) =>
        `${t.ms.toFixed(0).padStart(10)} ${((100 * t.ms) / (total || 1)).toFixed(1).padStart(5)} % ${String(t.count).padStart(9)} ${(t.ms / Math.max(t.count, 1)).toFixed(2).padStart(9)}  ${t.statement}`,
    );
    return [
      `PGlite busy ${total.toFixed(0)} ms in all`,
      `${'ms'.padStart(10)} ${'share'.padStart(7)} ${'count'.padStart(9)} ${'ms each'.padStart(9)}  statement`,
      ...lines,
      '',
    ].join('\n');
  }

  private entry(label: string): { count: number; ms: number } {
    let e = this.totals.get(label);
    if (!e) {
      e = { count: 0, ms: 0 };
      this.totals.set(label, e);
    }
    return e;
  }
}

/** A profile whose report is written to `file` every `everyMs` and once more on stop. */
export function profileToFile(file: string, everyMs = 5000): { profile: StatementProfile; stop(): void } {
  const profile = new StatementProfile();
  const write = (): void => {
    try {
      writeFileSync(file, profile.report());
    } catch {
      // a diagnostic: an unwritable file must not take the database down
    }
  };
  const timer = setInterval(write, everyMs);
  timer.unref();
  return {
    profile,
    stop: () => {
      clearInterval(timer);
      write();
    },
  };
}
