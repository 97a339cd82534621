import { startStandalone } from '../support/topologies';
import { describeParserAttacks } from './parsers.attacks';

describe('security — hostile files cannot take processing down (standalone)', () => {
  describeParserAttacks(startStandalone);
});
