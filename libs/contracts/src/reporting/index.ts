export * from './reporting.subjects';
