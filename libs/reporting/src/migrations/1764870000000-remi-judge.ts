import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Why an answer of a KB with a generative provider was scored offline (the LLM judge's failure:
 * `timeout`, `malformed`…; docs/remi.md); null when the judge scored it or was not asked.
 */
export class RemiJudge1764870000000 implements MigrationInterface {
  name = 'RemiJudge1764870000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE reporting.remi_scores ADD COLUMN judge_error text`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE reporting.remi_scores DROP COLUMN judge_error`);
  }
}
