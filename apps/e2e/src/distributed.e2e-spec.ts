import { describeJourney } from './journey';
import { startDistributed } from './support/topologies';

describe('journey — distributed (every app its own process over NATS JetStream)', () => {
  describeJourney(startDistributed);
});
