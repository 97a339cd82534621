import type { ValidationIssue } from '../../common/errors';
import type { Loc } from '../../common/member-checks';
import { expressionSize, REQUEST_LIMITS } from './request-limits';

/**
 * The answer options of /ask and /find that reach a generative model: query rephrasing,
 * structured (JSON schema) answers and reasoning (API-MAP 2.1, 2.4). Both the gateway's DTOs and
 * the content service read them with these functions, so the two can never disagree.
 */
export const ASK_OPTION_LIMITS = {
  /** Characters of a rephrase prompt (`rephrase_prompt`, `prompt.rephrase`). */
  rephrasePromptChars: 10_000,
  /** Characters of `answer_json_schema` serialized as JSON. */
  answerSchemaChars: 16_384,
  /** Smallest and largest thinking budget (tokens); Anthropic refuses less than 1024. */
  minBudgetTokens: 1_024,
  maxBudgetTokens: 64_000,
} as const;

export const REASONING_EFFORTS = ['none', 'minimal', 'low', 'medium', 'high', 'xhigh'] as const;
export type ReasoningEffort = (typeof REASONING_EFFORTS)[number];

/** `answer_json_schema` made uniform: the schema the answer must follow, with the name and description providers want. */
export interface AnswerJsonSchema {
  name: string;
  description?: string;
  /** A JSON schema whose root is an object. */
  schema: Record<string, unknown>;
}

/** `reasoning` when asked for: whether the reasoning is shown, how hard the model thinks. */
export interface ReasoningOptions {
  display: boolean;
  effort?: ReasoningEffort;
  budgetTokens?: number;
}

const given = (v: unknown): boolean => v !== undefined && v !== null;
const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const NAME = /^[a-zA-Z0-9_-]{1,64}$/;

/**
 * `answer_json_schema`: either a JSON schema with an object root, or the function-style
 * `{name, description?, parameters: <schema>}` of the reference. Callers name it, so it is
 * bounded (characters, depth, values) and may only point inside itself (`$ref: "#/..."`).
 */
export function answerJsonSchemaIssues(v: unknown, loc: Loc): ValidationIssue[] {
  if (!given(v)) return [];
  if (!isObject(v)) return [{ loc, msg: 'Input should be a JSON schema object', type: 'model_type' }];
  const chars = JSON.stringify(v).length;
  if (chars > ASK_OPTION_LIMITS.answerSchemaChars)
    return [{ loc, msg: `The schema should have at most ${ASK_OPTION_LIMITS.answerSchemaChars} characters as JSON`, type: 'too_long' }];
  const size = expressionSize(v);
  if (size.depth > REQUEST_LIMITS.expressionDepth || size.nodes > REQUEST_LIMITS.expressionNodes) {
    return [
      {
        loc,
        msg: `The schema should have at most ${REQUEST_LIMITS.expressionDepth} levels and ${REQUEST_LIMITS.expressionNodes} values`,
        type: 'too_long',
      },
    ];
  }
  const issues: ValidationIssue[] = [];
  const functionStyle = given(v['parameters']);
  const schema = functionStyle ? v['parameters'] : v;
  const at = functionStyle ? [...loc, 'parameters'] : loc;
  if (functionStyle) {
    if (given(v['name']) && (typeof v['name'] !== 'string' || !NAME.test(v['name'])))
      issues.push({ loc: [...loc, 'name'], msg: 'A name is 1 to 64 letters, digits, _ or -', type: 'string_pattern_mismatch' });
    if (given(v['description']) && typeof v['description'] !== 'string')
      issues.push({ loc: [...loc, 'description'], msg: 'Input should be a valid string', type: 'string_type' });
  }
  if (!isObject(schema) || schema['type'] !== 'object')
    issues.push({ loc: at, msg: 'The schema\'s root should be {"type": "object", ...}', type: 'value_error' });
  for (const ref of refs(schema)) {
    if (!ref.startsWith('#'))
      issues.push({ loc: at, msg: `Only references inside the schema (#/...) are allowed: ${ref.slice(0, 100)}`, type: 'value_error' });
  }
  return issues;
}

