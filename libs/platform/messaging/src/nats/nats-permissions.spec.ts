import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { BUS_ACCESS, BusApps, INTERNAL_CALLS, type BusApp } from '@kb/contracts';
import { busUses, subjectMatches, type SubjectUse } from '../../test/bus-usage';
import { deadLetterSubject } from '../shared/dead-letter';
import { natsPermissions, natsServerConfig } from './nats-permissions';

const ROOT = join(__dirname, '..', '..', '..', '..', '..');
/** The production configuration: what tools/scripts/nats-config.mjs writes. */
const K8S_NATS_CONFIG = { file: join(ROOT, 'k8s', 'base', 'nats', 'nats-server.conf'), listen: '0.0.0.0:4222', storeDir: '/data' };

const allowed = (patterns: string[], subject: string) => patterns.some((p) => subjectMatches(p, subject));

/** The permissions one use of a subject needs (with the BUS_PREFIX `prefix`). */
function needs(u: SubjectUse, prefix: string): { publish: string[]; subscribe: string[] } {
  const subject = prefix + u.def.subject;
  // A live subject travels with a key as its last token.
  if (u.def.kind === 'live')
    return u.use === 'publish' ? { publish: [`${subject}.kb-1`], subscribe: [] } : { publish: [], subscribe: [`${subject}.kb-1`] };
  if (u.use === 'request' || u.use === 'publish') return { publish: [subject], subscribe: [] };
  if (u.use === 'handle') return { publish: ['_INBOX.gateway.abc'], subscribe: [subject, '_INBOX.gateway.abc.cancel'] };
  const stream = prefix + (u.def as { stream: string }).stream;
  return {
    publish: [
      `$JS.API.CONSUMER.CREATE.${stream}`,
      `$JS.API.CONSUMER.DURABLE.CREATE.${stream}.c`,
      `$JS.API.CONSUMER.MSG.NEXT.${stream}.c`,
      `$JS.ACK.${stream}.c.1.2.3.4.5`,
      prefix + deadLetterSubject(u.def.subject),
    ],
    subscribe: [],
  };
}

describe('NATS permissions per app', () => {
  const uses = Object.fromEntries(BusApps.map((app) => [app, busUses(join(ROOT, 'libs', app, 'src'))])) as Record<BusApp, SubjectUse[]>;

  it('finds the bus uses of every app in its sources', () => {
    for (const app of BusApps) expect([app, uses[app].length > 0]).toEqual([app, true]);
    expect(uses.content.some((u) => u.use === 'publish' && u.def.subject === 'understanding.field.process')).toBe(true);
  });

  it.each(['', 'e2eabc_'])("cover every subject each app's code uses (prefix %j)", (prefix) => {
    const missing: string[] = [];
    for (const app of BusApps) {
      const granted = natsPermissions(app, prefix);
      for (const u of uses[app]) {
        const need = needs(u, prefix);
        for (const s of need.publish)
          if (!allowed(granted.publish.allow, s)) missing.push(`${app} may not publish ${s} (${u.use} at ${u.at})`);
        for (const s of need.subscribe)
          if (!allowed(granted.subscribe.allow, s)) missing.push(`${app} may not subscribe ${s} (${u.use} at ${u.at})`);
      }
    }
    expect(missing).toEqual([]);
  });

  it('grant no bus subject an app does not use (the table says exactly what the code does)', () => {
    const extra: string[] = [];
    for (const app of BusApps) {
      const used = new Set(uses[app].map((u) => `${u.use} ${u.def.subject}`));
      const access = BUS_ACCESS[app];
      const declared = [
        ...access.calls.map((d) => `request ${d.subject}`),
        ...access.serves.map((d) => `handle ${d.subject}`),
        ...access.emits.map((d) => `publish ${d.subject}`),
        ...access.receives.map((d) => `receive ${d.subject}`),
      ];
      // The gateway's calls are every non-internal request; a route may not exist yet for each.
      for (const d of declared) if (!used.has(d) && !(app === 'gateway' && d.startsWith('request '))) extra.push(`${app}: ${d}`);
    }
    expect(extra.sort()).toEqual([]);
  });

  it('let only the gateway send the requests that carry a caller, and never the internal ones', () => {
    for (const app of BusApps.filter((a) => a !== 'gateway'))
      for (const d of BUS_ACCESS[app].calls) expect([app, INTERNAL_CALLS.includes(d)]).toEqual([app, true]);
    const gateway = natsPermissions('gateway').publish.allow;
    for (const d of INTERNAL_CALLS) expect(allowed(gateway, d.subject)).toBe(false);
    expect(allowed(gateway, 'understanding.field.processed')).toBe(false);
    expect(allowed(natsPermissions('reporting').publish.allow, 'accounts.kb-config.resolve')).toBe(false);
    expect(allowed(natsPermissions('content').publish.allow, 'accounts.kb-config.resolve')).toBe(true);
  });

  it('let an app read only its own replies', () => {
    for (const app of BusApps) {
      const subscribe = natsPermissions(app).subscribe.allow;
      for (const other of BusApps.filter((o) => o !== app))
        expect([app, other, allowed(subscribe, `_INBOX.${other}.abc`)]).toEqual([app, other, false]);
      expect(allowed(subscribe, `_INBOX.${app}.abc`)).toBe(true);
    }
  });

  it('match the committed sample configuration in k8s/ (regenerate: node tools/scripts/nats-config.mjs)', () => {
    expect(readFileSync(K8S_NATS_CONFIG.file, 'utf8')).toBe(
      natsServerConfig({ listen: K8S_NATS_CONFIG.listen, storeDir: K8S_NATS_CONFIG.storeDir }),
    );
  });
});
