import { Inject, Injectable } from '@nestjs/common';
import type { ResourceDto } from '@kb/contracts';
import { entitySelect, preparedQuery, type EntitySelect } from '@kb/platform/database';
import type { DataSource } from 'typeorm';
import { In } from 'typeorm';
import { CONTENT_DATA_SOURCE } from '../content.tokens';
import { FieldEntity } from '../entities/field.entity';
import { ResourceEntity } from '../entities/resource.entity';
import type { SerializationOptions } from '../search/query/serialization';
import type { SearchResources } from '../search/search-resources.port';
import { serializeResource } from './resource-reader.service';

/** Search's read of resources (SearchResources): the hits' resources, serialized by the resources' reader. */
@Injectable()
export class SearchResourcesReader implements SearchResources {
  /** Prepared statements (every /find and /ask reads resources), rows mapped as `find` maps them. */
  private selects?: { byId: EntitySelect<ResourceEntity>; byParagraph: EntitySelect<ResourceEntity> };

  constructor(@Inject(CONTENT_DATA_SOURCE) private readonly ds: DataSource) {}

  /** One query for the rows, one for their fields when `show` needs them. */
  async resources(kbid: string, rids: string[], s: SerializationOptions): Promise<Map<string, ResourceDto>> {
    if (rids.length === 0) return new Map();
    return this.serialized(this.statements().byId, [kbid, rids], s);
  }

  async resourcesOfParagraphs(kbid: string, paragraphIds: string[], s: SerializationOptions): Promise<Map<string, ResourceDto>> {
    if (paragraphIds.length === 0) return new Map();
    return this.serialized(this.statements().byParagraph, [kbid, paragraphIds], s);
  }

  private statements(): { byId: EntitySelect<ResourceEntity>; byParagraph: EntitySelect<ResourceEntity> } {
    return (this.selects ??= {
      byId: entitySelect(this.ds, ResourceEntity, 'WHERE kbid = $1 AND id = ANY($2::uuid[])'),
      byParagraph: entitySelect(
        this.ds,
        ResourceEntity,
        'WHERE kbid = $1 AND id IN (SELECT p.rid FROM content.search_paragraphs p WHERE p.id = ANY($2::bigint[]))',
      ),
    });
  }

  private async serialized(
    select: EntitySelect<ResourceEntity>,
    values: unknown[],
    s: SerializationOptions,
  ): Promise<Map<string, ResourceDto>> {
    const rows = (await preparedQuery<Record<string, unknown>>(this.ds, select.statement, values)).map((r) => select.hydrate(r));
    const needsFields = s.show.some((x) => x === 'values' || x === 'extracted' || x === 'errors');
    const fields = needsFields && rows.length ? await this.ds.getRepository(FieldEntity).findBy({ rid: In(rows.map((r) => r.id)) }) : [];
    const out = new Map<string, ResourceDto>();
    for (const r of rows)
      out.set(
        r.id,
        serializeResource(
          r,
          fields.filter((f) => f.rid === r.id),
          s,
        ),
      );
    return out;
  }
}
