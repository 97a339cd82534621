import { describeJourney } from './journey';
import { startStandalone } from './support/topologies';

describe('journey — standalone (one process, embedded PGlite, in-process bus)', () => {
  // From an empty data directory, as a first `npm start` (the other suites start from a migrated copy).
  describeJourney(() => startStandalone({}, { freshDatabase: true }));
});
