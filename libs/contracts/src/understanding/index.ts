export * from './processing.dto';
export * from './understanding.subjects';
export * from './query.dto';
export * from './webhook.dto';
