import {
  DomainError,
  type ConversationFieldInputDto,
  type FileFieldInputDto,
  type FileInputDto,
  type LinkFieldInputDto,
  type PushPayloadDto,
  type ResourceWriteDto,
  type TextFieldInputDto,
  type ValidationIssue,
} from '@kb/contracts';

/** What a push writes: the resource members and fields, in the shape of a create/modify body. */
export interface PushWrite {
  body: ResourceWriteDto;
  /** Fields that will be processed (each gets a processing job and status record). */
  fieldCount: number;
}

/** The generic fields and the longest value each takes (those of the resource's title and summary). */
const GENERIC_FIELDS: Record<string, number> = { title: 2048, summary: 65536 };
/** The files a push's tokens named, already moved under the resource (see PushFilesService). */
export interface PushedFiles {
  files: Record<string, FileFieldInputDto>;
  /** By conversation field, then message index: the message's attachments in token order. */
  attachments: Record<string, Record<number, FileInputDto[]>>;
}

const NO_FILES: PushedFiles = { files: {}, attachments: {} };

const isEmpty = (o: Record<string, unknown> | undefined | null): boolean => !o || Object.keys(o).length === 0;

/**
 * Maps a "Send Data To Process" payload (NUA `PushPayload`) onto the content write path:
 * `textfield` → texts, `linkfield` → links (`link` → `uri`), `conversationfield` →
 * conversations, `genericfield.title`/`summary` → the resource's title and summary, `filefield`
 * tokens and message attachment tokens → the files `pushed` holds for them. Layout fields are
 * refused with a 422 rather than dropped. Every issue is reported at once, located in the HTTP body.
 */
export function pushWriteOf(p: PushPayloadDto, pushed: PushedFiles = NO_FILES): PushWrite {
  const issues: ValidationIssue[] = [];
  for (const [key, value] of Object.entries(p.genericfield ?? {})) {
    const max = GENERIC_FIELDS[key];
    if (max === undefined)
      issues.push({ loc: ['body', 'genericfield', key], msg: 'Generic fields are title and summary', type: 'value_error' });
    else if (value.body.length > max)
      issues.push({
        loc: ['body', 'genericfield', key, 'body'],
        msg: `body must be shorter than or equal to ${max} characters`,
        type: 'string_too_long',
      });
  }
  const files: Record<string, FileFieldInputDto> = {};
  for (const key of Object.keys(p.filefield ?? {})) {
    const file = pushed.files[key];
    if (file) files[key] = { ...file, extract_strategy: file.extract_strategy ?? p.processing_options?.extract_strategy };
    else issues.push({ loc: ['body', 'filefield', key], msg: 'Unknown upload token', type: 'value_error' });
  }
  if (!isEmpty(p.layoutfield)) issues.push({ loc: ['body', 'layoutfield'], msg: 'Layout fields are not supported', type: 'value_error' });
  for (const [id, conversation] of Object.entries(p.conversationfield ?? {})) {
    for (const [i, m] of conversation.messages.entries()) {
      const wanted = (m.content.attachments ?? []).length;
      if (wanted > 0 && (pushed.attachments[id]?.[i] ?? []).length !== wanted) {
        issues.push({
          loc: ['body', 'conversationfield', id, 'messages', i, 'content', 'attachments'],
          msg: 'Unknown upload token',
          type: 'value_error',
        });
      }
    }
  }
  const strategy = p.processing_options?.extract_strategy;
  const texts: Record<string, TextFieldInputDto> = {};
  for (const [id, t] of Object.entries(p.textfield ?? {}))
    texts[id] = { ...t, format: t.format ?? 'PLAIN', extract_strategy: t.extract_strategy ?? strategy };
  const links: Record<string, LinkFieldInputDto> = {};
  for (const [id, l] of Object.entries(p.linkfield ?? {})) {
    const { link, ...rest } = l;
    links[id] = { ...rest, uri: link, extract_strategy: l.extract_strategy ?? strategy };
  }
  const conversations: Record<string, ConversationFieldInputDto> = {};
  for (const [id, c] of Object.entries(p.conversationfield ?? {})) {
    conversations[id] = {
      messages: c.messages.map((m, i) => {
        const attachments = pushed.attachments[id]?.[i];
        return {
          ...m,
          content: { text: m.content.text ?? '', format: m.content.format ?? 'PLAIN', ...(attachments ? { attachments } : {}) },
        };
      }),
      extract_strategy: strategy,
    };
  }
  const fieldCount = Object.keys(texts).length + Object.keys(links).length + Object.keys(conversations).length + Object.keys(files).length;
  if (fieldCount === 0 && issues.length === 0) {
    issues.push({
      loc: ['body'],
      msg: 'Nothing to process: give at least one textfield, filefield, linkfield or conversationfield',
      type: 'missing',
    });
  }
  if (issues.length > 0) throw DomainError.validation(issues);

  const title = p.title ?? p.genericfield?.['title']?.body;
  const summary = p.genericfield?.['summary']?.body;
  const body: ResourceWriteDto = {
    ...(title !== undefined && title !== null ? { title } : {}),
    ...(summary !== undefined ? { summary } : {}),
    ...(Object.keys(texts).length > 0 ? { texts } : {}),
    ...(Object.keys(links).length > 0 ? { links } : {}),
    ...(Object.keys(files).length > 0 ? { files } : {}),
    ...(Object.keys(conversations).length > 0 ? { conversations } : {}),
    ...(p.processing_options?.ml_text !== undefined ? { processing_options: { ml_text: p.processing_options.ml_text } } : {}),
  };
  return { body, fieldCount };
}

/** The canonical form of a resource id (lower case, dashed), whichever form the client sent. */
export function canonicalUuid(raw: string): string {
  const hex = raw.replace(/-/g, '').toLowerCase();
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
