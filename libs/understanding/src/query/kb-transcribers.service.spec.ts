import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { MessageBus } from '@kb/platform/messaging';
import type { UnderstandingOptions } from '../understanding.tokens';
import { OpenAiTranscriber, WhisperCppTranscriber } from '../pipeline/extractors';
import { KbTranscribersService } from './kb-transcribers.service';

describe('KbTranscribersService (the transcriber of each KB)', () => {
  let modelDir: string;
  const configs: Record<string, Record<string, unknown>> = {};
  const asked: string[] = [];
  const bus = {
    request: async (_def: unknown, payload: { kb_id: string }) => {
      asked.push(payload.kb_id);
      return configs[payload.kb_id] ?? { user_keys: null };
    },
  } as unknown as MessageBus;
  const service = (options: Partial<UnderstandingOptions> = {}) =>
    new KbTranscribersService(bus, { consumeJobs: false, concurrency: 1, maxAttempts: 3, ...options });

  beforeAll(() => {
    modelDir = mkdtempSync(join(tmpdir(), 'kb-transcribers-'));
    writeFileSync(join(modelDir, 'ggml-small.bin'), 'weights');
    writeFileSync(join(modelDir, 'whisper-cli'), '#!/bin/sh\nexit 0\n');
    chmodSync(join(modelDir, 'whisper-cli'), 0o755);
    configs['kb-compat'] = {
      user_keys: {
        openai_compatible: { url: 'http://speech.local/v1', key: 'sk-1', transcription_model: 'whisper-large-v3' },
        openai: { key: 'sk-2', transcription_model: 'whisper-1' },
      },
    };
    configs['kb-openai'] = { user_keys: { openai: { key: 'sk-2', transcription_model: 'whisper-1' } } };
    configs['kb-embeddings-only'] = { user_keys: { openai: { key: 'sk-3', model: 'text-embedding-3-small' } } };
  });
  afterAll(() => rmSync(modelDir, { recursive: true, force: true }));

  it("uses the KB's provider entry that names a transcription_model, openai_compatible first", async () => {
    const compat = await service().get('kb-compat');
    expect(compat).toBeInstanceOf(OpenAiTranscriber);
    expect(compat?.model).toBe('whisper-large-v3');
    expect((await service().get('kb-openai'))?.model).toBe('whisper-1');
  });

  it("without one: none, or the workers' local model folder when the deployment has one", async () => {
    await expect(service().get('kb-embeddings-only')).resolves.toBeUndefined();
    const local = await service({ transcriptionModelDir: modelDir }).get('kb-embeddings-only');
    expect(local).toBeInstanceOf(WhisperCppTranscriber);
    expect(local?.model).toBe('whisper.cpp:small');
    // The KB's own provider still wins over the folder.
    expect((await service({ transcriptionModelDir: modelDir }).get('kb-compat'))?.model).toBe('whisper-large-v3');
  });

  it('a folder that cannot serve is an error saying why, not remembered: the next field looks again', async () => {
    const empty = mkdtempSync(join(tmpdir(), 'kb-transcribers-empty-'));
    try {
      const s = service({ transcriptionModelDir: empty });
      await expect(s.get('kb-1')).rejects.toMatchObject({
        code: 'NO_TRANSCRIBER',
        message: expect.stringContaining('holds no whisper.cpp model'),
      });
      writeFileSync(join(empty, 'ggml-tiny.bin'), 'weights');
      writeFileSync(join(empty, 'whisper-cli'), '#!/bin/sh\nexit 0\n');
      chmodSync(join(empty, 'whisper-cli'), 0o755);
      await expect(s.get('kb-1')).resolves.toBeInstanceOf(WhisperCppTranscriber);
    } finally {
      rmSync(empty, { recursive: true, force: true });
    }
  });

  it("reads each KB's configuration once a minute, not once per field", async () => {
    asked.length = 0;
    const s = service();
    await s.get('kb-openai');
    await s.get('kb-openai');
    expect(asked).toEqual(['kb-openai']);
  });
});
