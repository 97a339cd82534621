import { FieldEntity } from './field.entity';
import { OutboxEntity } from './outbox.entity';
import { ProcessingRequestEntity } from './processing-request.entity';
import { ResourceEntity } from './resource.entity';

export { FieldEntity, OutboxEntity, ProcessingRequestEntity, ResourceEntity };
export const CONTENT_ENTITIES = [ResourceEntity, FieldEntity, OutboxEntity, ProcessingRequestEntity];
