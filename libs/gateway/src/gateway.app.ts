import type { Server } from 'node:http';
import type { INestApplication } from '@nestjs/common';
import { DocumentBuilder, SwaggerModule, type OpenAPIObject } from '@nestjs/swagger';
import express, { type NextFunction, type Request, type Response } from 'express';
import { DomainError, ErrorCodes, ErrorResponse, RateLimitedResponse, ValidationErrorResponse } from '@kb/contracts';
import type { EnvReader } from '@kb/platform/config';
import { HttpErrorFilter, toHttpError, type ErrorLogger } from '@kb/platform/errors';
import { presentedCredentials } from './auth/credential-header';
import type { CorsPolicy } from './cors/cors-policy';
import { CORS_POLICY } from './gateway.module';
import { ClientRateLimiter, type ClientRateLimitOptions } from './http/client-rate-limit';
import { inspectInput, inspectPath } from './http/input-inspection';
import { declareErrorResponses } from './openapi-errors';
import { declarePathParameters } from './openapi-paths';

/** Routes whose request body is a file stream. */
const STREAMED_BODY = /\/(upload|tusupload\/[^/]+)$|^\/api\/v1\/(kb\/[^/]+|kbs)\/import$/i;
/**
 * JSON routes that carry content (inline base64 files, long texts, conversations): resource create
 * and modify, field writes, processing push. Every other JSON body is small.
 */
const CONTENT_BODY =
  /^\/api\/v1\/(kb\/[^/]+\/(resources|(resource|slug)\/[^/]+(\/(text|link|file|conversation)\/[^/]+(\/messages)?)?)|processing\/push)\/?$/i;
/**
 * Public routes that sign someone in (password, invitation token, SAML assertion): rate-limited per
 * client address. (Accepting an invitation over the API needs a signed-in user: not public.)
 * Case-insensitive like the router, or `/API/V1/AUTH/LOGIN` would reach the route around the limit.
 */
const PUBLIC_AUTH = /^\/(auth|api\/v1\/auth|api\/v1\/saml\/[^/]+\/acs)(\/|$)/i;
/** Routes that take HTML/SAML form posts; every other body is JSON. */
const FORM_BODY = /^\/(auth|api\/v1\/saml)(\/|$)/;
const JSON_TYPE = /^application\/([\w.-]+\+)?json\s*(;|$)/i;

const hasBody = (req: Request): boolean =>
  (req.headers['content-length'] !== undefined && req.headers['content-length'] !== '0') || req.headers['transfer-encoding'] !== undefined;

export interface GatewayHttpOptions {
  logger: ErrorLogger;
  /** Largest JSON body accepted on the routes that carry content (JSON_BODY_LIMIT). */
  jsonBodyLimit: string;
  /** Largest JSON body accepted everywhere else (JSON_DEFAULT_BODY_LIMIT; 1mb when unset). */
  defaultJsonBodyLimit?: string;
  /** Express `trust proxy` (TRUSTED_PROXIES): which peers may name the client in X-Forwarded-For. */
  trustProxy?: TrustProxy;
  /** Per-address request budget on the public sign-in routes (AUTH_RATE_LIMIT_*). */
  authRateLimit?: ClientRateLimitOptions;
  /** How long an idle kept-alive connection stays open (HTTP_KEEP_ALIVE_TIMEOUT_MS). */
  keepAliveTimeoutMs?: number;
}

export const DEFAULT_JSON_BODY_LIMIT = '1mb';
export const DEFAULT_AUTH_RATE_LIMIT: ClientRateLimitOptions = { burst: 60, perMinute: 60, maxClients: 100_000 };

/** What express accepts for `trust proxy`, less `true` (trusting every peer would let anyone pick their address). */
export type TrustProxy = false | number | string[];

/**
 * TRUSTED_PROXIES: empty (the socket's address is the client), a hop count, or a comma-separated
 * list of proxy addresses, CIDR ranges or the names loopback, linklocal, uniquelocal.
 */
