import type { ExtractedFieldData } from '@kb/contracts';
import { usageOf } from './processing-results.service';

describe('usageOf (what processing one field amounted to)', () => {
  const base = (over: Partial<ExtractedFieldData>): ExtractedFieldData => ({
    text: { text: 'abc', split_text: {}, deleted_splits: [] },
    metadata: { metadata: { paragraphs: [{}] }, split_metadata: {}, deleted_splits: [] },
    vectors: { vectors: { vectors: [] }, split_vectors: {}, deleted_splits: [] },
    ...over,
  });

  it('counts paragraphs and characters over the field and its splits, pages of documents and seconds of media', () => {
    expect(
      usageOf(
        base({
          text: { text: 'abc', split_text: { m1: 'hello', m2: 'world!' }, deleted_splits: [] },
          metadata: {
            metadata: { paragraphs: [] },
            split_metadata: { m1: { paragraphs: [{}, {}] }, m2: { paragraphs: [{}] } },
            deleted_splits: [],
          },
        }),
      ),
    ).toEqual({ paragraphs: 3, characters: 14, pages: 0, media_seconds: 0, documents: 1, media: false, processing_seconds: 0 });
    expect(usageOf(base({ file: { metadata: { pages: '12', mime_type: 'application/pdf' } } }))).toMatchObject({ pages: 12, media: false });
    expect(usageOf(base({ file: { metadata: { duration_seconds: '61.5', mime_type: 'audio/mpeg' } } }))).toMatchObject({
      media_seconds: 61.5,
      media: true,
      pages: 0,
    });
    // Links to recordings and voice messages of conversations carry their seconds beside the record.
    expect(
      usageOf(base({ media_seconds: 12.25, link: { metadata: { duration_seconds: '12.25', mime_type: 'audio/ogg' } } })),
    ).toMatchObject({ media_seconds: 12.25, media: true });
    expect(usageOf(base({ media_seconds: 4 }))).toMatchObject({ media_seconds: 4, media: true });
  });
});
