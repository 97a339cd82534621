import { DomainError, type ValidationIssue } from '@kb/contracts';

type Loc = (string | number)[];

/**
 * The problems the service itself finds in a request that its DTO already accepted (a search
 * configuration merged in, a structured answer the KB's model cannot give, an expression the
 * compiler cannot read), located as the DTO locates them (`['body', ...]`). All of them are
 * answered at once: one 422 `{detail: [{loc, msg, type}]}`.
 */
export class Issues {
  readonly list: ValidationIssue[] = [];

  constructor(readonly loc: Loc = ['body']) {}

  issue(member: string | Loc, msg: string, type = 'value_error'): void {
    this.list.push({ loc: [...this.loc, ...(Array.isArray(member) ? member : [member])], msg, type });
  }

  throwIfAny(): void {
    if (this.list.length) throw DomainError.validation(this.list);
  }
}

/** Where a compiler reports what it cannot read (an `Issues`, relative to its location). */
export interface IssueSink {
  issue(member: string | Loc, msg: string, type?: string): void;
}

export const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
