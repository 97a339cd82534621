import { startStandalone, type Topology } from '../support/topologies';
import { describeAskCancellation } from './bus-cancellation';

/** The in-process bus carries the cancel too (the one process of the embedded default). */
describe('bus security — standalone', () => {
  let topology: Topology;

  beforeAll(async () => {
    topology = await startStandalone();
  }, 120_000);

  afterAll(async () => {
    await topology?.stop();
  }, 60_000);

  describeAskCancellation(() => topology);
});
