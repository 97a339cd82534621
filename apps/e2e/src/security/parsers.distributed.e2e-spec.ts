import { startDistributed } from '../support/topologies';
import { describeParserAttacks } from './parsers.attacks';

/** The sandbox's limits reach the understanding app through its own main.ts; one bomb proves the path. */
describe('security — hostile files cannot take processing down (distributed)', () => {
  describeParserAttacks((env) => startDistributed({ understanding: env }), 'docx');
});
