import { describeAccessMatrix } from './access-matrix';
import { startDistributed } from './support/topologies';

describe('access table — distributed', () => {
  describeAccessMatrix(startDistributed);
});
