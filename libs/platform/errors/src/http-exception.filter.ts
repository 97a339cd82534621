import { ArgumentsHost, Catch, ExceptionFilter, HttpException } from '@nestjs/common';
import type { Request, Response } from 'express';
import { randomUUID } from 'node:crypto';
import { DomainError, ErrorCodes, type ValidationIssue } from '@kb/contracts';
import { httpStatusFor } from './error-status';

export interface ErrorLogger {
  error(obj: Record<string, unknown>, msg: string): void;
  warn(obj: Record<string, unknown>, msg: string): void;
}

export interface HttpErrorBody {
  status: number;
  body: Record<string, unknown>;
  headers?: Record<string, string>;
}

interface BodyParserError {
  type?: string;
  status?: number;
  statusCode?: number;
  expose?: boolean;
  message?: string;
  limit?: number;
}

/** Translates any thrown value into the spec's error shapes. Pure, so it is easy to test. */
export function toHttpError(err: unknown, logger?: ErrorLogger, requestId?: string): HttpErrorBody {
  if (err instanceof DomainError) return fromDomainError(err, logger, requestId);

  const parser = err as BodyParserError;
  if (parser && typeof parser === 'object' && typeof parser.type === 'string' && (parser.status ?? parser.statusCode)) {
    switch (parser.type) {
      case 'entity.parse.failed':
        return {
          status: 422,
          body: { detail: [{ loc: ['body'], msg: `JSON decode error: ${parser.message ?? 'invalid JSON'}`, type: 'json_invalid' }] },
        };
      case 'entity.too.large':
        return { status: 413, body: { detail: `Request body larger than the limit of ${parser.limit ?? '?'} bytes` } };
      case 'encoding.unsupported':
      case 'charset.unsupported':
        return { status: 415, body: { detail: parser.message ?? 'Unsupported encoding' } };
      default:
        break;
    }
  }

  if (err instanceof HttpException) {
    const status = err.getStatus();
    const response = err.getResponse();
    const message = typeof response === 'string' ? response : ((response as { message?: unknown }).message ?? err.message);
    if (status >= 500) return internal(err, logger, requestId);
    return { status, body: { detail: Array.isArray(message) ? message.join('; ') : String(message) } };
  }

  return internal(err, logger, requestId);
}

function fromDomainError(err: DomainError, logger?: ErrorLogger, requestId?: string): HttpErrorBody {
  const status = httpStatusFor(err.code);
  if (status === 422) {
    const detail = (err.details?.['detail'] as ValidationIssue[] | undefined) ?? [{ loc: [], msg: err.message, type: 'value_error' }];
    return { status, body: { detail } };
  }
  if (status === 429) {
    const tryAfter = err.details?.['try_after'];
    return {
      status,
      body: { detail: { message: err.message, try_after: tryAfter ?? null } },
      headers: typeof tryAfter === 'number' ? { 'Retry-After': String(Math.max(1, Math.ceil(tryAfter - Date.now() / 1000))) } : undefined,
    };
  }
  if (status >= 500) {
    // A remote service already logged an INTERNAL error under its own id: keep that id.
    const remoteId = err.details?.['error_id'];
    if (err.code === ErrorCodes.INTERNAL && typeof remoteId === 'string') {
      logger?.error({ error_id: remoteId, request_id: requestId, code: err.code }, 'remote internal error');
      return { status, body: { detail: 'Internal server error', error_id: remoteId } };
    }
    if (status === 500) return internal(err, logger, requestId);
    logger?.warn({ request_id: requestId, code: err.code, err: err.message }, 'upstream unavailable');
    return { status, body: { detail: err.message } };
  }
  return { status, body: { detail: err.message } };
}

function internal(err: unknown, logger?: ErrorLogger, requestId?: string): HttpErrorBody {
  const errorId = randomUUID();
  const e = err as Error;
  logger?.error(
    { error_id: errorId, request_id: requestId, err: { message: e?.message, stack: e?.stack, name: e?.name } },
    'unhandled error',
  );
  return { status: 500, body: { detail: 'Internal server error', error_id: errorId } };
}

@Catch()
export class HttpErrorFilter implements ExceptionFilter {
  constructor(private readonly logger?: ErrorLogger) {}

  catch(exception: unknown, host: ArgumentsHost): void {
    const ctx = host.switchToHttp();
    const res = ctx.getResponse<Response>();
    const req = ctx.getRequest<Request & { id?: string }>();
    const { status, body, headers } = toHttpError(exception, this.logger, req?.id ? String(req.id) : undefined);
    if (res.headersSent) {
      res.end();
      return;
    }
    if (headers) for (const [k, v] of Object.entries(headers)) res.setHeader(k, v);
    res.status(status).json(body);
  }
}
