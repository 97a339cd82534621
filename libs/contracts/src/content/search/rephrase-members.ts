import { ApiPropertyOptional } from '@nestjs/swagger';
import { Check, checks } from '../../common/member-checks';
import { ASK_OPTION_LIMITS, rephrasePromptIssues } from './ask-options';

/**
 * The members that ask a generative model to rewrite a query (`rephrase`, `rephrase_prompt`,
 * `generative_model`), declared once for /find, /search, /ask and the prequeries of /ask: each
 * request names them with its own description, checked and documented the same way everywhere.
 */
const both =
  (doc: PropertyDecorator, check: PropertyDecorator): PropertyDecorator =>
  (target, key) => {
    check(target, key);
    doc(target, key);
  };

/** `rephrase`: a boolean, off by default. */
export const RephraseMember = (description: string): PropertyDecorator =>
  both(ApiPropertyOptional({ default: false, description }), Check(checks.bool()));

/** `rephrase_prompt` (or another name of it): the instructions, which must place `{question}`. */
export const RephrasePromptMember = (
  description = 'The rephrasing instructions for the model; must contain {question}.',
): PropertyDecorator =>
  both(
    ApiPropertyOptional({ type: 'string', maxLength: ASK_OPTION_LIMITS.rephrasePromptChars, description }),
    Check((v, loc, issues) => void issues.push(...rephrasePromptIssues(v, loc))),
  );

/** `generative_model`: the model that rephrases. */
export const RephraseModelMember = (description: string): PropertyDecorator =>
  both(ApiPropertyOptional({ type: 'string', description }), Check(checks.string()));
