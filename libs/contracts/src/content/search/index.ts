export * from './request-limits';
export * from './filter-expression';
export * from './retrieval.dto';
export * from './find.dto';
export * from './search-payload';
export * from './search.dto';
export * from './catalog.dto';
