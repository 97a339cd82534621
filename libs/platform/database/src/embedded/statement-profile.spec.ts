import { OTHER, StatementProfile, statementText } from './statement-profile';

function message(type: string, ...parts: Buffer[]): Uint8Array {
  const body = Buffer.concat(parts);
  const head = Buffer.alloc(5);
  head.write(type, 0, 'latin1');
  head.writeInt32BE(body.length + 4, 1);
  return Buffer.concat([head, body]);
}
const cstr = (s: string) => Buffer.from(`${s}\0`, 'utf8');
const parse = (sql: string, name = '') => message('P', cstr(name), cstr(sql), Buffer.from([0, 0]));
const query = (sql: string) => message('Q', cstr(sql));
const bind = message('B', cstr(''), cstr(''), Buffer.from([0, 0, 0, 0, 0, 0]));
const sync = message('S');

describe('statementText', () => {
  it('reads the SQL of Parse (after the statement name) and simple Query messages', () => {
    expect(statementText(parse('SELECT $1::int', 'named'))).toBe('SELECT $1::int');
    expect(statementText(parse('SELECT é'))).toBe('SELECT é');
    expect(statementText(query('BEGIN'))).toBe('BEGIN');
  });

  it('ignores every other message', () => {
    expect(statementText(bind)).toBeUndefined();
    expect(statementText(sync)).toBeUndefined();
  });
});

describe('StatementProfile', () => {
  it('charges the messages after a Parse (Bind, Execute, Sync) to its statement and counts it once', () => {
    const p = new StatementProfile();
    for (const [m, ms] of [
      [parse('INSERT  INTO t\n VALUES ($1)'), 1],
      [bind, 5],
      [sync, 2],
      [query('COMMIT'), 3],
      [parse('INSERT INTO t VALUES ($1)'), 1],
      [bind, 4],
    ] as const) {
      p.observe(m);
      p.record(ms);
    }
    expect(p.top(5)).toEqual([
      { statement: 'INSERT INTO t VALUES ($1)', count: 2, ms: 13 },
      { statement: 'COMMIT', count: 1, ms: 3 },
    ]);
    expect(p.report()).toMatch(/^PGlite busy 16 ms in all\n/);
    expect(p.report()).toContain('81.3 %');
  });

  it('keeps a bounded number of statements, the rest under one entry', () => {
    const p = new StatementProfile();
    for (let i = 0; i < 2100; i++) {
      p.observe(query(`SELECT ${i}`));
      p.record(1);
    }
    const other = p.top(3000).find((t) => t.statement === OTHER);
    expect(other).toEqual({ statement: OTHER, count: 100, ms: 100 });
    expect(p.top(3000)).toHaveLength(2001);
  });
});
