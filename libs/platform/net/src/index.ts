export * from './address-policy';
export * from './outbound-error';
export * from './guarded-connector';
export * from './outbound-http';
export * from './outbound-config';
export * from './status-reason';
