import { Inject, Injectable } from '@nestjs/common';
import type { ResourceDto } from '@kb/contracts';
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
  constructor(@Inject(CONTENT_DATA_SOURCE) private readonly ds: DataSource) {}

  /** One query for the rows, one for their fields when `show` needs them. */
  async resources(kbid: string, rids: string[], s: SerializationOptions): Promise<Map<string, ResourceDto>> {
    if (rids.length === 0) return new Map();
    const rows = await this.ds.getRepository(ResourceEntity).findBy({ kbid, id: In(rids) });
    const needsFields = s.show.some((x) => x === 'values' || x === 'extracted' || x === 'errors');
    const fields = needsFields ? await this.ds.getRepository(FieldEntity).findBy({ rid: In(rids) }) : [];
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
