import type { EffectiveLimits } from '@kb/contracts';
import { decideBlocks } from './blocking-rules';
import { bucketStart, bucketStarts, nextBucket } from './usage-buckets';
import { usageDeltas } from './usage-metrics';

describe('usage buckets (UTC, as date_trunc)', () => {
  const t = new Date('2026-11-26T13:45:10.123Z');
  it.each([
    ['hour', '2026-11-26T13:00:00.000Z', '2026-11-26T14:00:00.000Z'],
    ['day', '2026-11-26T00:00:00.000Z', '2026-11-27T00:00:00.000Z'],
    ['week', '2026-11-23T00:00:00.000Z', '2026-11-30T00:00:00.000Z'],
    ['month', '2026-11-01T00:00:00.000Z', '2026-12-01T00:00:00.000Z'],
    ['quarter', '2026-10-01T00:00:00.000Z', '2027-01-01T00:00:00.000Z'],
    ['year', '2026-01-01T00:00:00.000Z', '2027-01-01T00:00:00.000Z'],
    ['millennium', '2001-01-01T00:00:00.000Z', '3001-01-01T00:00:00.000Z'],
  ] as const)('%s', (agg, start, next) => {
    expect(bucketStart(t, agg).toISOString()).toBe(start);
    expect(nextBucket(bucketStart(t, agg), agg).toISOString()).toBe(next);
  });

  it('lists the buckets of a range, and none past the bound', () => {
    expect(bucketStarts(new Date('2026-01-31T10:00:00Z'), new Date('2026-03-01T00:00:00Z'), 'month')?.map((d) => d.toISOString())).toEqual([
      '2026-01-01T00:00:00.000Z',
      '2026-02-01T00:00:00.000Z',
    ]);
    expect(bucketStarts(new Date('2024-01-01T00:00:00Z'), new Date('2025-01-01T00:00:00Z'), 'hour')).toHaveLength(8784);
    expect(bucketStarts(new Date('2024-01-01T00:00:00Z'), new Date('2025-01-01T00:00:00Z'), 'hour', 100)).toBeNull();
  });
});

describe('usage deltas of an event', () => {
  const base = { event_id: 'e', kbid: 'k', date: '2026-11-26T00:00:00Z' };
  it('counts searches, answers (not feedback or failures), resources and processing', () => {
    expect(usageDeltas({ ...base, type: 'search' })).toEqual({ searches_performed: 1 });
    expect(usageDeltas({ ...base, type: 'suggest' })).toEqual({});
    expect(usageDeltas({ ...base, type: 'chat', details: { question: 'q', answer: 'a' } })).toEqual({ answers_generated: 1 });
    expect(usageDeltas({ ...base, type: 'chat', details: { question: 'q', answer: 'a', input_tokens: 120, output_tokens: 30 } })).toEqual({
      answers_generated: 1,
      ai_tokens_used: 150,
    });
    expect(usageDeltas({ ...base, type: 'chat', details: { question: 'q', status: 'error', input_tokens: 120 } })).toEqual({});
    expect(usageDeltas({ ...base, type: 'chat', details: { feedback: { good: true } } })).toEqual({});
    expect(usageDeltas({ ...base, type: 'deleted' })).toEqual({ resources: -1 });
    expect(
      usageDeltas({
        ...base,
        type: 'processed',
        audit_metadata: { field: 'file/f', usage: { paragraphs: 2, characters: 9, media_seconds: 0, documents: 1, media: false } },
      }),
    ).toEqual({ paragraphs_processed: 2, chars_processed: 9, docs_no_media_processed: 1, non_media_files_processed: 1 });
    expect(
      usageDeltas({
        ...base,
        type: 'processed',
        audit_metadata: { field: 'file/v', usage: { paragraphs: -3, characters: 'x', media_seconds: 12, documents: 1, media: true } },
      }),
    ).toEqual({ media_seconds_processed: 12 });
  });

  it('meters stored bytes, signed, from writes, deletions and released files, and the seconds of extraction', () => {
    expect(usageDeltas({ ...base, type: 'new', audit_metadata: { bytes: 2048 } })).toEqual({ resources: 1, storage_bytes: 2048 });
    expect(usageDeltas({ ...base, type: 'modified', audit_metadata: { bytes: -48 } })).toEqual({ storage_bytes: -48 });
    expect(usageDeltas({ ...base, type: 'modified' })).toEqual({});
    expect(usageDeltas({ ...base, type: 'deleted', audit_metadata: { bytes: -2000 } })).toEqual({ resources: -1, storage_bytes: -2000 });
    // Not a whole number of bytes: ignored, never half-counted.
    expect(usageDeltas({ ...base, type: 'new', audit_metadata: { bytes: 1.5 } })).toEqual({ resources: 1 });
    expect(usageDeltas({ ...base, type: 'new', audit_metadata: { bytes: '9' } })).toEqual({ resources: 1 });
    expect(usageDeltas({ ...base, type: 'processed', audit_metadata: { field: 'file/f', status: 'ERROR', bytes: -100 } })).toEqual({
      storage_bytes: -100,
    });
    expect(
      usageDeltas({
        ...base,
        type: 'processed',
        audit_metadata: { field: 'text/t', usage: { paragraphs: 1, characters: 5, documents: 1, media: false, processing_seconds: 0.25 } },
      }),
    ).toEqual({ paragraphs_processed: 1, chars_processed: 5, docs_no_media_processed: 1, pre_processing_time: 0.25 });
  });
});