/** The uniform form of a valid `answer_json_schema` (undefined when absent). */
export function readAnswerJsonSchema(v: unknown): AnswerJsonSchema | undefined {
  if (!isObject(v)) return undefined;
  if (given(v['parameters'])) {
    return {
      name: typeof v['name'] === 'string' ? v['name'] : 'answer',
      ...(typeof v['description'] === 'string' ? { description: v['description'] } : {}),
      schema: v['parameters'] as Record<string, unknown>,
    };
  }
  const title = typeof v['title'] === 'string' && NAME.test(v['title']) ? v['title'] : 'answer';
  return { name: title, ...(typeof v['description'] === 'string' ? { description: v['description'] } : {}), schema: v };
}

/** Every `$ref` string in a (bounded) JSON value. */
function refs(value: unknown): string[] {
  const out: string[] = [];
  const stack: unknown[] = [value];
  for (let v = stack.pop(); v !== undefined; v = stack.pop()) {
    if (Array.isArray(v)) stack.push(...v);
    else if (isObject(v)) {
      for (const [k, x] of Object.entries(v)) {
        if (k === '$ref' && typeof x === 'string') out.push(x);
        else stack.push(x);
      }
    }
  }
  return out;
}

/** `reasoning`: a boolean, or `{display?, effort?, budget_tokens?}`. */
export function reasoningIssues(v: unknown, loc: Loc): ValidationIssue[] {
  if (!given(v) || typeof v === 'boolean') return [];
  if (!isObject(v)) return [{ loc, msg: 'Input should be a boolean or {display, effort, budget_tokens}', type: 'model_type' }];
  const issues: ValidationIssue[] = [];
  for (const k of Object.keys(v))
    if (k !== 'display' && k !== 'effort' && k !== 'budget_tokens')
      issues.push({ loc: [...loc, k], msg: 'Extra inputs are not permitted', type: 'extra_forbidden' });
  if (given(v['display']) && typeof v['display'] !== 'boolean')
    issues.push({ loc: [...loc, 'display'], msg: 'Input should be a valid boolean', type: 'bool_type' });
  if (given(v['effort']) && !(REASONING_EFFORTS as readonly unknown[]).includes(v['effort'])) {
    issues.push({ loc: [...loc, 'effort'], msg: `Input should be ${REASONING_EFFORTS.map((e) => `'${e}'`).join(', ')}`, type: 'enum' });
  }
  const b = v['budget_tokens'];
  if (
    given(b) &&
    (!Number.isInteger(b) || (b as number) < ASK_OPTION_LIMITS.minBudgetTokens || (b as number) > ASK_OPTION_LIMITS.maxBudgetTokens)
  ) {
    issues.push({
      loc: [...loc, 'budget_tokens'],
      msg: `Input should be an integer between ${ASK_OPTION_LIMITS.minBudgetTokens} and ${ASK_OPTION_LIMITS.maxBudgetTokens}`,
      type: 'int_type',
    });
  }
  return issues;
}

/** The reasoning a valid `reasoning` asks for (undefined: none). */
export function readReasoning(v: unknown): ReasoningOptions | undefined {
  if (v === true) return { display: true };
  if (!isObject(v)) return undefined;
  return {
    display: v['display'] !== false,
    ...(typeof v['effort'] === 'string' ? { effort: v['effort'] as ReasoningEffort } : {}),
    ...(typeof v['budget_tokens'] === 'number' ? { budgetTokens: v['budget_tokens'] } : {}),
  };
}

/** A rephrase prompt: a string that places the question (`{question}`). */
export function rephrasePromptIssues(v: unknown, loc: Loc): ValidationIssue[] {
  if (!given(v)) return [];
  if (typeof v !== 'string') return [{ loc, msg: 'Input should be a valid string', type: 'string_type' }];
  if (v.length > ASK_OPTION_LIMITS.rephrasePromptChars)
    return [{ loc, msg: `String should have at most ${ASK_OPTION_LIMITS.rephrasePromptChars} characters`, type: 'string_too_long' }];
  if (!v.includes('{question}')) return [{ loc, msg: 'The rephrase prompt must contain the {question} placeholder', type: 'value_error' }];
  return [];
}
