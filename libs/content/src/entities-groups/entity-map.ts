import { ENTITIES_LIMITS, type EntityDto, type ValidationIssue } from '@kb/contracts';

const isObject = (v: unknown): v is Record<string, unknown> => !!v && typeof v === 'object' && !Array.isArray(v);

/**
 * A map of entities as a request gives it (`{key: {value, merged?, represents?}}`), checked member by
 * member: keys and values are non-empty strings of at most 250 characters without NUL, `represents`
 * at most 50 such strings. Problems go to `issues` with their location; the valid entries are kept.
 */
export function checkEntityMap(input: unknown, loc: (string | number)[], issues: ValidationIssue[]): Record<string, EntityDto> {
  if (input === undefined || input === null) return {};
  if (!isObject(input)) {
    issues.push({ loc, msg: 'Must be an object of entities', type: 'dict_type' });
    return {};
  }
  const entries = Object.entries(input);
  if (entries.length > ENTITIES_LIMITS.entitiesPerGroup) {
    issues.push({ loc, msg: `At most ${ENTITIES_LIMITS.entitiesPerGroup} entities per request`, type: 'too_long' });
    return {};
  }
  const text = (v: unknown) => typeof v === 'string' && v.length > 0 && v.length <= ENTITIES_LIMITS.valueChars && !v.includes('\0');
  const out: Record<string, EntityDto> = {};
  for (const [key, raw] of entries) {
    const at = [...loc, key];
    if (!text(key)) {
      issues.push({ loc: at, msg: `An entity key is 1 to ${ENTITIES_LIMITS.valueChars} characters`, type: 'string_too_long' });
      continue;
    }
    if (!isObject(raw)) {
      issues.push({ loc: at, msg: 'An entity is an object {value, merged?, represents?}', type: 'dict_type' });
      continue;
    }
    let ok = true;
    if (!text(raw['value'])) {
      issues.push({
        loc: [...at, 'value'],
        msg: `value is a string of 1 to ${ENTITIES_LIMITS.valueChars} characters`,
        type: 'string_type',
      });
      ok = false;
    }
    if (raw['merged'] !== undefined && typeof raw['merged'] !== 'boolean') {
      issues.push({ loc: [...at, 'merged'], msg: 'merged is a boolean', type: 'bool_type' });
      ok = false;
    }
    const represents = raw['represents'] ?? [];
    if (!Array.isArray(represents) || represents.length > ENTITIES_LIMITS.representsPerEntity || !represents.every(text)) {
      issues.push({
        loc: [...at, 'represents'],
        msg: `represents is a list of at most ${ENTITIES_LIMITS.representsPerEntity} strings of 1 to ${ENTITIES_LIMITS.valueChars} characters`,
        type: 'list_type',
      });
      ok = false;
    }
    const extra = Object.keys(raw).filter((k) => !['value', 'merged', 'represents'].includes(k));
    if (extra.length) {
      issues.push({ loc: [...at, extra[0] as string], msg: 'Extra inputs are not permitted', type: 'extra_forbidden' });
      ok = false;
    }
    if (ok)
      out[key] = {
        value: raw['value'] as string,
        merged: (raw['merged'] as boolean | undefined) ?? false,
        represents: represents as string[],
      };
  }
  return out;
}
