import { collectIssues, FindRequest } from '@kb/contracts';
import { REQUEST_LIMITS, expressionSize } from './request-limits';

/** The search requests' limits are checked by their DTOs (the content service reads them typed). */
const issuesOf = (body: unknown) => collectIssues(FindRequest, body, { loc: ['body'] }).issues;

describe('request limits', () => {
  it('measures depth and size without recursion, and stops counting past the limits', () => {
    expect(expressionSize({ and: [{ prop: 'label', label: 'a' }] })).toEqual({ depth: 4, nodes: 5 });
    let deep: unknown = 1;
    for (let i = 0; i < 100_000; i++) deep = [deep];
    expect(expressionSize(deep).depth).toBe(REQUEST_LIMITS.expressionDepth + 1);
    expect(expressionSize(Array(1_000_000).fill(0)).nodes).toBe(REQUEST_LIMITS.expressionNodes + 1);
  });

  it('refuses lists longer or items longer than the limits, naming the member', () => {
    const issues = issuesOf({
      fields: Array(REQUEST_LIMITS.listItems + 1).fill('a/b'),
      keyword_filters: ['x'.repeat(REQUEST_LIMITS.itemChars + 1)],
      features: Array(21).fill('keyword'),
    });
    expect(issues.map((i) => [i.loc, i.type])).toEqual(
      expect.arrayContaining([
        [['body', 'fields'], 'too_long'],
        [['body', 'keyword_filters', 0], 'string_too_long'],
        [['body', 'features'], 'too_long'],
      ]),
    );
    expect(issues).toHaveLength(3);
  });

  it('accepts what real clients send', () => {
    expect(
      issuesOf({
        fields: Array(REQUEST_LIMITS.listItems).fill('a/b'),
        filter_expression: { field: { and: Array(50).fill({ prop: 'label', labelset: 'l', label: 'x' }) } },
      }),
    ).toEqual([]);
  });
});
