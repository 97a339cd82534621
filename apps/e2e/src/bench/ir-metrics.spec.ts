import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { evaluate, ndcgAtK, percentile, readCorpus, readQrels, readQueries, recallAtK, type Qrels } from './ir-metrics';

const judged = (pairs: Record<string, number>) => new Map(Object.entries(pairs));
/** 1 / log2(3): the discount of rank 2. */
const AT2 = 1 / Math.log2(3);

describe('nDCG@k (linear gains, trec_eval conventions)', () => {
  it.each<{ name: string; ranking: string[]; qrels: Record<string, number>; k: number; expected: number }>([
    // DCG = 1/1 + 0 + 2/log2(4) = 2; ideal [2,1,1] = 2 + 1/log2(3) + 1/2 = 3.1309297...
    {
      name: 'graded, unjudged and grade-0 documents',
      ranking: ['d1', 'd2', 'd3'],
      qrels: { d1: 1, d2: 0, d3: 2, d4: 1 },
      k: 3,
      expected: 0.6387878864795979,
    },
    // Cut at 2: DCG = 0 + 1/log2(3); ideal = 2 + 1/log2(3).
    {
      name: 'only the top k count, ideal cut at k too',
      ranking: ['d2', 'd1', 'd3'],
      qrels: { d1: 1, d3: 2, d4: 1 },
      k: 2,
      expected: 0.23981246656813146,
    },
    // The higher grade second: (1 + 2/log2(3)) / (2 + 1/log2(3)).
    { name: 'grades are linear gains', ranking: ['d1', 'd3'], qrels: { d1: 1, d3: 2 }, k: 10, expected: 0.8597186998521972 },
    { name: 'a perfect ranking scores 1', ranking: ['d3', 'd1', 'x'], qrels: { d1: 1, d3: 2 }, k: 10, expected: 1 },
    { name: 'one relevant document at rank 2', ranking: ['x', 'd1'], qrels: { d1: 1 }, k: 10, expected: AT2 },
    { name: 'an empty ranking scores 0', ranking: [], qrels: { d1: 1 }, k: 10, expected: 0 },
    // A document retrieved twice counts once: [d1, d3] is then the perfect top 2.
    { name: 'repeated documents count once', ranking: ['d1', 'd1', 'd3'], qrels: { d1: 1, d3: 1 }, k: 2, expected: 1 },
  ])('$name', ({ ranking, qrels, k, expected }) => {
    expect(ndcgAtK(ranking, judged(qrels), k)).toBeCloseTo(expected, 10);
  });

  it('is undefined for a query without any relevant document', () => {
    expect(ndcgAtK(['d1'], judged({ d1: 0 }), 10)).toBeUndefined();
    expect(ndcgAtK(['d1'], judged({}), 10)).toBeUndefined();
  });
});

describe('Recall@k', () => {
  it.each([
    { ranking: ['d1', 'd2', 'd3'], k: 3, expected: 2 / 3 },
    { ranking: ['d1', 'd2', 'd3'], k: 1, expected: 1 / 3 },
    { ranking: ['d4', 'd3', 'd1'], k: 100, expected: 1 },
    { ranking: ['d1', 'd1', 'd1'], k: 100, expected: 1 / 3 },
    { ranking: [], k: 100, expected: 0 },
  ])('$ranking at $k → $expected', ({ ranking, k, expected }) => {
    expect(recallAtK(ranking, judged({ d1: 1, d2: 0, d3: 2, d4: 1 }), k)).toBeCloseTo(expected, 10);
  });

  it('is undefined for a query without any relevant document', () => {
    expect(recallAtK(['d1'], judged({ d1: 0 }), 100)).toBeUndefined();
  });
});

