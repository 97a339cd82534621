export * from './reporting.subjects';
export * from './usage.dto';
