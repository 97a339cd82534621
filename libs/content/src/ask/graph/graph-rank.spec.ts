import { LexicalReranker, NOOP_RERANKER } from '../../search/query/rerank';
import type { Generator, GenerationRequest } from '../generation';
import type { EdgeRow } from './graph-explore';
import { rankByGenerator, rankByReranker, readScores, triplets, tripletText } from './graph-rank';

const edge = (id: string, s: string, label: string, d: string, hop: number, o: Partial<EdgeRow> = {}): EdgeRow & { hop: number } => ({
  id,
  rid: 'r1',
  source_value: s,
  source_type: 'entity',
  relation: 'OTHER',
  label,
  dest_value: d,
  dest_type: 'entity',
  paragraph: null,
  generated: 'user',
  hop,
  ...o,
});

describe('graph_beta ranking', () => {
  it('groups edges into triplets (case-insensitive), the nearest hop kept, a resource end shown by its title', () => {
    const list = triplets(
      [
        edge('1', 'Alice', 'works at', 'Acme', 1),
        edge('2', 'alice', 'Works At', 'ACME', 0, { rid: 'r2' }),
        edge('3', 'rid-9', '', 'Alice', 0, { source_type: 'resource', relation: 'ENTITY', generated: 'processor' }),
      ],
      new Map([['rid-9', 'Staff list']]),
    );
    expect(list).toHaveLength(2);
    expect(list[0]).toMatchObject({ head: 'Alice', relation: 'works at', tail: 'Acme', hop: 0 });
    expect(list[0]?.edges.map((e) => e.id)).toEqual(['1', '2']);
    expect(tripletText(list[1] as never)).toBe('Staff list — entity → Alice');
  });

  it('scores relation texts against the question with the lexical reranker; noop keeps the nearest first', async () => {
    const list = triplets(
      [edge('1', 'Acme', 'located in', 'Paris', 1), edge('2', 'Alice', 'works at', 'Acme', 0), edge('3', 'Acme', 'founded in', '1990', 0)],
      new Map(),
    );
    const lexical = await rankByReranker(new LexicalReranker(), 'Where is Acme located?', list);
    expect(lexical[0]?.tail).toBe('Paris');
    const noop = await rankByReranker(NOOP_RERANKER, 'Where is Acme located?', list);
    expect(noop.map((t) => t.hop)).toEqual([0, 0, 1]);
  });

  it("orders by the model's scores, drops those of 2 or less, and refuses an answer that does not score each relation", async () => {
    const list = triplets([edge('1', 'A', 'r', 'B', 0), edge('2', 'C', 'r', 'D', 0), edge('3', 'E', 'r', 'F', 0)], new Map());
    const seen: GenerationRequest[] = [];
    const model = (answer: string): Generator => ({
      model: 'fake',
      async *generate(req) {
        seen.push(req);
        yield { type: 'text', text: answer };
      },
    });
    const usage = { input: 0, output: 0 };
    const ranked = await rankByGenerator(model('{"scores": [3, 9, 1]}'), 'q', list, undefined, usage);
    expect(ranked.map((t) => t.head)).toEqual(['C', 'A']);
    // Without the provider's count the tokens are estimated, and a call whose answer is unusable still counts.
    expect(usage.input).toBeGreaterThan(0);
    expect(usage.output).toBeGreaterThan(0);
    const after = { ...usage };
    await expect(rankByGenerator(model('no idea'), 'q', list, undefined, usage)).rejects.toThrow();
    expect(usage.output).toBeGreaterThan(after.output);
    const reported: Generator = {
      model: 'fake',
      async *generate() {
        yield { type: 'text', text: '{"scores": [5, 5, 5]}' };
        yield { type: 'metadata', inputTokens: 120, outputTokens: 9 };
      },
    };
    const counted = { input: 1, output: 2 };
    await rankByGenerator(reported, 'q', list, undefined, counted);
    expect(counted).toEqual({ input: 121, output: 11 });
    expect(seen[0]?.question).toContain('"triplets":[["A","r","B"],["C","r","D"],["E","r","F"]]');
    await expect(rankByGenerator(model('{"scores": [3]}'), 'q', list)).rejects.toThrow('did not score every relation');
    await expect(rankByGenerator(model('no idea'), 'q', list)).rejects.toThrow();
  });

  it('reads scores from a fenced JSON answer only when they are all numbers', () => {
    expect(readScores('```json\n{"scores": [1, 2.5]}\n```')).toEqual([1, 2.5]);
    expect(readScores('{"scores": [1, "2"]}')).toBeUndefined();
    expect(readScores('[1, 2]')).toBeUndefined();
  });
});
