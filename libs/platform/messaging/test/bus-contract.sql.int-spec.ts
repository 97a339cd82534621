import { describeBusContract } from './bus-contract';
import { sqlHarness } from './bus-harness';

describeBusContract('in-process over SqlQueueStore (PostgreSQL)', sqlHarness);
