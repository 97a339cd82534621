import { startDistributed } from '../support/topologies';
import { describeOutboundAttacks } from './outbound-attacks';

// Each app reads the outbound policy in its own main.ts: content (generative providers) and
// understanding (links, files, embedding and transcription providers, webhooks) are checked apart.
describe('outbound requests are guarded — distributed, no private networks', () => {
  describeOutboundAttacks(
    (env) =>
      startDistributed(Object.fromEntries(['accounts', 'content', 'understanding', 'reporting', 'gateway'].map((app) => [app, env]))),
    {
      restartWithAllowList: false,
    },
  );
});
