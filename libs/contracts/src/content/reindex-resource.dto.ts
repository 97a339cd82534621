import { Type } from 'class-transformer';
import { IsBoolean, IsOptional, ValidateNested } from 'class-validator';
import { ActorDto, ResourceRef } from './resource-requests.dto';

/** Rebuild a resource's index rows from its stored extracted data; with `reindex_vectors`, process every field again. */
export class ReindexResourceRequest extends ResourceRef {
  @IsOptional() @ValidateNested() @Type(() => ActorDto) actor?: ActorDto;
  @IsOptional() @IsBoolean() reindex_vectors?: boolean;
}
