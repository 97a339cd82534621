export * from './test-database';
export * from './saml-idp';
