export * from './field-input.dto';
export * from './resource-input.dto';
export * from './resource.dto';
export * from './resource-requests.dto';
export * from './audit.event';
export * from './content.subjects';
export * from './field-requests.dto';
export * from './labelset.dto';
