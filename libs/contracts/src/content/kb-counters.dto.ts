import { ApiProperty } from '@nestjs/swagger';

/** `GET /api/v1/kb/{kbid}/counters` (the reference's KnowledgeboxCounters). */
export class KbCountersDto {
  @ApiProperty({ description: 'Resources of the KB.' }) resources!: number;
  @ApiProperty({ description: 'Indexed paragraphs (a resource title counts as one).' }) paragraphs!: number;
  @ApiProperty({ description: 'Fields (text, file, link, conversation) of its resources.' }) fields!: number;
  @ApiProperty({ description: 'Indexed paragraphs that carry a vector (of any vectorset): the sentences semantic search can find.' })
  sentences!: number;
  @ApiProperty({ type: [String], nullable: true, description: 'Always null: the index of a KB is not sharded.' }) shards!: string[] | null;
  @ApiProperty({ description: "Bytes of the KB's index rows (paragraphs, postings, vectors), without PostgreSQL's own index structures." })
  index_size!: number;
}
