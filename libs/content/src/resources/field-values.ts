import { createHash } from 'node:crypto';
import {
  DomainError,
  containsSecretMask,
  keepMaskedSecrets,
  maskSecrets,
  type ContentFieldType,
  type ConversationFieldInputDto,
  type FileFieldInputDto,
  datetimeValue,
  type KeyValueFieldInputDto,
  keywordsetValue,
  normaliseKvValues,
  type LinkFieldInputDto,
  type ResourceWriteDto,
  type TextFieldInputDto,
} from '@kb/contracts';

export interface FieldWrite {
  fieldType: ContentFieldType;
  fieldId: string;
  value: Record<string, unknown>;
}

/** The member of a resource body (and of a serialised resource's `data`) that holds fields of each type (`texts`, `links`, …). */
export const BODY_MEMBER_OF = {
  text: 'texts',
  link: 'links',
  file: 'files',
  conversation: 'conversations',
  key_value: 'key_values',
  keywordset: 'keywordsets',
  datetime: 'datetimes',
} as const satisfies Record<ContentFieldType, string>;

/** Where a field of a resource body was sent, for error locations: `['body', 'texts', <id>]`. */
export const bodyFieldLoc = (w: { fieldType: ContentFieldType; fieldId: string }): string[] => [
  'body',
  BODY_MEMBER_OF[w.fieldType],
  w.fieldId,
];

const drop = <T extends Record<string, unknown>>(o: T): T => Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as T;

function textValue(input: TextFieldInputDto): Record<string, unknown> {
  return drop({
    body: input.body,
    format: input.format ?? 'PLAIN',
    md5: createHash('md5').update(input.body).digest('hex'),
    extract_strategy: input.extract_strategy,
    split_strategy: input.split_strategy,
  });
}

function linkValue(input: LinkFieldInputDto, now: string): Record<string, unknown> {
  return drop({
    added: now,
    uri: input.uri,
    headers: input.headers ?? {},
    cookies: input.cookies ?? {},
    localstorage: input.localstorage ?? {},
    css_selector: input.css_selector,
    xpath: input.xpath,
    language: input.language,
    extract_strategy: input.extract_strategy,
    split_strategy: input.split_strategy,
  });
}

function fileValue(input: FileFieldInputDto, now: string, loc: (string | number)[]): Record<string, unknown> {
  const f = input.file;
  if (f.payload !== undefined) {
    // Inline bytes are turned into a blob by the HTTP edge before they reach this service.
    throw DomainError.validation([
      { loc: [...loc, 'file', 'payload'], msg: 'Inline file payloads must be stored by the gateway first', type: 'value_error' },
    ]);
  }
  if (!f.uri) throw DomainError.validation([{ loc: [...loc, 'file', 'uri'], msg: 'A file needs a uri or a payload', type: 'missing' }]);
  return drop({
    added: now,
    file: drop({ uri: f.uri, filename: f.filename, content_type: f.content_type, md5: f.md5, extra_headers: f.extra_headers }),
    language: input.language,
    password: input.password,
    external: !f.uri.startsWith('blob:'),
    extract_strategy: input.extract_strategy,
    split_strategy: input.split_strategy,
  });
}

function conversationValue(input: ConversationFieldInputDto, loc: (string | number)[]): Record<string, unknown> {
  const seen = new Set<string>();
  for (const [i, m] of input.messages.entries()) {
    if (seen.has(m.ident))
      throw DomainError.validation([
        { loc: [...loc, 'messages', i, 'ident'], msg: `Duplicate message ident "${m.ident}"`, type: 'value_error' },
      ]);
    seen.add(m.ident);
  }
  return drop({
    messages: JSON.parse(JSON.stringify(input.messages)),
    extract_strategy: input.extract_strategy,
    split_strategy: input.split_strategy,
  });
}

/** The values as sent (checked against the KB's schema, if any, by KbConfigsService.checkKeyValues). */
function keyValueValue(input: KeyValueFieldInputDto): Record<string, unknown> {
  return { values: normaliseKvValues(input.values) };
}

/** Turns the field maps of a create/modify body into stored field values. */
export function fieldWritesOf(body: ResourceWriteDto, now: string): FieldWrite[] {
  const out: FieldWrite[] = [];
  for (const [id, input] of Object.entries(body.texts ?? {})) out.push({ fieldType: 'text', fieldId: id, value: textValue(input) });
  for (const [id, input] of Object.entries(body.links ?? {})) out.push({ fieldType: 'link', fieldId: id, value: linkValue(input, now) });
  for (const [id, input] of Object.entries(body.files ?? {}))
    out.push({ fieldType: 'file', fieldId: id, value: fileValue(input, now, ['body', 'files', id]) });
  for (const [id, input] of Object.entries(body.conversations ?? {}))
    out.push({ fieldType: 'conversation', fieldId: id, value: conversationValue(input, ['body', 'conversations', id]) });
  for (const [id, input] of Object.entries(body.key_values ?? {}))
    out.push({ fieldType: 'key_value', fieldId: id, value: keyValueValue(input) });
  for (const [id, input] of Object.entries(body.keywordsets ?? {}))
    out.push({ fieldType: 'keywordset', fieldId: id, value: keywordsetValue(input) });
  for (const [id, input] of Object.entries(body.datetimes ?? {}))
    out.push({ fieldType: 'datetime', fieldId: id, value: datetimeValue(input) });
  return out;
}

/**
 * What a client reads back as a field's `value`: link headers, cookies and local storage, the file
 * password and the headers a file is fetched with stay stored (processing needs them) but are
 * masked (`maskSecrets`), as every stored secret is.
 */
export function publicFieldValue(fieldType: ContentFieldType, value: Record<string, unknown>): Record<string, unknown> {
  if (fieldType === 'conversation') {
    const messages = (value['messages'] as unknown[] | undefined) ?? [];
    return drop({
      pages: messages.length > 0 ? 1 : 0,
      size: messages.length,
      total: messages.length,
      extract_strategy: value['extract_strategy'] as string | undefined,
    });
  }
  if (fieldType === 'file') {
    // `skip_store` marks a file that is deleted once processed (internal bookkeeping).
    const { skip_store: _skipStore, ...rest } = value;
    return maskSecrets({ ...rest, file: (rest['file'] as Record<string, unknown>) ?? {}, external: rest['external'] ?? false });
  }
  if (fieldType === 'link') return maskSecrets(value);
  return value;
}

/**
 * The writes with every masked secret a client sent back (a value it read, then sent again)
 * replaced by the one stored for that field, so the mask is never stored over the secret.
 */
export function keepStoredSecrets(
  writes: FieldWrite[],
  stored: { fieldType: string; fieldId: string; value: Record<string, unknown> }[],
): FieldWrite[] {
  return writes.map((w) => {
    const current = stored.find((f) => f.fieldType === w.fieldType && f.fieldId === w.fieldId);
    return current ? { ...w, value: keepMaskedSecrets(w.value, current.value) } : w;
  });
}

/** Whether any write carries a mask (only then is the stored value worth reading first). */
export const writesCarryMask = (writes: FieldWrite[]): boolean => writes.some((w) => containsSecretMask(w.value));
