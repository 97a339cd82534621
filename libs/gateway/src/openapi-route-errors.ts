import type { TusDeclaration } from './openapi-transfers';

/**
 * The error responses particular to a route, beside the ones every route of its kind gets from the
 * access table and its inputs (openapi-errors.ts): what the services and the gateway's own code for
 * that route raise (grep the services for the DomainError codes). Keys are access-table routes.
 */
export interface RouteDeclaration {
  /** Status → when it happens. */
  errors?: Partial<Record<'402' | '404' | '409' | '413' | '415' | '429', string>>;
  /** The route answers a person's browser: its own refusals are HTML pages, not JSON. */
  htmlErrors?: true;
  /** A stored file streamed by `sendBlob` (its media type when fixed): `Range` asked → 206, outside the file → 416. */
  download?: true | string;
  /** A TUS route: its headers, body and answers. */
  tus?: TusDeclaration;
}

const UPLOADED = { $ref: '#/components/schemas/ResourceFileUploadedDto' };
const NEW_RESOURCE = { $ref: '#/components/schemas/CreateResourceDto' };

const UPLOAD_TYPE = 'The file type is not one the service can process';
const UPLOAD_SIZE = "The file is larger than the account's limit for its kind (media or other)";
const DUPLICATE = 'x-md5 names a file the Knowledge Box already holds';

const TUS = (base: string, target: boolean): Record<string, RouteDeclaration> => ({
  [`POST /api/v1/kb/:kbid/${base}tusupload`]: {
    tus: { step: 'create', body: NEW_RESOURCE },
    errors: {
      413: `Upload-Length is larger than Tus-Max-Size or the account's file limit`,
      ...(target ? { 404: 'No such resource in the Knowledge Box' } : {}),
    },
  },
  [`HEAD /api/v1/kb/:kbid/${base}tusupload/:upload_id`]: {
    tus: { step: 'head' },
    errors: { 404: 'No such upload (or it is finished)' },
  },
  [`PATCH /api/v1/kb/:kbid/${base}tusupload/:upload_id`]: {
    tus: { step: 'patch', done: UPLOADED },
    errors: {
      404: 'No such upload (or it is finished)',
      409: `Upload-Offset is not the upload's current offset, or (last chunk) ${DUPLICATE}`,
      413: `The chunks add up to more than Upload-Length or the account's file limit`,
      415: UPLOAD_TYPE,
    },
  },
});

const RESOURCE = (by: string): Record<string, RouteDeclaration> => ({
  [`PATCH /api/v1/kb/:kbid/${by}`]: { errors: { 409: 'Another resource of the Knowledge Box has this slug' } },
  [`POST /api/v1/kb/:kbid/${by}/:field_type/:field_id/reprocess`]: {
    errors: { 409: 'The file of the field was not kept (x-skip-store), so it cannot be processed again' },
  },
  [`POST /api/v1/kb/:kbid/${by}/file/:field_id/upload`]: { errors: { 409: DUPLICATE, 413: UPLOAD_SIZE, 415: UPLOAD_TYPE } },
  [`GET /api/v1/kb/:kbid/${by}/file/:field_id/download/field`]: { download: true },
  [`GET /api/v1/kb/:kbid/${by}/:field_type/:field_id/download/extracted/*download_field`]: { download: true },
});

const SIGN_IN_LIMIT = 'Too many sign-ins from this address, or too many in progress';
const KB_LIMIT = 'The account has reached its limit of Knowledge Boxes';
const KB_SLUG = 'The account has a Knowledge Box with this slug';
const PREDICT_LIMIT = 'The model provider is rate limiting the service';

