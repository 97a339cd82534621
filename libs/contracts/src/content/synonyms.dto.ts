import { ApiProperty } from '@nestjs/swagger';
import { IsDefined, IsObject, IsString } from 'class-validator';

/** A KB's custom synonyms (API-MAP "Synonyms"): a term → its synonyms, used by `with_synonyms`. */
export class KbSynonymsDto {
  @ApiProperty({
    type: 'object',
    additionalProperties: { type: 'array', items: { type: 'string' } },
    example: { car: ['automobile', 'vehicle'] },
  })
  @IsDefined()
  @IsObject()
  synonyms!: Record<string, string[]>;
}

export class KbSynonymsRef {
  @IsDefined() @IsString() kbid!: string;
}

export class SetKbSynonymsRequest extends KbSynonymsRef {
  /** Checked by content (shape and limits), every problem reported at once. */
  @IsDefined() body!: unknown;
}
