import type { FieldEntity } from '../entities/field.entity';
import { resourceSummaryPatch, SUMMARY_GENERATED } from './resource-summary';

type F = Pick<FieldEntity, 'fieldType' | 'fieldId' | 'status' | 'extracted'>;
const field = (fieldType: F['fieldType'], fieldId: string, summary: string | undefined, status: F['status'] = 'PROCESSED'): F => ({
  fieldType,
  fieldId,
  status,
  extracted: summary === undefined ? null : { metadata: { metadata: { summary } } },
});

describe('resourceSummaryPatch', () => {
  it("joins the processed fields' summaries in field order, within 600 characters", () => {
    const patch = resourceSummaryPatch({ summary: '', computedmetadata: {} }, [
      field('file', 'doc', 'The file says this.'),
      field('text', 'b', 'Second text.'),
      field('text', 'a', 'First text.'),
      field('link', 'l', undefined),
      field('text', 'c', 'Pending.', 'PENDING'),
    ]);
    expect(patch).toEqual({ summary: 'First text. Second text. The file says this.', computedmetadata: { [SUMMARY_GENERATED]: true } });
    const long = resourceSummaryPatch({ summary: '', computedmetadata: {} }, [
      field('text', 'a', 'x'.repeat(500)),
      field('text', 'b', 'y'.repeat(500)),
    ]);
    expect(long?.summary).toBe('x'.repeat(500));
    expect(resourceSummaryPatch({ summary: '', computedmetadata: {} }, [field('text', 'a', 'z'.repeat(900))])?.summary).toHaveLength(600);
  });

  it('leaves keywordset and datetime fields out: their text is not prose', () => {
    const patch = resourceSummaryPatch({ summary: '', computedmetadata: {} }, [
      field('keywordset', 'tags', 'zirconium'),
      field('datetime', 'released', '2024-05-01 10:00:00 UTC'),
      field('text', 'a', 'The text.'),
    ]);
    expect(patch?.summary).toBe('The text.');
    expect(resourceSummaryPatch({ summary: '', computedmetadata: {} }, [field('keywordset', 'tags', 'zirconium')])).toBeUndefined();
  });

  it("keeps processing's summary up to date, and never replaces the user's", () => {
    const generated = { summary: 'Old words.', computedmetadata: { [SUMMARY_GENERATED]: true } };
    expect(resourceSummaryPatch(generated, [field('text', 'a', 'New words.')])?.summary).toBe('New words.');
    expect(resourceSummaryPatch(generated, [field('text', 'a', 'Old words.')])).toBeUndefined();
    expect(resourceSummaryPatch({ summary: 'Written by a person.', computedmetadata: {} }, [field('text', 'a', 'Other.')])).toBeUndefined();
    expect(
      resourceSummaryPatch({ summary: 'Written by a person.', computedmetadata: { [SUMMARY_GENERATED]: false } }, [
        field('text', 'a', 'Other.'),
      ]),
    ).toBeUndefined();
    expect(resourceSummaryPatch({ summary: '', computedmetadata: {} }, [field('text', 'a', '')])).toBeUndefined();
  });
});