describe('evaluate', () => {
  it('averages over run queries that have a relevant document; an empty ranking counts as 0', () => {
    const qrels: Qrels = new Map([
      ['q1', judged({ a: 1 })],
      ['q2', judged({ b: 1 })],
      ['q3', judged({ c: 0 })],
      ['q5', judged({ e: 1 })],
    ]);
    const rankings = new Map<string, string[]>([
      ['q1', ['a']], // nDCG 1, recall 1
      ['q2', []], // nDCG 0, recall 0
      ['q3', ['c']], // no relevant document: skipped
      ['q4', ['d']], // not judged: skipped
      // q5 was not run: skipped (trec_eval without -c)
    ]);
    expect(evaluate(rankings, qrels, { ndcg: 10, recall: 100 })).toEqual({ ndcg: 0.5, recall: 0.5, queries: 2 });
  });

  it('mixes per-query values as a plain mean', () => {
    const qrels: Qrels = new Map([
      ['q1', judged({ a: 1 })],
      ['q2', judged({ a: 1, b: 1 })],
    ]);
    const rankings = new Map([
      ['q1', ['x', 'a']],
      ['q2', ['a']],
    ]);
    // q1: nDCG 1/log2(3), recall 1; q2: nDCG 1 / (1 + 1/log2(3)), recall 1/2.
    const result = evaluate(rankings, qrels, { ndcg: 10, recall: 100 });
    expect(result.ndcg).toBeCloseTo((AT2 + 1 / (1 + AT2)) / 2, 10);
    expect(result.recall).toBeCloseTo(0.75, 10);
    expect(result.queries).toBe(2);
  });

  it('scores nothing when no query can be evaluated', () => {
    expect(evaluate(new Map([['q', ['a']]]), new Map(), { ndcg: 10, recall: 100 })).toEqual({ ndcg: 0, recall: 0, queries: 0 });
  });
});

describe('percentile (nearest rank)', () => {
  it.each([
    { p: 50, expected: 3 },
    { p: 95, expected: 5 },
    { p: 99, expected: 5 },
    { p: 20, expected: 1 },
    { p: 0, expected: 1 },
  ])('p$p of 1..5 is $expected', ({ p, expected }) => {
    expect(percentile([5, 1, 3, 2, 4], p)).toBe(expected);
  });

  it('is 0 without samples', () => {
    expect(percentile([], 50)).toBe(0);
  });
});

describe('BEIR readers', () => {
  let dir: string;
  beforeAll(() => (dir = mkdtempSync(join(tmpdir(), 'ir-metrics-'))));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const file = (name: string, content: string) => {
    const path = join(dir, name);
    writeFileSync(path, content);
    return path;
  };

  it('reads a corpus, ignoring extra members, defaulting a missing title, honouring a limit', () => {
    const path = file(
      'corpus.jsonl',
      [
        '{"_id": "4983", "title": "White matter", "text": "Diffusion tensor imaging.", "metadata": {}}',
        '',
        '{"_id": 7, "text": "No title here."}',
        '{"_id": "x", "title": "", "text": "Third."}',
      ].join('\n') + '\n',
    );
    expect(readCorpus(path)).toEqual([
      { _id: '4983', title: 'White matter', text: 'Diffusion tensor imaging.' },
      { _id: '7', title: '', text: 'No title here.' },
      { _id: 'x', title: '', text: 'Third.' },
    ]);
    expect(readCorpus(path, 2).map((d) => d._id)).toEqual(['4983', '7']);
  });

  it('names the file and line of a broken entry', () => {
    const path = file('bad.jsonl', '{"_id": "1", "text": "ok"}\n{oops\n');
    expect(() => readQueries(path)).toThrow(/bad\.jsonl:2: not JSON/);
    expect(() => readQueries(file('noid.jsonl', '{"text": "no id"}\n'))).toThrow(/entry 1 needs _id and text/);
  });

  it('reads queries', () => {
    const path = file(
      'queries.jsonl',
      '{"_id": "1", "text": "0-dimensional biomaterials show inductive properties."}\n{"_id": "3", "text": "Genomes."}\n',
    );
    expect(readQueries(path)).toEqual([
      { _id: '1', text: '0-dimensional biomaterials show inductive properties.' },
      { _id: '3', text: 'Genomes.' },
    ]);
  });

  it('reads graded qrels after the header, keeping grade 0 as judged', () => {
    const path = file('qrels.tsv', 'query-id\tcorpus-id\tscore\n1\t31715818\t1\n1\t42\t0\n2\t7\t3\n\n');
    const qrels = readQrels(path);
    expect([...qrels.keys()]).toEqual(['1', '2']);
    expect([...(qrels.get('1') ?? [])]).toEqual([
      ['31715818', 1],
      ['42', 0],
    ]);
    expect(qrels.get('2')?.get('7')).toBe(3);
  });

  it('reads TREC four-column qrels and rejects malformed lines', () => {
    expect(readQrels(file('trec.qrels', '19335 0 1720389 2\n')).get('19335')?.get('1720389')).toBe(2);
    expect(() => readQrels(file('broken.tsv', 'query-id\tcorpus-id\tscore\n1\t2\n'))).toThrow(/broken\.tsv:2/);
    expect(() => readQrels(file('nan.tsv', '1\t2\tyes\n'))).toThrow(/nan\.tsv:1/);
  });
});
