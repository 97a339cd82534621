import type { MemberCheck } from '../../common/member-checks';

/** Names of search configurations (the reference's field-id pattern, 1–64 characters). */
export const CONFIG_NAME_PATTERN = /^[a-zA-Z0-9:_-]{1,64}$/;

/** A string matching `pattern` (absent is fine: required members say so separately). */
export const patternCheck =
  (pattern: RegExp): MemberCheck =>
  (v, loc, issues) => {
    if (v === undefined || v === null) return;
    if (typeof v !== 'string') issues.push({ loc, msg: 'Input should be a valid string', type: 'string_type' });
    else if (!pattern.test(v))
      issues.push({ loc, msg: `String should match pattern '${pattern.source}'`, type: 'string_pattern_mismatch' });
  };

/** `search_configuration` of /find and /ask: the name of a saved configuration. */
export const configNameCheck: MemberCheck = patternCheck(CONFIG_NAME_PATTERN);
