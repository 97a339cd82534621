export * from './gateway.module';
export * from './gateway.app';
export { ACCESS_TABLE, accessRuleFor } from './auth/access-table';
export { generateOpenApiDocument, serializeOpenApi } from './openapi';
export { AccessClient } from './auth/access-client';
export { AuthGuard } from './auth/auth.guard';
