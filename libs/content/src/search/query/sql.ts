/** Collects positional parameters while a statement is assembled: `p.add(v)` returns `$n`. */
export class SqlParams {
  readonly values: unknown[] = [];

  constructor(initial: unknown[] = []) {
    this.values.push(...initial);
  }

  add(value: unknown): string {
    this.values.push(value);
    return `$${this.values.length}`;
  }
}

/** `s` with LIKE's wildcards and escape character escaped, to match literally. */
export function escapeLike(s: string): string {
  return s.replace(/[\\%_]/g, (c) => `\\${c}`);
}

/** LIKE pattern matching `prefix` literally, followed by anything. */
export function likePrefix(prefix: string): string {
  return `${escapeLike(prefix)}%`;
}
