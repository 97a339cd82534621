import { FieldEntity } from './field.entity';
import { OutboxEntity } from './outbox.entity';
import { ResourceEntity } from './resource.entity';

export { FieldEntity, OutboxEntity, ResourceEntity };
export const CONTENT_ENTITIES = [ResourceEntity, FieldEntity, OutboxEntity];
