import type { Server } from 'node:http';
import type { INestApplication } from '@nestjs/common';
import { DocumentBuilder, SwaggerModule, type OpenAPIObject } from '@nestjs/swagger';
import express, { type NextFunction, type Request, type Response } from 'express';
import { DomainError, ErrorCodes } from '@kb/contracts';
import { HttpErrorFilter, toHttpError, type ErrorLogger } from '@kb/platform/errors';
import { presentedCredential } from './auth/credential-header';
import type { CorsPolicy } from './cors/cors-policy';
import { CORS_POLICY } from './gateway.module';

/** Routes whose request body is a file stream. */
const STREAMED_BODY = /\/(upload|tusupload\/[^/]+)$/;
/** Routes that take HTML/SAML form posts; every other body is JSON. */
const FORM_BODY = /^\/(auth|api\/v1\/saml)(\/|$)/;
const JSON_TYPE = /^application\/([\w.-]+\+)?json\s*(;|$)/i;

const hasBody = (req: Request): boolean => (req.headers['content-length'] !== undefined && req.headers['content-length'] !== '0') || req.headers['transfer-encoding'] !== undefined;

export interface GatewayHttpOptions {
  logger: ErrorLogger;
  /** Largest JSON body accepted (text fields can be large). */
  jsonBodyLimit: string;
  /** How long an idle kept-alive connection stays open (HTTP_KEEP_ALIVE_TIMEOUT_MS). */
  keepAliveTimeoutMs?: number;
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
  // CORS first: a browser's preflight carries no credential and must be answered before anything else.
  const cors = app.get<CorsPolicy>(CORS_POLICY, { strict: false });
  app.use(cors.middleware());
  app.use((req: Request, res: Response, next: NextFunction) => {
    try {
      presentedCredential(req.headers);
      next();
    } catch (err) {
      const { status, body } = toHttpError(err, options.logger);
      res.status(status).json(body);
    }
  });
  // The sign-in page posts plain HTML forms.
  app.use('/auth', express.urlencoded({ extended: false, limit: '16kb' }));
  // The identity provider posts SAMLResponse as a form; signed responses with certificates run to tens of kB.
  app.use('/api/v1/saml', express.urlencoded({ extended: false, limit: '512kb' }));
  // Upload bodies are streams for the blob store, whatever their content type: never parse them.
  const json = express.json({ limit: options.jsonBodyLimit, type: ['application/json', 'application/*+json'] });
  app.use((req: Request, res: Response, next: NextFunction) => {
    if (STREAMED_BODY.test(req.path)) return next();
    // A body the JSON parser would skip must not reach a route as "no body" (an empty create would succeed).
    if (hasBody(req) && !FORM_BODY.test(req.path) && !JSON_TYPE.test(req.headers['content-type'] ?? '')) {
      const type = req.headers['content-type'] ?? 'none';
      const { status, body } = toHttpError(new DomainError(ErrorCodes.UNSUPPORTED_MEDIA_TYPE, `Unsupported content type ${type}: send application/json`), options.logger);
      res.status(status).json(body);
      return;
    }
    json(req, res, next);
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
    .addApiKey({ type: 'apiKey', in: 'header', name: 'X-SVC-SERVICEACCOUNT', description: 'Bearer <API key>' }, 'apiKey')
    .addApiKey({ type: 'apiKey', in: 'header', name: 'X-SVC-UAKEY', description: 'Bearer <UA key>' }, 'uaKey')
    .addBearerAuth({ type: 'http', scheme: 'bearer', description: 'User token or personal access token' }, 'bearer')
    .addSecurityRequirements('apiKey')
    .addSecurityRequirements('bearer')
    .build();
  return SwaggerModule.createDocument(app, config, { deepScanRoutes: true, operationIdFactory: (controller, method) => `${controller.replace(/Controller$/, '')}_${method}` });
}
