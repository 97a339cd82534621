import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Check, checks, Closed, whenAbsent } from '../../common/member-checks';
import { searchPayloadOf, type SearchPayload } from './search-payload';

export const FEEDBACK_TASKS = ['CHAT', 'SEARCH', 'INTENT'] as const;
export type FeedbackTask = (typeof FEEDBACK_TASKS)[number];

/** Bounds of a feedback's free text (it is stored in the KB's activity log). */
export const FEEDBACK_LIMITS = { identChars: 200, feedbackChars: 10_000, textBlockIdChars: 1_000 } as const;

/** POST /feedback (API-MAP 2.4): good or bad, with an optional comment, on an answer by its learning id. */
@Closed()
export class FeedbackRequest {
  @ApiProperty({
    maxLength: FEEDBACK_LIMITS.identChars,
    description: 'The learning id of the answer (the `nuclia-learning-id` header of /ask).',
  })
  @Check(checks.string({ required: true, max: FEEDBACK_LIMITS.identChars }))
  ident!: string;

  @ApiProperty()
  @Check(
    whenAbsent(
      (v, loc, issues) => void (typeof v !== 'boolean' && issues.push({ loc, msg: 'Input should be a valid boolean', type: 'bool_type' })),
    ),
  )
  good!: boolean;
  @ApiPropertyOptional({ enum: FEEDBACK_TASKS, default: 'CHAT' }) @Check(checks.oneOf(FEEDBACK_TASKS)) task?: FeedbackTask;
  @ApiPropertyOptional({ maxLength: FEEDBACK_LIMITS.feedbackChars, description: 'A comment.' })
  @Check(checks.string({ max: FEEDBACK_LIMITS.feedbackChars }))
  feedback?: string;
  @ApiPropertyOptional({ maxLength: FEEDBACK_LIMITS.textBlockIdChars, description: 'The paragraph of the answer the feedback is about.' })
  @Check(checks.string({ max: FEEDBACK_LIMITS.textBlockIdChars }))
  text_block_id?: string;
}

/** The /feedback bus payload. */
export const FeedbackEnvelope = searchPayloadOf(FeedbackRequest, 'FeedbackEnvelope');
export type FeedbackEnvelope = SearchPayload<FeedbackRequest>;
