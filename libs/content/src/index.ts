export * from './content.module';
export * from './content.tokens';
export { CONTENT_ENTITIES } from './entities';
export { CONTENT_MIGRATIONS } from './migrations';
export { SearchIndexerService, hnswIndexName } from './search/index/search-indexer.service';