export function parseTrustProxy(value: string | undefined): TrustProxy {
  const text = (value ?? '').trim();
  if (text === '' || text === 'false') return false;
  if (/^\d+$/.test(text)) return Number(text);
  if (text === 'true')
    throw new Error('TRUSTED_PROXIES=true would trust every peer: name the proxies (addresses, CIDR ranges, loopback) or a hop count');
  return text
    .split(',')
    .map((p) => p.trim())
    .filter(Boolean);
}

/**
 * Idle kept-alive connections are held longer than the 60 s idle timeout of common load
 * balancers and proxies, so that they, not the service, close them: a proxy sending a request on a
 * connection the service closed at that moment would answer 502. (Node's own default is 5 s.)
 */
export const HTTP_KEEP_ALIVE_TIMEOUT_MS = 65_000;

/**
 * Express set-up of the edge, in order: CORS, the credential-count rule (nothing else runs for a
 * request with two credentials), then JSON parsing, the error filter and the OpenAPI routes.
 * Create the app with `bodyParser: false` so this order holds.
 */
export function configureGatewayHttp(app: INestApplication, options: GatewayHttpOptions): void {
  (app.getHttpServer() as Server).keepAliveTimeout = options.keepAliveTimeoutMs ?? HTTP_KEEP_ALIVE_TIMEOUT_MS;
  // The client address (req.ip) is the socket's unless an operator names the proxies in front.
  (app.getHttpAdapter().getInstance() as express.Express).set('trust proxy', options.trustProxy ?? false);
  // CORS first: a browser's preflight carries no credential and must be answered before anything else.
  const cors = app.get<CorsPolicy>(CORS_POLICY, { strict: false });
  app.use(cors.middleware());
  app.use((req: Request, res: Response, next: NextFunction) => {
    try {
      presentedCredentials(req);
      next();
    } catch (err) {
      const { status, body } = toHttpError(err, options.logger);
      res.status(status).json(body);
    }
  });
  // Before any body is read: a flood on the sign-in routes costs a map look-up, not a parse or a hash.
  const authLimiter = new ClientRateLimiter(options.authRateLimit ?? DEFAULT_AUTH_RATE_LIMIT);
  app.use((req: Request, res: Response, next: NextFunction) => {
    if (req.method === 'GET' || req.method === 'HEAD' || req.method === 'OPTIONS' || !PUBLIC_AUTH.test(req.path)) return next();
    const until = authLimiter.take(req.ip ?? req.socket.remoteAddress ?? '');
    if (until === null) return next();
    const error = new DomainError(ErrorCodes.RATE_LIMITED, 'Too many sign-in requests from this address; try again later', {
      try_after: Math.ceil(until / 1000),
    });
    const { status, body, headers } = toHttpError(error, options.logger);
    res
      .status(status)
      .set(headers ?? {})
      .json(body);
  });
  // The sign-in page posts plain HTML forms.
  app.use('/auth', express.urlencoded({ extended: false, limit: '16kb' }));
  // The identity provider posts SAMLResponse as a form; signed responses with certificates run to tens of kB.
  app.use('/api/v1/saml', express.urlencoded({ extended: false, limit: '512kb' }));
  // Upload bodies are streams for the blob store, whatever their content type: never parse them.
  const jsonType = ['application/json', 'application/*+json'];
  const contentJson = express.json({ limit: options.jsonBodyLimit, type: jsonType });
  const json = express.json({ limit: options.defaultJsonBodyLimit ?? DEFAULT_JSON_BODY_LIMIT, type: jsonType });
  app.use((req: Request, res: Response, next: NextFunction) => {
    if (STREAMED_BODY.test(req.path)) return next();
    // A body the JSON parser would skip must not reach a route as "no body" (an empty create would succeed).
    if (hasBody(req) && !FORM_BODY.test(req.path) && !JSON_TYPE.test(req.headers['content-type'] ?? '')) {
      const type = req.headers['content-type'] ?? 'none';
      const { status, body } = toHttpError(
        new DomainError(ErrorCodes.UNSUPPORTED_MEDIA_TYPE, `Unsupported content type ${type}: send application/json`),
        options.logger,
      );
      res.status(status).json(body);
      return;
    }
    (CONTENT_BODY.test(req.path) ? contentJson : json)(req, res, next);
  });
  // What no route accepts, refused once for all routes: reserved member names, NUL characters, deep nesting.
  app.use((req: Request, res: Response, next: NextFunction) => {
    const issues = [...inspectPath(req.path), ...inspectInput(req.query, ['query'])];
    if (req.body !== undefined && !Buffer.isBuffer(req.body)) issues.push(...inspectInput(req.body, ['body']));
    if (issues.length === 0) return next();
    const { status, body } = toHttpError(DomainError.validation(issues), options.logger);
    res.status(status).json(body);
  });
  // Body-parser failures happen before Nest's router, so its filter never sees them.
  app.use((err: unknown, _req: Request, res: Response, next: NextFunction) => {
    if (res.headersSent) return next(err);
    const { status, body } = toHttpError(err, options.logger);
    res.status(status).json(body);
  });
  app.useGlobalFilters(new HttpErrorFilter(options.logger));
  const document = buildOpenApiDocument(app);
  SwaggerModule.setup('api/docs', app, document, { jsonDocumentUrl: 'api/openapi.json', yamlDocumentUrl: 'api/openapi.yaml' });
}

