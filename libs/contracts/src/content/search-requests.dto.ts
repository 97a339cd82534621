import { Type } from 'class-transformer';
import { IsArray, IsBoolean, IsIn, IsObject, IsOptional, IsString, ValidateNested } from 'class-validator';
import { ActorDto } from './resource-requests.dto';

/**
 * What every search-side bus payload (find, search, suggest, catalog, graph, ask) carries besides
 * its body: the KB, the scope, the caller.
 */
export class SearchCallContext {
  @IsString() kbid!: string;
  /** Scopes the search to one resource (the resource-scoped routes). */
  @IsOptional() @IsString() rid?: string;
  @IsOptional() @IsString() slug?: string;
  /** Security groups from the credential (temporal keys with groups): they replace the body's, on /ask only. */
  @IsOptional() @IsArray() @IsString({ each: true }) forced_groups?: string[];
  @IsOptional() @IsIn(['GET', 'POST']) method?: 'GET' | 'POST';
  /** /ask: the id the gateway already sent in the response headers (feedback refers to it). */
  @IsOptional() @IsString() learning_id?: string;
  /** /ask: `x-show-consumption: true`. */
  @IsOptional() @IsBoolean() show_consumption?: boolean;
  @IsOptional() @ValidateNested() @Type(() => ActorDto) actor?: ActorDto;
}

/**
 * A search-side request whose body is not declared yet (graph):
 * the client's body (or its GET query turned into the body's shape) travels as-is and the content
 * service reads it member by member, so every mistake comes back as one 422 with its location.
 * The others are declared in search/ (FindEnvelope, SearchRequestEnvelope, SuggestEnvelope,
 * CatalogEnvelope, CatalogFacetsEnvelope, AskEnvelope).
 */
export class SearchEnvelope extends SearchCallContext {
  @IsObject() body!: Record<string, unknown>;
}

/** /feedback body (API-MAP 2.4) with the KB it is about. */
export class FeedbackRequest {
  @IsString() kbid!: string;
  @IsObject() body!: Record<string, unknown>;
  @IsOptional() @ValidateNested() @Type(() => ActorDto) actor?: ActorDto;
}
