import { startStandalone } from '../support/topologies';
import { describeOutboundAttacks } from './outbound-attacks';

describe('outbound requests are guarded — standalone, no private networks', () => {
  describeOutboundAttacks((env) => startStandalone(env), { restartWithAllowList: true });
});