export const ROUTE_DECLARATIONS: Readonly<Record<string, RouteDeclaration>> = {
  'GET /api/v1/blobs/*key': { download: true, errors: { 404: 'The file is gone' } },
  'POST /api/v1/auth/signup': { errors: { 409: 'A user has this e-mail address', 429: SIGN_IN_LIMIT } },
  'POST /api/v1/auth/login': { errors: { 429: SIGN_IN_LIMIT } },
  'GET /api/v1/saml/:account_id/metadata': { errors: { 404: 'No such account, or single sign-on is not configured for it' } },
  'GET /api/v1/saml/:account_id/login': {
    htmlErrors: true,
    errors: { 404: 'No such account, or single sign-on is not configured for it' },
  },
  'POST /api/v1/saml/:account_id/acs': {
    htmlErrors: true,
    errors: {
      404: 'No such account, or single sign-on is not configured for it',
      409: 'This identity of the identity provider belongs to another user',
    },
  },
  'POST /api/v1/saml/:account_id/link': { errors: { 404: 'No such account, or single sign-on is not configured for it' } },
  'PATCH /api/v1/user': { errors: { 409: 'Another user has this e-mail address' } },
  'DELETE /api/v1/user': { errors: { 409: 'The user is the only owner of an account' } },
  'DELETE /api/v1/user/pa_token/:token_id': { errors: { 404: 'No such personal access token of this user' } },

  'POST /api/v1/accounts': { errors: { 409: 'The account slug is taken' } },
  'PATCH /api/v1/account/:account_id': { errors: { 409: 'The account slug is taken' } },
  'PATCH /api/v1/account/:account_id/users': {
    errors: { 402: 'The account has reached its limit of users', 409: 'The change would leave the account without an owner' },
  },
  'POST /api/v1/account/:account_id/nua_clients': { errors: { 409: 'The account has a client with this client_id' } },
  'PATCH /api/v1/account/:account_id/kb/:kb_id/users': {
    errors: { 409: 'The change would leave the Knowledge Box without a manager (SOWNER)' },
  },
  'POST /api/v1/account/:account_id/kbs': { errors: { 402: KB_LIMIT, 409: KB_SLUG } },
  'POST /api/v1/account/:account_id/backups': { errors: { 402: 'The account keeps as many backups as it may: delete some first' } },
  'POST /api/v1/account/:account_id/backup/:backup_id/restore': {
    errors: { 402: KB_LIMIT, 409: 'The backup is not finished' },
  },
  'PATCH /api/v1/account/:account_id/kb/:kb_id': { errors: { 409: KB_SLUG } },
  'POST /api/v1/kbs': { errors: { 402: KB_LIMIT, 409: KB_SLUG } },
  'PATCH /api/v1/kb/:kbid': { errors: { 409: KB_SLUG } },
  'GET /api/v1/kb/s/:slug': { errors: { 404: 'None of your Knowledge Boxes has this slug' } },
  'POST /api/v1/kb/:kbid/export': { errors: { 429: 'Three exports or imports of this Knowledge Box are already under way' } },
  'GET /api/v1/kb/:kbid/export/:export_id': { download: 'application/gzip' },
  'POST /api/v1/kb/:kbid/import': {
    errors: {
      413: "The archive is larger than the account's file limit",
      429: 'Three exports or imports of this Knowledge Box are already under way',
    },
  },
  'POST /api/v1/kbs/import': { errors: { 402: KB_LIMIT, 413: "The archive is larger than the account's file limit" } },

  'DELETE /api/v1/kb/:kbid/vectorsets/:vectorset_id': { errors: { 409: 'The model is the default semantic model' } },
  'DELETE /api/v1/account/:account_id/models/:kb_id/:model_id': { errors: { 409: 'The model is the default semantic model' } },
  'GET /api/v1/download/:kbid/model/:model_id/:filename': { download: true },

  'POST /api/v1/kb/:kbid/resources': { errors: { 409: 'A resource with this slug or id exists' } },
  'POST /api/v1/kb/:kbid/upload': { errors: { 409: DUPLICATE, 413: UPLOAD_SIZE, 415: UPLOAD_TYPE } },
  'POST /api/v1/kb/:kbid/activity/:event_type/query/download': {
    errors: { 429: 'Too many downloads of this Knowledge Box are waiting to be prepared' },
  },

  'GET /api/v1/processing/requests/:processing_id': { errors: { 404: 'No such processing request of this account' } },
  'GET /api/v1/processing/requests/:processing_id/webhooks': { errors: { 404: 'No such processing request of this account' } },
  'POST /api/v1/processing/push': { errors: { 409: 'The resource id is already in use' } },
  'POST /api/v1/processing/upload': { errors: { 413: UPLOAD_SIZE, 415: 'No content type, and none guessed from the file name' } },
  'POST /api/v1/processing/tusupload': {
    tus: { step: 'create' },
    errors: { 413: `Upload-Length is larger than Tus-Max-Size or the account's file limit` },
  },
  'HEAD /api/v1/processing/tusupload/:upload_id': { tus: { step: 'head' }, errors: { 404: 'No such upload (or it is finished)' } },
  'PATCH /api/v1/processing/tusupload/:upload_id': {
    tus: { step: 'patch', done: { type: 'string', description: 'The upload token, to push with' } },
    errors: {
      404: 'No such upload (or it is finished)',
      409: "Upload-Offset is not the upload's current offset",
      413: `The chunks add up to more than Upload-Length or the account's file limit`,
      415: 'No content type, and none guessed from the file name',
    },
  },

  'GET /api/v1/kb/:kbid/predict/:endpoint': { errors: { 429: PREDICT_LIMIT } },
  'POST /api/v1/kb/:kbid/predict/:endpoint': { errors: { 429: PREDICT_LIMIT } },
  'POST /api/v1/kb/:kbid/predict/compat/chat/completions': { errors: { 429: PREDICT_LIMIT } },
  'POST /api/v1/kb/:kbid/predict/compat/embeddings': { errors: { 429: PREDICT_LIMIT } },
  'GET /api/v1/predict/:endpoint': { errors: { 429: PREDICT_LIMIT } },
  'POST /api/v1/predict/:endpoint': { errors: { 429: PREDICT_LIMIT } },
  'POST /api/v1/predict/compat/chat/completions': { errors: { 429: PREDICT_LIMIT } },
  'POST /api/v1/predict/compat/embeddings': { errors: { 429: PREDICT_LIMIT } },

  ...TUS('', false),
  ...TUS('resource/:rid/file/:field_id/', true),
  ...TUS('slug/:rslug/file/:field_id/', true),
  ...RESOURCE('resource/:rid'),
  ...RESOURCE('slug/:rslug'),
};
