import { Inject, Injectable, type OnModuleInit } from '@nestjs/common';
import { DomainError, UnderstandingSubjects, encodeFloat32, type EmbedQueryRequest, type EmbedQueryResponse } from '@kb/contracts';
import { MESSAGE_BUS, type MessageBus } from '@kb/platform/messaging';
import { KbEmbeddersService } from './kb-embedders.service';

const CACHE_SIZE = 2_000;

/**
 * Query vectors for /find and /ask, from the same embedder that vectorised the KB's paragraphs
 * (with the model's query prompt). Repeated queries are common (dashboards, retries, prequeries),
 * so recent vectors are kept in a small LRU keyed by KB, model and text.
 */
@Injectable()
export class QueryEmbeddingService implements OnModuleInit {
  private readonly cache = new Map<string, EmbedQueryResponse>();

  constructor(
    @Inject(MESSAGE_BUS) private readonly bus: MessageBus,
    private readonly embedders: KbEmbeddersService,
  ) {}

  async onModuleInit(): Promise<void> {
    await this.bus.handle(UnderstandingSubjects.embedQuery, (req) => this.embed(req));
  }

  async embed(req: EmbedQueryRequest): Promise<EmbedQueryResponse> {
    const res = await this.vectorOf(req);
    // Asked for as float32 (content's /find): base64 text instead of 512 numbers printed and parsed.
    return req.encoding === 'float32' ? { ...res, vector: [], vector_f32: encodeFloat32(res.vector) } : res;
  }

  private async vectorOf(req: EmbedQueryRequest): Promise<EmbedQueryResponse> {
    const embedder = await this.embedders.forVectorset(req.kbid, req.vectorset);
    if (!embedder) {
      const known = (await this.embedders.all(req.kbid)).map((e) => e.model);
      throw DomainError.validation([
        {
          loc: ['body', 'vectorset'],
          msg: `Unknown vectorset ${req.vectorset}; this knowledge box has ${known.join(', ')}`,
          type: 'value_error',
        },
      ]);
    }
    // Background texts (answers being scored) neither read nor fill the queries' cache.
    if (req.background) {
      const vector = await embedder.embedQuery(req.text, { background: true });
      return { vectorset: embedder.model, vector, similarity: embedder.similarity, threshold: embedder.threshold };
    }
    const key = `${req.kbid}\0${embedder.model}\0${req.text}`;
    const hit = this.cache.get(key);
    if (hit) {
      this.cache.delete(key);
      this.cache.set(key, hit);
      return hit;
    }
    const vector = await embedder.embedQuery(req.text);
    const res: EmbedQueryResponse = { vectorset: embedder.model, vector, similarity: embedder.similarity, threshold: embedder.threshold };
    this.cache.set(key, res);
    if (this.cache.size > CACHE_SIZE) this.cache.delete(this.cache.keys().next().value as string);
    return res;
  }
}
