import { FieldTypes, type ExtractedOption, type FieldType, type ShowOption } from '@kb/contracts';

/** How the resources of a search result are serialized. */
export interface SerializationOptions {
  show: ShowOption[];
  fieldTypes: FieldType[];
  extracted: ExtractedOption[];
}

/** The serialization members of every search request (an empty list means the default). */
export interface SerializationMembers {
  show?: ShowOption[];
  field_type_filter?: FieldType[];
  extracted?: ExtractedOption[];
}

/** The distinct items of an enumeration list; an empty or absent list means the defaults (clients send `[]` for "none chosen"). */
export const distinctOr = <T extends string>(list: readonly T[] | undefined | null, dflt: readonly T[]): T[] =>
  list && list.length ? [...new Set(list)] : [...dflt];

/** `show`, `field_type_filter` and `extracted`, as every search endpoint reads them. */
export function serializationOf(body: SerializationMembers): SerializationOptions {
  return {
    show: distinctOr(body.show, ['basic']),
    fieldTypes: distinctOr(body.field_type_filter, FieldTypes),
    extracted: distinctOr(body.extracted, ['text', 'metadata', 'link', 'file']),
  };
}
