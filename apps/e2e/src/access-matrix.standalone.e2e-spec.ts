import { describeAccessMatrix } from './access-matrix';
import { startStandalone } from './support/topologies';

describe('access table — standalone', () => {
  describeAccessMatrix(startStandalone);
});