describe('usage deltas of a predict call', () => {
  const base = { event_id: 'e', kbid: 'k', date: '2026-11-26T00:00:00Z', type: 'predict' as const };
  it('counts one prediction, the tokens reported, and self-hosted searches and answers as the gateway classed them', () => {
    expect(usageDeltas({ ...base, details: { endpoint: 'tokens', scope: 'kb' } })).toEqual({ predictions_performed: 1 });
    expect(usageDeltas({ ...base, details: { endpoint: 'chat', scope: 'kb', input_tokens: 12, output_tokens: 30 } })).toEqual({
      predictions_performed: 1,
      ai_tokens_used: 42,
    });
    expect(usageDeltas({ ...base, details: { endpoint: 'sentence', scope: 'account', self_hosted: 'search' } })).toEqual({
      predictions_performed: 1,
      self_hosted_searches_performed: 1,
    });
    expect(usageDeltas({ ...base, details: { endpoint: 'chat', self_hosted: 'answer', output_tokens: 5 } })).toEqual({
      predictions_performed: 1,
      ai_tokens_used: 5,
      self_hosted_answers_generated: 1,
    });
    // A generation that failed mid-stream is a prediction, not an answer (as sent, and as stored).
    expect(usageDeltas({ ...base, details: { endpoint: 'chat', self_hosted: 'answer', status: 'error' } })).toEqual({
      predictions_performed: 1,
    });
    expect(usageDeltas({ ...base, details: { endpoint: 'chat', self_hosted: 'answer', status: -1 } })).toEqual({
      predictions_performed: 1,
    });
    // Bad numbers and unknown classes add nothing.
    expect(
      usageDeltas({ ...base, details: { input_tokens: -4, output_tokens: 'many', self_hosted: 'training' } as Record<string, unknown> }),
    ).toEqual({ predictions_performed: 1 });
    expect(usageDeltas({ ...base })).toEqual({ predictions_performed: 1 });
  });
});

describe('decideBlocks', () => {
  const limits = (usage: Record<string, number>, processing: Record<string, number> = {}) =>
    ({ upload: {}, usage, processing }) as unknown as EffectiveLimits;
  it('blocks a feature at its limit, not below, never when unlimited; storage per KB', () => {
    expect(decideBlocks(limits({ monthly_limit_hosted_searches_performed: 3 }), { monthly: { searches_performed: 2 }, perKb: {} })).toEqual(
      { features: [], kbs: {} },
    );
    expect(decideBlocks(limits({ monthly_limit_hosted_searches_performed: 3 }), { monthly: { searches_performed: 3 }, perKb: {} })).toEqual(
      { features: ['search'], kbs: {} },
    );
    expect(
      decideBlocks(limits({ monthly_limit_hosted_searches_performed: -1 }), { monthly: { searches_performed: 1e9 }, perKb: {} }),
    ).toEqual({ features: [], kbs: {} });
    expect(
      decideBlocks(limits({ storage_limit_max_resources_per_kb: 2 }, { monthly_limit_chars_processed: 10 }), {
        monthly: { chars_processed: 11 },
        perKb: { a: { resources: 2 }, b: { resources: 1 } },
      }),
    ).toEqual({ features: ['processing'], kbs: { a: ['storage'] } });
  });

  it('blocks self-hosted searches and answers at their own limits, apart from the hosted ones', () => {
    const l = limits({
      monthly_limit_hosted_searches_performed: 10,
      monthly_limit_self_hosted_searches_performed: 2,
      monthly_limit_self_hosted_answers_generated: 1,
    });
    expect(decideBlocks(l, { monthly: { self_hosted_searches_performed: 1, searches_performed: 9 }, perKb: {} }).features).toEqual([]);
    expect(decideBlocks(l, { monthly: { self_hosted_searches_performed: 2 }, perKb: {} }).features).toEqual(['self_hosted_search']);
    expect(decideBlocks(l, { monthly: { self_hosted_answers_generated: 1, searches_performed: 10 }, perKb: {} }).features).toEqual([
      'search',
      'self_hosted_ask',
    ]);
    // Predictions and tokens hold no limit.
    expect(decideBlocks(l, { monthly: { predictions_performed: 1e9, ai_tokens_used: 1e12 }, perKb: {} }).features).toEqual([]);
  });
});
