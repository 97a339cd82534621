import { describeBusContract } from './bus-contract';
import { memoryHarness } from './bus-harness';

describeBusContract('in-process over MemoryQueueStore', memoryHarness);
