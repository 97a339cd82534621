import { Injectable, type PipeTransform } from '@nestjs/common';
import type { ClassConstructor } from 'class-transformer';
import { validatePayload } from '@kb/contracts';

/** Validates one request part against a DTO class; a 422 lists every invalid member with its `loc`. */
@Injectable()
export class DtoPipe<T extends object> implements PipeTransform<unknown, T> {
  constructor(
    private readonly cls: ClassConstructor<T>,
    private readonly part: 'body' | 'query',
  ) {}

  transform(value: unknown): T {
    // Clients send `Content-Type: application/json` with no body on some calls: treat it as {}.
    const input = value === undefined || value === null || value === '' ? {} : value;
    return validatePayload(this.cls, input, { loc: [this.part] });
  }
}

export const bodyOf = <T extends object>(cls: ClassConstructor<T>) => new DtoPipe(cls, 'body');
export const queryOf = <T extends object>(cls: ClassConstructor<T>) => new DtoPipe(cls, 'query');
