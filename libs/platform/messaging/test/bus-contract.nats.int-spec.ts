import { describeBusContract } from './bus-contract';
import { natsHarness } from './bus-harness';

describeBusContract('NATS + JetStream', natsHarness);
