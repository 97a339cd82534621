import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The words of the graph's node names, indexed (GIN over the lower-cased name split at spaces and
 * punctuation), for graph_beta's `suggest` entity detection: a node one of whose words is a word of
 * the question is found through the index instead of a LIKE scan of the KB's relations. The split
 * expression must stay the one `RELATION_NAME_WORDS` in graph-explore.ts writes, or the planner
 * cannot use these indexes.
 */
export class RelationNameWords1765262100000 implements MigrationInterface {
  name = 'RelationNameWords1765262100000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(
      `CREATE INDEX search_relations_source_words_idx ON content.search_relations USING gin ((regexp_split_to_array(lower(source_value), '[[:space:][:punct:]]+')))`,
    );
    await q.query(
      `CREATE INDEX search_relations_dest_words_idx ON content.search_relations USING gin ((regexp_split_to_array(lower(dest_value), '[[:space:][:punct:]]+')))`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX content.search_relations_dest_words_idx`);
    await q.query(`DROP INDEX content.search_relations_source_words_idx`);
  }
}
