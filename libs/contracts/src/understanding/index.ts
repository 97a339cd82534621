export * from './processing.dto';
export * from './understanding.subjects';
