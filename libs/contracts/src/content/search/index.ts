export * from './request-limits';
export * from './filter-expression';
export * from './retrieval.dto';
export * from './find.dto';
