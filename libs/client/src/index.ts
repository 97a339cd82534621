export { createKbClient, CREDENTIAL_HEADER, type KbClient, type KbClientOptions, type KbCredential } from './kb-client';
export type { components, operations, paths } from './generated/openapi';
