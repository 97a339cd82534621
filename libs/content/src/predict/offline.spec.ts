import { extractiveSummary, offlineRephrase } from './offline';

describe('extractiveSummary', () => {
  const text =
    'Tides rise and fall twice a day. The moon pulls the oceans and so causes the tides. Spring tides come with the full moon. Cats sleep a lot.';

  it('keeps the most central sentences, in text order, and leaves out the unrelated one', () => {
    const summary = extractiveSummary(text);
    expect(summary).toBe(
      'Tides rise and fall twice a day. The moon pulls the oceans and so causes the tides. Spring tides come with the full moon.',
    );
  });

  it('stays within the token budget but always gives one sentence', () => {
    expect(extractiveSummary(text, 12).split('. ').length).toBe(1);
    expect(extractiveSummary('One very long sentence without any end that goes on', 1)).toBe(
      'One very long sentence without any end that goes on',
    );
  });

  it('summarizes nothing into nothing', () => {
    expect(extractiveSummary('   ')).toBe('');
  });
});

describe('offlineRephrase', () => {
  const history = [
    { author: 'USER' as const, text: 'What causes the ocean tides?' },
    { author: 'NUCLIA' as const, text: 'The moon does.' },
  ];

  it("adds the earlier question's missing content words to a follow-up that refers back", () => {
    expect(offlineRephrase('When are they strongest?', history)).toBe('When are they strongest? (causes ocean tides)');
    expect(offlineRephrase('And in winter?', history)).toBe('And in winter? (causes ocean tides)');
  });

  it('returns a question that stands alone, or one without history, as it is', () => {
    expect(offlineRephrase('When are spring tides strongest in Brittany?', history)).toBe('When are spring tides strongest in Brittany?');
    expect(offlineRephrase('When are they strongest?', [])).toBe('When are they strongest?');
    expect(offlineRephrase('When are they strongest?', [{ author: 'NUCLIA', text: 'Tides.' }])).toBe('When are they strongest?');
  });
});
