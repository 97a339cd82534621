import { ApiProperty } from '@nestjs/swagger';
import type { SchemaObject } from '@nestjs/swagger/dist/interfaces/open-api-spec.interface';

/** One problem of a request: where (`['body', 'filter_expression', 'field', 'and', 0, 'prop']`), what, which kind. */
export class ValidationIssueDto {
  @ApiProperty({
    type: 'array',
    items: { oneOf: [{ type: 'string' }, { type: 'integer' }] },
    description: 'Path to the member: body|query|path|header, then member names and list indexes.',
  })
  loc!: (string | number)[];
  @ApiProperty() msg!: string;
  @ApiProperty({ description: 'missing, string_type, int_type, enum, extra_forbidden, not_supported, too_long…' }) type!: string;
}

/** The 422 body: every mistake of the request at once. */
export class ValidationErrorResponse {
  @ApiProperty({ type: [ValidationIssueDto] }) detail!: ValidationIssueDto[];
}

/** The body of every other 4xx (and of 5xx): what went wrong, in words. */
export class ErrorResponse {
  @ApiProperty({ description: 'What went wrong, for a person to read' }) detail!: string;
  @ApiProperty({ required: false, description: 'On 500 only: the id under which the service logged the error' }) error_id?: string;
}

/** What a 429 says: why, and when to try again. */
export class RateLimitDetail {
  @ApiProperty() message!: string;
  @ApiProperty({
    type: 'number',
    nullable: true,
    description: 'Unix time (seconds) from which to try again, null when unknown; the `Retry-After` header gives the seconds to wait',
  })
  try_after!: number | null;
}

/** The 429 body (the `Retry-After` header says how many seconds to wait when known). */
export class RateLimitedResponse {
  @ApiProperty({ type: RateLimitDetail }) detail!: RateLimitDetail;
}

/** The schema of a route that answers `{}` (nothing to say, but JSON). */
export const EMPTY_OBJECT_SCHEMA: SchemaObject = {
  type: 'object',
  properties: {},
  additionalProperties: false,
  description: 'An empty object',
};

/** The schema of a route that answers the JSON `null`. */
export const JSON_NULL_SCHEMA: SchemaObject = { type: 'string', nullable: true, enum: [null], description: 'JSON null' };
