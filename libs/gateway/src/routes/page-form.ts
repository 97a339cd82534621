import type { Request } from 'express';
import { DomainError } from '@kb/contracts';
import { httpStatusFor } from '@kb/platform/errors';

/** A trimmed string member of an HTML form post ('' when absent). */
export function formField(req: Request, name: string): string {
  const v = (req.body as Record<string, unknown> | undefined)?.[name];
  return typeof v === 'string' ? v.trim() : '';
}

/** The HTTP status of a refusal shown on a page; anything that is not a domain error is rethrown. */
export function pageStatusOf(err: unknown): number {
  if (!(err instanceof DomainError)) throw err;
  return httpStatusFor(err.code);
}
