export * from './reporting.subjects';
export * from './usage.dto';
export * from './activity-chain.dto';
export * from './activity-download.dto';
