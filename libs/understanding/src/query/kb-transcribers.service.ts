import { Inject, Injectable } from '@nestjs/common';
import { AccountsSubjects, TRANSCRIPTION_PROVIDERS } from '@kb/contracts';
import { MESSAGE_BUS, type MessageBus } from '@kb/platform/messaging';
import { UNDERSTANDING_OPTIONS, type UnderstandingOptions } from '../understanding.tokens';
import { OpenAiTranscriber, openWhisperCppFolder, type Transcriber } from '../pipeline/extractors';

const TTL_MS = 60_000;
const OPENAI_URL = 'https://api.openai.com/v1';

/**
 * The speech-to-text of each knowledge box, from its model configuration: the first of
 * `user_keys.openai_compatible` and `user_keys.openai` that names a `transcription_model`, called at
 * its `url` (OpenAI's API for `openai`) with its `key`. Without one, the workers' local speech
 * model folder when the deployment has one (a folder that cannot serve is a NO_TRANSCRIBER error
 * saying why). Neither: undefined, and audio and video fields get a NO_TRANSCRIBER error.
 * Configurations (and the folder) are looked at again after a minute.
 */
@Injectable()
export class KbTranscribersService {
  private readonly cache = new Map<string, { value: Promise<Transcriber | undefined>; until: number }>();

  constructor(
    @Inject(MESSAGE_BUS) private readonly bus: MessageBus,
    @Inject(UNDERSTANDING_OPTIONS) private readonly options: UnderstandingOptions,
  ) {}

  get(kbid: string): Promise<Transcriber | undefined> {
    if (this.options.transcriberFactory) return this.options.transcriberFactory(kbid);
    const hit = this.cache.get(kbid);
    if (hit && hit.until > Date.now()) return hit.value;
    const value = this.resolve(kbid);
    this.cache.set(kbid, { value, until: Date.now() + TTL_MS });
    value.catch(() => this.cache.delete(kbid));
    return value;
  }

  private async resolve(kbid: string): Promise<Transcriber | undefined> {
    const config = await this.bus.request(AccountsSubjects.resolveKbConfig, { kb_id: kbid });
    const keys = (config['user_keys'] ?? {}) as Record<string, Record<string, unknown> | undefined>;
    for (const provider of TRANSCRIPTION_PROVIDERS) {
      const entry = keys[provider];
      const model = entry?.['transcription_model'];
      if (!entry || typeof model !== 'string' || !model) continue;
      const str = (k: string) => (typeof entry[k] === 'string' && entry[k] !== '' ? (entry[k] as string) : undefined);
      const url = str('url') ?? (provider === 'openai' ? OPENAI_URL : undefined);
      if (!url) continue;
      return new OpenAiTranscriber({ url, key: str('key') ?? str('api_key'), model });
    }
    return this.options.transcriptionModelDir ? openWhisperCppFolder(this.options.transcriptionModelDir) : undefined;
  }
}
