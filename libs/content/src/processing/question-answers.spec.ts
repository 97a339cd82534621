import type { QuestionAnswersJob } from '@kb/contracts';
import type { MessageBus } from '@kb/platform/messaging';
import type { Logger } from '@kb/platform/observability';
import type { DataSource } from 'typeorm';
import type { ResourcesRepository } from '../resources/resources.repository';
import { parsePairs, QuestionAnswersService } from './question-answers.service';

describe('parsePairs (question/answer pairs from a model answer)', () => {
  const keys = ['r/t/body/0-40', 'r/t/body/42-90'];

  it('reads the JSON asked for, inside code fences or prose, and maps cited passage numbers to paragraph ids', () => {
    const answer =
      'Here you are:\n```json\n{"pairs": [{"question": " What pulls the tides? ", "answer": "The moon.", "paragraphs": [2, 2, 7, "r/t/body/0-40"]}, {"question": "Q2", "answer": "A2"}]}\n```';
    expect(parsePairs(answer, keys, 'en')).toEqual([
      {
        question: { text: 'What pulls the tides?', language: 'en', ids_paragraphs: ['r/t/body/42-90', 'r/t/body/0-40'] },
        answers: [{ text: 'The moon.', language: 'en', ids_paragraphs: ['r/t/body/42-90', 'r/t/body/0-40'] }],
      },
      { question: { text: 'Q2', language: 'en', ids_paragraphs: [] }, answers: [{ text: 'A2', language: 'en', ids_paragraphs: [] }] },
    ]);
  });

  it('gives null for anything else: prose, broken JSON, no pairs, empty texts', () => {
    expect(parsePairs('Hello world', keys, 'en')).toBeNull();
    expect(parsePairs('{"pairs": [', keys, 'en')).toBeNull();
    expect(parsePairs('{"items": []}', keys, 'en')).toBeNull();
    expect(parsePairs('{"pairs": [{"question": "", "answer": "x"}, {"question": 3, "answer": "y"}]}', keys, 'en')).toBeNull();
  });

  it('keeps at most five pairs', () => {
    const many = { pairs: Array.from({ length: 9 }, (_, i) => ({ question: `Q${i}`, answer: `A${i}`, paragraphs: [1] })) };
    expect(parsePairs(JSON.stringify(many), keys, 'en')).toHaveLength(5);
  });
});

describe('QuestionAnswersService.jobFor', () => {
  const service = () => {
    const asked: unknown[] = [];
    const bus = {
      request: async (_subject: unknown, payload: unknown) => {
        asked.push(payload);
        return { generative_model: 'chatgpt-azure-4o' };
      },
    } as unknown as MessageBus;
    return { asked, qa: new QuestionAnswersService({} as DataSource, bus, {} as Logger, {} as ResourcesRepository) };
  };
  const job = (field_type: string) => ({ kbid: 'kb', rid: 'r', field_type, field_id: 'f', seqid: 1 }) as unknown as QuestionAnswersJob;

  it('schedules pairs for fields with prose when the KB has a provider model', async () => {
    const { qa } = service();
    for (const type of ['text', 'file', 'link']) expect(await qa.jobFor(job(type))).toHaveLength(1);
  });

  it('schedules none for conversations, keyword sets and dates, without reading the KB configuration', async () => {
    const { qa, asked } = service();
    for (const type of ['conversation', 'keywordset', 'datetime']) expect(await qa.jobFor(job(type))).toEqual([]);
    expect(asked).toEqual([]);
  });
});