export function buildOpenApiDocument(app: INestApplication): OpenAPIObject {
  const config = new DocumentBuilder()
    .setTitle('Knowledge Box Service')
    .setDescription('Knowledge Boxes, resources, processing, search and grounded answers. Exactly one credential header per request.')
    .setVersion('v1')
    .addServer('/', 'The host serving this document')
    .addApiKey(
      {
        type: 'apiKey',
        in: 'header',
        name: 'X-SVC-SERVICEACCOUNT',
        description: 'Bearer <API key> (also accepted as X-NUCLIA-SERVICEACCOUNT or X-STF-SERVICEACCOUNT)',
      },
      'apiKey',
    )
    .addApiKey(
      {
        type: 'apiKey',
        in: 'header',
        name: 'X-SVC-UAKEY',
        description: 'Bearer <UA key> (also accepted as X-NUCLIA-NUAKEY or X-STF-NUAKEY)',
      },
      'uaKey',
    )
    .addBearerAuth({ type: 'http', scheme: 'bearer', description: 'User token or personal access token' }, 'bearer')
    .addApiKey(
      {
        type: 'apiKey',
        in: 'query',
        name: 'eph-token',
        description: 'An ephemeral token of the KB (download routes only, for links in a page)',
      },
      'ephemeralToken',
    )
    .addSecurityRequirements('apiKey')
    .addSecurityRequirements('bearer')
    .build();
  return declareErrorResponses(
    declarePathParameters(
      SwaggerModule.createDocument(app, config, {
        deepScanRoutes: true,
        extraModels: [ErrorResponse, RateLimitedResponse, ValidationErrorResponse],
        operationIdFactory: (controller, method) => `${controller.replace(/Controller$/, '')}_${method}`,
      }),
    ),
  );
}

/** The edge's HTTP settings from the environment (both the gateway and the standalone process). */
export function gatewayHttpEnv(reader: EnvReader): Omit<GatewayHttpOptions, 'logger'> {
  return {
    jsonBodyLimit: reader.string('JSON_BODY_LIMIT', '25mb'),
    defaultJsonBodyLimit: reader.string('JSON_DEFAULT_BODY_LIMIT', DEFAULT_JSON_BODY_LIMIT),
    keepAliveTimeoutMs: reader.int('HTTP_KEEP_ALIVE_TIMEOUT_MS', HTTP_KEEP_ALIVE_TIMEOUT_MS, { min: 1_000, max: 600_000 }),
    trustProxy: parseTrustProxy(reader.optional('TRUSTED_PROXIES')),
    authRateLimit: {
      burst: reader.int('AUTH_RATE_LIMIT_BURST', DEFAULT_AUTH_RATE_LIMIT.burst, { min: 1, max: 100_000 }),
      perMinute: reader.int('AUTH_RATE_LIMIT_PER_MINUTE', DEFAULT_AUTH_RATE_LIMIT.perMinute, { min: 1, max: 1_000_000 }),
      maxClients: reader.int('AUTH_RATE_LIMIT_MAX_CLIENTS', DEFAULT_AUTH_RATE_LIMIT.maxClients, { min: 100, max: 10_000_000 }),
    },
  };
}
