import { DomainError, RERANK_LIMITS } from '@kb/contracts';
import { CrossEncoderReranker, type CrossEncoderScores } from './cross-encoder-reranker';
import type { RerankCandidate } from './rerank';

describe('CrossEncoderReranker (cross-encoder)', () => {
  const c = (id: string, text: string, score: number): RerankCandidate => ({ id, text, language: 'en', score });
  const calls: { query: string; texts: string[] }[] = [];
  const scoring =
    (byText: Record<string, number>): CrossEncoderScores =>
    async (query, texts) => {
      calls.push({ query, texts });
      return texts.map((t) => byText[t] ?? 0);
    };
  beforeEach(() => (calls.length = 0));

  it("orders the candidates by the model's scores, which replace the fused ones; ties keep the fused order", async () => {
    const reranker = new CrossEncoderReranker(scoring({ 'pears ripen': 0.9, 'apples fall': 0.2, 'plums dry': 0.2 }));
    const ranked = await reranker.rerank({ text: 'fruit' }, [c('a', 'apples fall', 3), c('b', 'plums dry', 2), c('c', 'pears ripen', 1)]);
    expect(ranked.map((x) => [x.id, x.score])).toEqual([
      ['c', 0.9],
      ['a', 0.2],
      ['b', 0.2],
    ]);
    expect(calls).toEqual([{ query: 'fruit', texts: ['apples fall', 'plums dry', 'pears ripen'] }]);
  });

  it('sends bounded texts: at most RERANK_LIMITS.texts paragraphs of RERANK_LIMITS.textChars, the query cut too', async () => {
    const many = Array.from({ length: RERANK_LIMITS.texts + 5 }, (_, i) => c(`p${i}`, 'x'.repeat(RERANK_LIMITS.textChars + 10), 1));
    const ranked = await new CrossEncoderReranker(scoring({})).rerank({ text: 'q'.repeat(RERANK_LIMITS.queryChars + 1) }, many);
    expect(ranked).toHaveLength(many.length);
    expect(calls[0]?.texts).toHaveLength(RERANK_LIMITS.texts);
    expect(calls[0]?.texts.every((t) => t.length === RERANK_LIMITS.textChars)).toBe(true);
    expect(calls[0]?.query).toHaveLength(RERANK_LIMITS.queryChars);
    // The ones beyond the bound keep their place after the scored ones.
    expect(ranked.slice(-5).map((x) => x.id)).toEqual(many.slice(-5).map((x) => x.id));
  });

  it('asks nothing for no candidates, and refuses scores that do not match the paragraphs', async () => {
    expect(await new CrossEncoderReranker(scoring({})).rerank({ text: 'q' }, [])).toEqual([]);
    expect(calls).toHaveLength(0);
    const short = new CrossEncoderReranker(async () => [1]);
    await expect(short.rerank({ text: 'q' }, [c('a', 'x', 1), c('b', 'y', 1)])).rejects.toMatchObject({ code: 'SERVICE_UNAVAILABLE' });
    const nan = new CrossEncoderReranker(async () => [Number.NaN]);
    await expect(nan.rerank({ text: 'q' }, [c('a', 'x', 1)])).rejects.toBeInstanceOf(DomainError);
  });

  it("passes the model's refusal on unchanged (not configured: 422)", async () => {
    const refused = DomainError.validation([{ loc: ['body', 'reranker'], msg: 'not configured', type: 'value_error' }]);
    const reranker = new CrossEncoderReranker(async () => {
      throw refused;
    });
    await expect(reranker.rerank({ text: 'q' }, [c('a', 'x', 1)])).rejects.toBe(refused);
  });
});
