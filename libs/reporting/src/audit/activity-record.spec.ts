import type { AuditRecordedEvent } from '@kb/contracts';
import { feedbackRow, isFeedbackEvent, mergeFeedback, recordDetails } from './activity-record';

const base: AuditRecordedEvent = { event_id: 'e', kbid: 'kb', type: 'search', date: '2026-11-01T00:00:00.000Z' };

describe('recordDetails', () => {
  it('names search details as the record does', () => {
    expect(recordDetails({ ...base, details: { query: 'q', filters: ['/l/a'], resources_count: 3, features: ['keyword'] } })).toEqual({
      details: { question: 'q', filter: ['/l/a'], resources_count: 3, features: ['keyword'] },
      learning_id: null,
    });
  });

  it('maps chat statuses to their codes and keeps the learning id of chats only', () => {
    const chat = recordDetails({
      ...base,
      type: 'chat',
      details: { question: 'q', status: 'no_context', strategies: ['hierarchy'], learning_id: 'l1', time_to_first_char: 'soon' },
    });
    expect(chat).toEqual({
      details: { question: 'q', status: -2, rag_strategies_names: ['hierarchy'], learning_id: 'l1' },
      learning_id: 'l1',
    });
    expect(recordDetails({ ...base, details: { learning_id: 'l1', status: 'weird', resources_count: '3' } })).toEqual({
      details: { learning_id: 'l1' },
      learning_id: null,
    });
  });
});

describe('feedback', () => {
  const fb = (f: Record<string, unknown>): AuditRecordedEvent => ({
    ...base,
    type: 'chat',
    details: { feedback: { learning_id: 'l1', ...f }, learning_id: 'l1' },
  });

  it('is told from answers', () => {
    expect(isFeedbackEvent(fb({ good: true }))).toBe(true);
    expect(isFeedbackEvent({ ...base, type: 'chat', details: { question: 'q', answer: 'a' } })).toBe(false);
    expect(isFeedbackEvent({ ...base, details: { feedback: {} } })).toBe(false);
  });

  it('on the answer and on its text blocks merges', () => {
    const main = feedbackRow(fb({ good: true, feedback: 'ok', task: 'CHAT' }))!;
    const block = feedbackRow(fb({ good: false, text_block_id: 'r/t/x/0-5' }))!;
    expect(main).toEqual({ kbid: 'kb', learning_id: 'l1', feedback: { good: true, feedback: 'ok', task: 'CHAT', date: base.date } });
    const merged = mergeFeedback(mergeFeedback(block.feedback, main.feedback), { text_blocks: { b2: { good: true } } });
    expect(merged).toEqual({
      good: true,
      feedback: 'ok',
      task: 'CHAT',
      date: base.date,
      text_blocks: { 'r/t/x/0-5': { good: false, feedback: null, task: null, date: base.date }, b2: { good: true } },
    });
    expect(feedbackRow({ ...base, type: 'chat', details: { feedback: { good: true } } })).toBeNull();
  });
});
