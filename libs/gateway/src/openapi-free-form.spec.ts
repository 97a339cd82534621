import { readFileSync } from 'node:fs';
import { join } from 'node:path';

type Schema = {
  properties?: Record<string, Schema>;
  items?: Schema;
  additionalProperties?: boolean | Schema;
  allOf?: Schema[];
  oneOf?: Schema[];
  anyOf?: Schema[];
};
type Doc = { components: { schemas: Record<string, Schema> } };
const committed = (): Doc => JSON.parse(readFileSync(join(__dirname, '..', '..', '..', 'openapi.json'), 'utf8')) as Doc;

/**
 * Every member of the document's schemas declared free-form (`additionalProperties: true`), as
 * `Schema.member` (`[]` an array's items, `{}` a map's values, `|n` a union's nth schema).
 */
function freeFormMembers(doc: Doc): string[] {
  const found: string[] = [];
  const walk = (schema: Schema | undefined, at: string): void => {
    if (!schema || typeof schema !== 'object') return;
    if (schema.additionalProperties === true) found.push(at);
    for (const [name, member] of Object.entries(schema.properties ?? {})) walk(member, `${at}.${name}`);
    walk(schema.items, `${at}[]`);
    if (typeof schema.additionalProperties === 'object') walk(schema.additionalProperties, `${at}{}`);
    for (const union of [schema.allOf, schema.oneOf, schema.anyOf]) (union ?? []).forEach((s, i) => walk(s, `${at}|${i}`));
  };
  for (const [name, schema] of Object.entries(doc.components.schemas)) walk(schema, name);
  return found.sort();
}

const USER_MAP = "a map of the caller's own keys and values, stored and returned as given";
const OPAQUE = 'stored as given and not read by the service (its shape is not checked)';
const MODEL_KEYS = "by provider, the provider's own settings (checked by learningConfigurationIssues)";
const REFUSED = 'refused by this route (only its absence or emptiness is accepted)';
const SAVED = 'a saved search configuration: the members of the request it names (checked when used)';
const SHAPED_BY_REQUEST = 'shaped by what the request asks for (`show`, `extracted`, the answer_json_schema, debug)';

/**
 * The free-form members the document may have, each for a reason: a member whose shape the code
 * knows is declared, not left here. This list only shrinks.
 */
const FREE_FORM: Record<string, string> = {
  'AskAnswerJsonItem.object': SHAPED_BY_REQUEST,
  'AskPrequeryRequest.audit_metadata': USER_MAP,
  'AskPrequeryRequest.graph_query': REFUSED,
  'AskPrequeryRequest.search_configuration': SAVED,
  'AskDebugItem.metadata.predict_request': 'the request sent to the generative model, by model provider',
  'SyncAskResponse.debug.metadata.predict_request': 'the request sent to the generative model, by model provider',
  'AskRequest.answer_json_schema': 'a JSON schema of the caller',
  'AskRequest.audit_metadata': USER_MAP,
  'AskRequest.context[]': 'the old name of chat_history, read as it',
  'AskRequest.graph_query': REFUSED,
  'AskRequest.search_configuration': SAVED,
  'CreateKnowledgeBoxDto.external_index_provider': OPAQUE,
  'CreateKnowledgeBoxDto.learning_configuration': 'the learning configuration (LearningConfigurationSchemaDto lists its members)',
  'CreateKnowledgeBoxDto.search_configs': OPAQUE,
  'CreateStandaloneKnowledgeBoxDto.external_index_provider': OPAQUE,
  'CreateStandaloneKnowledgeBoxDto.learning_configuration': 'the learning configuration (LearningConfigurationSchemaDto lists its members)',
  'CreateStandaloneKnowledgeBoxDto.search_configs': OPAQUE,
  'FieldRecord.extracted': SHAPED_BY_REQUEST,
  'FindRequest.audit_metadata': USER_MAP,
  'FindRequest.search_configuration': SAVED,
  'FindResource.computedmetadata': 'computed by processing, by kind',
  'FindResource.extra': USER_MAP,
  'FindResource.metadata': USER_MAP,
  'FindResource.origin': 'the origin members as written',
  'FindResource.usermetadata': USER_MAP,
  'KnowledgeBoxDto.search_configs': OPAQUE,
  'KnowledgeBoxSummaryDto.search_configs': OPAQUE,
  'LearningSchemaFreeDto.schemas': 'a JSON schema of the member',
  'ModelConfigurationDto.summary_prompt': MODEL_KEYS,
  'ModelConfigurationDto.user_keys': MODEL_KEYS,
  'ModelConfigurationDto.user_prompts': MODEL_KEYS,
  'ModelConfigurationInputDto.summary_prompt': MODEL_KEYS,
  'ModelConfigurationInputDto.user_keys': MODEL_KEYS,
  'ModelConfigurationInputDto.user_prompts': MODEL_KEYS,
  'ModifyKnowledgeBoxDto.search_configs': OPAQUE,
  'PushPayloadDto.layoutfield': OPAQUE,
  'RelatedTo.metadata': 'the relation metadata processing found',
  'ResourceDto.computedmetadata': 'computed by processing, by kind',
  'ResourceDto.extra': USER_MAP,
  'ResourceDto.metadata': USER_MAP,
  'ResourceDto.origin': 'the origin members as written',
  'ResourceDto.usermetadata': USER_MAP,
  'SearchConfigurationDto.config': SAVED,
  'SearchRequest.audit_metadata': USER_MAP,
  'SearchRequest.graph_query': REFUSED,
  'SearchRequest.search_configuration': SAVED,
  'StandaloneKbSummaryDto.search_configs': OPAQUE,
  'StandaloneKnowledgeBoxDto.search_configs': OPAQUE,
  'SuggestRequest.audit_metadata': USER_MAP,
  'SuggestRequest.graph_query': REFUSED,
  'SuggestRequest.search_configuration': SAVED,
  'SyncAskResponse.answer_json': SHAPED_BY_REQUEST,
};

describe('openapi.json, free-form members', () => {
  it('has only the free-form members listed, each with its reason', () => {
    expect(freeFormMembers(committed())).toEqual(Object.keys(FREE_FORM).sort());
  });

  it('notices a new free-form member (the check can fail)', () => {
    const doc = committed();
    const find = doc.components.schemas['FindResponse'] as Schema;
    (find.properties as Record<string, Schema>)['relations'] = { additionalProperties: true };
    expect(freeFormMembers(doc)).toEqual([...Object.keys(FREE_FORM), 'FindResponse.relations'].sort());
  });
});
