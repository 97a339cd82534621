import { Inject, Injectable } from '@nestjs/common';
import { AccountsSubjects } from '@kb/contracts';
import { MESSAGE_BUS, type MessageBus } from '@kb/platform/messaging';
import { UNDERSTANDING_OPTIONS, type UnderstandingOptions } from '../understanding.tokens';
import { OpenAiTranscriber, type Transcriber } from '../pipeline/extractors';

const TTL_MS = 60_000;
const OPENAI_URL = 'https://api.openai.com/v1';
/** Providers whose `user_keys` entry may name a `transcription_model`, in the order they are looked at. */
const PROVIDERS = ['openai_compatible', 'openai'] as const;

/**
 * The speech-to-text of each knowledge box, from its model configuration: the first of
 * `user_keys.openai_compatible` and `user_keys.openai` that names a `transcription_model`, called at
 * its `url` (OpenAI's API for `openai`) with its `key`. None configured: undefined, and audio and
 * video fields get a NO_TRANSCRIBER error. Configurations are re-read after a minute.
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
    for (const provider of PROVIDERS) {
      const entry = keys[provider];
      const model = entry?.['transcription_model'];
      if (!entry || typeof model !== 'string' || !model) continue;
      const str = (k: string) => (typeof entry[k] === 'string' && entry[k] !== '' ? (entry[k] as string) : undefined);
      const url = str('url') ?? (provider === 'openai' ? OPENAI_URL : undefined);
      if (!url) continue;
      return new OpenAiTranscriber({ url, key: str('key') ?? str('api_key'), model });
    }
    return undefined;
  }
}
