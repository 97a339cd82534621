import { ApiProperty } from '@nestjs/swagger';

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
