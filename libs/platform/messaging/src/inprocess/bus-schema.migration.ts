import type { MigrationInterface, QueryRunner } from 'typeorm';
import { busSchemaDropStatements, busSchemaStatements } from './bus-schema';

/**
 * Creates the `bus` schema of the in-process transport. Services that run the in-process bus add
 * it to their DataSource's migrations; it matches SqlQueueStore.ensureSchema() exactly.
 */
export class CreateBusSchema1760000000000 implements MigrationInterface {
  name = 'CreateBusSchema1760000000000';

  /** TypeORM constructs migrations without arguments, so production always gets `bus`. */
  constructor(private readonly schema = 'bus') {}

  async up(queryRunner: QueryRunner): Promise<void> {
    for (const sql of busSchemaStatements(this.schema)) await queryRunner.query(sql);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    for (const sql of busSchemaDropStatements(this.schema)) await queryRunner.query(sql);
  }
}
