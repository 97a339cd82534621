import type { ClassConstructor } from 'class-transformer';
import { Check, checks } from '../../common/member-checks';
import { nestedCheck } from '../../common/validation';
import { ActorDto } from '../resource-requests.dto';

/** A search-side bus payload: the KB, the scope, the caller, and the declared request body. */
export interface SearchPayload<T> {
  kbid: string;
  body: T;
  /** Scopes the search to one resource (the resource-scoped routes). */
  rid?: string;
  slug?: string;
  /** Security groups from the credential (temporal keys with groups): they replace the body's, on /ask only. */
  forced_groups?: string[];
  method?: 'GET' | 'POST';
  /** /ask: the id the gateway already sent in the response headers (feedback refers to it). */
  learning_id?: string;
  /** /ask: `x-show-consumption: true`. */
  show_consumption?: boolean;
  actor?: ActorDto;
}

/**
 * The payload class of a search subject whose body is `cls`. Every member is a check, so the
 * subject's validation costs what the body's checks cost (no deep copy of the body), and a body
 * problem is reported at `['body', ...]` as the gateway reports it.
 */
export function searchPayloadOf<T extends object>(cls: ClassConstructor<T>, name: string): ClassConstructor<SearchPayload<T>> {
  class Payload {}
  Object.defineProperty(Payload, 'name', { value: name });
  const member = (property: string, check: Parameters<typeof Check>[0]) => Check(check)(Payload.prototype, property);
  member('kbid', checks.string({ required: true }));
  member('body', nestedCheck(cls));
  member('rid', checks.string());
  member('slug', checks.string());
  member('forced_groups', checks.stringList({ maxItems: 1_000, max: 1_000 }));
  member('method', checks.oneOf(['GET', 'POST']));
  member('learning_id', checks.string());
  member('show_consumption', checks.bool());
  member('actor', nestedCheck(ActorDto, { optional: true }));
  return Payload as ClassConstructor<SearchPayload<T>>;
}
