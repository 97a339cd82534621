import { describeJourney } from './journey';
import { startStandalone } from './support/topologies';

describe('journey — standalone (one process, embedded PGlite, in-process bus)', () => {
  describeJourney(startStandalone);
});
