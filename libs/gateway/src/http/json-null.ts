import {
  applyDecorators,
  Injectable,
  UseInterceptors,
  type CallHandler,
  type ExecutionContext,
  type NestInterceptor,
} from '@nestjs/common';
import { ApiResponse } from '@nestjs/swagger';
import type { Response } from 'express';
import { map, type Observable } from 'rxjs';
import { JSON_NULL_SCHEMA } from '@kb/contracts';

/**
 * Sends a handler's `null` as a JSON `null` body (`content-type: application/json`), as the spec's
 * "200 with null body" routes answer; Nest alone would send an empty body for it.
 */
@Injectable()
export class JsonNullInterceptor implements NestInterceptor {
  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    return next.handle().pipe(
      map((value: unknown) => {
        if (value !== null && value !== undefined) return value;
        context.switchToHttp().getResponse<Response>().type('application/json');
        return 'null';
      }),
    );
  }
}

/** A route that answers 200 with a JSON `null` body: the interceptor and its declaration in the document. */
export const AnswersJsonNull = (description = 'Done: JSON null'): MethodDecorator =>
  applyDecorators(UseInterceptors(JsonNullInterceptor), ApiResponse({ status: 200, description, schema: JSON_NULL_SCHEMA }));
