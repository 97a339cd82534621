export * from './reporting.subjects';
export * from './usage.dto';
export * from './activity-chain.dto';
export * from './activity-download.dto';
export * from './activity-members';
export * from './activity-query.dto';
export * from './remi-query.dto';
