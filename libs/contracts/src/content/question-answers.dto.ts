import { IsIn, IsInt, IsString, Min } from 'class-validator';
import { ContentFieldTypes, type ContentFieldType } from './resource.dto';

/** Generate question/answer pairs for one processed field (`content.field.question-answers`). */
export class QuestionAnswersJob {
  @IsString() kbid!: string;
  @IsString() rid!: string;
  @IsIn(ContentFieldTypes) field_type!: ContentFieldType;
  @IsString() field_id!: string;
  /** The processed write: a newer one makes the job moot. */
  @IsInt() @Min(0) seqid!: number;
}

/** `extracted.question_answers` of a field (spec 2.3). */
export interface FieldQuestionAnswers {
  question_answers: {
    question_answer: {
      question: { text: string; language: string; ids_paragraphs: string[] };
      answers: { text: string; language: string; ids_paragraphs: string[] }[];
    }[];
  };
  split_question_answers: Record<string, unknown>;
  deleted_splits: string[];
}
