import 'reflect-metadata';
import { chmod, mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ACCOUNTS_ENTITIES, ACCOUNTS_MIGRATIONS, AccountsModule, BootstrapService } from '@kb/accounts';
import { createLogger } from '@kb/platform/observability';
import {
  createHttpApp,
  createRuntimeBus,
  readRuntimeEnv,
  runMain,
  shutdownOnSignals,
  serverSecret,
  serviceAppModule,
  serviceDataSource,
} from '@kb/platform/runtime';

/** The accounts service as its own process (distributed topology). HTTP serves health and metrics only. */
const logger = createLogger({ service: 'accounts', level: process.env['LOG_LEVEL'] ?? 'info' });

runMain(logger, async () => {
  const env = process.env;
  const port = Number(env['PORT'] ?? 8081);
  const { runtime, reader } = readRuntimeEnv(env, { transport: 'nats', port });
  const adminEmail = reader.string('ADMIN_EMAIL', 'admin@localhost');
  const smtpUrl = reader.optional('SMTP_URL');
  const smtp = smtpUrl ? { url: smtpUrl, from: reader.string('SMTP_FROM', 'Knowledge Box Service <no-reply@localhost>') } : undefined;
  // Where SSO domain verification asks for TXT records (`host` or `host:port`, comma-separated); default: the system's resolvers.
  const dnsServers = reader.list('DNS_SERVERS');
  reader.done();
  const secret = await serverSecret(env, runtime.dataDir);
  const db = await serviceDataSource(env, runtime, 'accounts', ACCOUNTS_ENTITIES, ACCOUNTS_MIGRATIONS);
  const bus = await createRuntimeBus(runtime, 'accounts', logger);
  const app = await createHttpApp(
    serviceAppModule(
      'accounts',
      logger,
      bus,
      [db.check],
      [
        AccountsModule.forRoot({
          dataSource: db.dataSource,
          zone: runtime.zone,
          secret,
          userTokenTtlSeconds: 3600,
          publicBaseUrl: runtime.publicBaseUrl,
          smtp,
          dnsServers,
        }),
      ],
    ),
    logger,
  );
  // SIGTERM: stop taking work, finish what is in flight, flush, close (SHUTDOWN_GRACE_MS, docs/operations.md).
  shutdownOnSignals(logger, app, bus, runtime.shutdownGraceMs, async () => {
    await db.close();
  });
  // Bootstrap before listening: once the service answers, its first credentials exist.
  await app.init();
  const bootstrap = await app.get(BootstrapService, { strict: false }).ensure(adminEmail);
  if (bootstrap) {
    await mkdir(runtime.dataDir, { recursive: true });
    const file = join(runtime.dataDir, 'bootstrap.json');
    await writeFile(file, JSON.stringify(bootstrap, null, 2) + '\n', { mode: 0o600 });
    await chmod(file, 0o600);
    logger.info(
      { file, account_id: bootstrap.account.id, kb_id: bootstrap.kb.id },
      'first start: bootstrap credentials written (shown once)',
    );
  }
  await app.listen(port, env['HOST'] ?? '0.0.0.0');
  logger.info({ port }, 'accounts service ready');
});
