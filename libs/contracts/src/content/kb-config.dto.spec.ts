import { collectIssues } from '../common/validation';
import { canonicalSplitStrategy, ExtractStrategyDto, KvSchemaDto, SearchConfigurationDto, SplitStrategyDto } from './kb-config.dto';
import { FindRequest } from './search/find.dto';

const locs = (cls: new () => object, body: unknown) =>
  collectIssues(cls, body, { loc: ['body'] })
    .issues.map((i) => i.loc.join('.'))
    .sort();

describe('KB configuration DTOs', () => {
  it('checks saved find and ask bodies with the live request DTOs', () => {
    expect(locs(SearchConfigurationDto, { kind: 'find', config: { query: 'tides', top_k: 3, features: ['keyword'] } })).toEqual([]);
    expect(locs(SearchConfigurationDto, { kind: 'ask', config: { top_k: 3, citations: true } })).toEqual([]);
    expect(locs(SearchConfigurationDto, { kind: 'find', config: { top_k: 0, bogus: 1 } })).toEqual([
      'body.config.bogus',
      'body.config.top_k',
    ]);
    expect(locs(SearchConfigurationDto, { kind: 'ask', config: { citations: 'often' } })).toEqual(['body.config.citations']);
    expect(locs(SearchConfigurationDto, { kind: 'find', config: { search_configuration: 'other' } })).toEqual([
      'body.config.search_configuration',
    ]);
    expect(locs(SearchConfigurationDto, {})).toEqual(['body.config', 'body.kind']);
    expect(locs(SearchConfigurationDto, { kind: 'find', config: { query: 'x'.repeat(70_000) } })).toEqual(['body.config']);
  });

  it('takes a configuration name in /find, checked by pattern', () => {
    expect(locs(FindRequest, { search_configuration: 'short-1' })).toEqual([]);
    expect(locs(FindRequest, { search_configuration: 'a/b' })).toEqual(['body.search_configuration']);
    expect(locs(FindRequest, { search_configuration: 3 })).toEqual(['body.search_configuration']);
  });

  it('bounds split sizes and overlaps', () => {
    expect(locs(SplitStrategyDto, { name: 's', split: { max_paragraph: 50, overlap: 25 } })).toEqual([]);
    expect(locs(SplitStrategyDto, { name: 's', split: { max_paragraph: 49 } })).toEqual(['body.split.max_paragraph']);
    expect(locs(SplitStrategyDto, { name: 's', split: { max_paragraph: 20_001 } })).toEqual(['body.split.max_paragraph']);
    expect(locs(SplitStrategyDto, { name: 's', split: { max_paragraph: 100, overlap: 51 } })).toEqual(['body.split.overlap']);
    expect(locs(SplitStrategyDto, { name: 's', split: { max_paragraph: 100, overlap: -1 } })).toEqual(['body.split.overlap']);
    expect(locs(SplitStrategyDto, { split: {} })).toEqual(['body.name', 'body.split.max_paragraph']);
    expect(locs(ExtractStrategyDto, { name: 'e', ocr: false, split: { max_paragraph: 300 } })).toEqual([]);
    expect(locs(ExtractStrategyDto, { name: 'e', split: { max_paragraph: 1 }, ai_tables: true })).toEqual([
      'body.ai_tables',
      'body.split.max_paragraph',
    ]);
  });

  it("takes the reference SDK's flat split form, the same as the split member, and refuses custom splits", () => {
    expect(locs(SplitStrategyDto, { name: 's', max_paragraph: 300 })).toEqual([]);
    expect(locs(SplitStrategyDto, { name: 's', max_paragraph: 300, custom_split: 0 })).toEqual([]);
    expect(canonicalSplitStrategy({ name: 's', max_paragraph: 300, custom_split: 0 })).toEqual({
      name: 's',
      split: { max_paragraph: 300 },
    });
    const nested = { name: 's', split: { max_paragraph: 300, overlap: 10 } };
    expect(canonicalSplitStrategy(nested)).toEqual(nested);
    expect(locs(SplitStrategyDto, { name: 's', max_paragraph: 49 })).toEqual(['body.max_paragraph']);
    expect(locs(SplitStrategyDto, { name: 's', max_paragraph: '300' })).toEqual(['body.max_paragraph']);
    expect(locs(SplitStrategyDto, { name: 's', max_paragraph: 300, split: { max_paragraph: 300 } })).toEqual(['body.max_paragraph']);
    expect(locs(SplitStrategyDto, { name: 's', max_paragraph: 300, custom_split: 2 })).toEqual(['body.custom_split']);
    expect(locs(SplitStrategyDto, { name: 's', max_paragraph: 300, llm_split: {} })).toEqual(['body.llm_split']);
    expect(locs(SplitStrategyDto, { name: 's' })).toEqual(['body.split']);
  });

  it('checks key-value schemas as the reference does', () => {
    expect(locs(KvSchemaDto, { name: 'invoice', fields: [{ key: 'total', type: 'float', range: true }] })).toEqual([]);
    expect(
      locs(KvSchemaDto, {
        name: 'a.b',
        fields: [
          { key: 'k', type: 'text', range: true },
          { key: 'k', type: 'integer' },
          { key: 'z', type: 'text', extra: 1 },
        ],
      }),
    ).toEqual(['body.fields.0.range', 'body.fields.1.key', 'body.fields.2.extra', 'body.name']);
  });
});
