import { centralSentences, SUMMARY_SIZE } from './summarize';

describe('centralSentences (extractive summaries without a model)', () => {
  const text =
    'The moon pulls the oceans and causes the tides every day. Spring tides happen when the sun and the moon pull the oceans together. ' +
    'Neap tides happen when the sun and the moon pull the oceans at right angles. Sailors like calm weather. ' +
    'Tide tables predict the tides of the oceans for every harbour.';

  it("keeps the sentences most central to the text, in text order, within the kind's size", () => {
    const simple = centralSentences([text], SUMMARY_SIZE.simple);
    expect(simple.split(/(?<=\.) /)).toHaveLength(3);
    expect(simple).toContain('The moon pulls the oceans and causes the tides every day.');
    expect(simple).not.toContain('Sailors like calm weather.');
    expect(simple.indexOf('The moon')).toBeLessThan(simple.indexOf('tides happen'));
    expect(centralSentences([text], { sentences: 10, chars: 130 }).length).toBeLessThanOrEqual(130);
  });

  it('is deterministic, keeps a short text whole and gives nothing for no text', () => {
    expect(centralSentences([text], SUMMARY_SIZE.extended)).toBe(centralSentences([text], SUMMARY_SIZE.extended));
    expect(centralSentences(['Yeast makes bread rise.'], SUMMARY_SIZE.simple)).toBe('Yeast makes bread rise.');
    expect(centralSentences([], SUMMARY_SIZE.simple)).toBe('');
  });
});
