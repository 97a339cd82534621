export * from './reporting.subjects';
export * from './usage.dto';
export * from './activity-chain.dto';
