import { Inject, Injectable } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import type { ResourceReindexedEvent } from '@kb/contracts';
import { CONTENT_DATA_SOURCE } from '../content.tokens';
import { ResourcesRepository } from './resources.repository';
import { SearchIndexerService } from '../search/index/search-indexer.service';

/**
 * Answers `content.resource.reindexed`: the resource's index rows are rebuilt from its stored fields
 * (the write side's job, next to the resources it reads: search does not import resources).
 */
@Injectable()
export class SearchReindexService {
  constructor(
    @Inject(CONTENT_DATA_SOURCE) private readonly ds: DataSource,
    private readonly repo: ResourcesRepository,
    private readonly indexer: SearchIndexerService,
  ) {}

  async onReindexed(event: ResourceReindexedEvent): Promise<void> {
    await this.ds.transaction(async (m) => {
      const resource = await this.repo.lockById(m, event.kbid, event.rid);
      if (!resource) return; // deleted meanwhile: nothing to index
      await this.indexer.reindexResource(m, resource, await this.repo.fieldsOf(resource.id, m));
    });
  }
}
