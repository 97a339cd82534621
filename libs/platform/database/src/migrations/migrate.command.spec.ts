import { migrateCommand, parseMigrateArgs, type MigrationRegistry } from './migrate.command';

const registry: MigrationRegistry = {
  accounts: { schema: 'accounts', entities: [], migrations: [] },
  content: { schema: 'content', entities: [], migrations: [] },
};

describe('parseMigrateArgs', () => {
  it.each([
    [[], { action: 'up', services: ['accounts', 'content'] }],
    [['content'], { action: 'up', services: ['content'] }],
    [['content', 'content', 'accounts'], { action: 'up', services: ['content', 'accounts'] }],
    [['--status'], { action: 'status', services: ['accounts', 'content'] }],
    [['content', '--revert'], { action: 'revert', services: ['content'] }],
    [['content', '--data-dir', '/tmp/pg'], { action: 'up', services: ['content'], dataDir: '/tmp/pg' }],
  ])('parses %j', (argv, expected) => {
    expect(parseMigrateArgs(argv, registry)).toEqual(expected);
  });

  it.each([
    [['search'], /unknown service "search"; known: accounts, content/],
    [['--force'], /unknown option --force/],
    [['--revert'], /exactly one service/],
    [['content', '--revert', '--status'], /cannot be combined/],
    [['content', '--data-dir'], /needs a directory/],
  ])('rejects %j', (argv, message) => {
    expect(() => parseMigrateArgs(argv, registry)).toThrow(message);
  });
});

describe('migrateCommand', () => {
  it('prints the usage and exits with 2 on bad arguments, touching no database', async () => {
    const errors: string[] = [];
    const code = await migrateCommand(['nope'], registry, { env: {}, error: (l) => errors.push(l), log: () => undefined });
    expect(code).toBe(2);
    expect(errors.join('\n')).toContain('usage: migrate');
  });
});
