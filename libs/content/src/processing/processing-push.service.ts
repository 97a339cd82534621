import { Injectable } from '@nestjs/common';
import { DomainError, ErrorCodes, PushPayloadDto, validatePayload, type ProcessingPushRequest, type ProcessingPushResponseDto } from '@kb/contracts';
import { ResourceReaderService } from '../resources/resource-reader.service';
import { ResourcesService } from '../resources/resources.service';
import { ProcessingStatusService } from './processing-requests';
import { canonicalUuid, pushWriteOf } from './push-payload';

/** All pushes share the one processing queue (spec 4.5's sample `queue` value). */
const QUEUE = 'shared';

/**
 * "Send Data To Process" (spec 4.5): the pushed fields are written to a resource of the KB through
 * the ordinary write path, so each gets its processing job and status record in the same
 * statement or transaction as the write (nothing lost, nothing recorded for a rolled-back write).
 * The resource is the one named by `uuid` (else by `slug`) when it exists, a new one otherwise.
 */
@Injectable()
export class ProcessingPushService {
  constructor(
    private readonly writer: ResourcesService,
    private readonly reader: ResourceReaderService,
    private readonly status: ProcessingStatusService,
  ) {}

  async push(req: ProcessingPushRequest): Promise<ProcessingPushResponseDto> {
    // The bus validates only the payload's top level; its field maps are checked here (as the gateway did).
    const p = validatePayload(PushPayloadDto, req.body, { loc: ['body'] });
    const { body } = pushWriteOf(p);
    const kbid = p.kbid;
    const rid = p.uuid ? canonicalUuid(p.uuid) : undefined;
    const common = { kbid, ...(req.actor ? { actor: req.actor } : {}), ...(p.labels && p.labels.length > 0 ? { processing_labels: p.labels } : {}) };

    const modify = async (id: string) => (await this.writer.modify({ ...common, rid: id, body })).seqid;
    const ref = rid ? { kbid, rid } : p.slug ? { kbid, slug: p.slug } : undefined;
    const existing = ref ? await this.reader.exists(ref) : { exists: false };
    let written: { rid: string; seqid: number };
    if (existing.exists && existing.rid) {
      written = { rid: existing.rid, seqid: await modify(existing.rid) };
    } else {
      try {
        const created = await this.writer.create({ ...common, ...(rid ? { rid } : {}), body: { ...body, ...(p.slug ? { slug: p.slug } : {}) } });
        written = { rid: created.uuid, seqid: created.seqid };
      } catch (err) {
        if (!rid || !isIdConflict(err)) throw err;
        // A concurrent push created the resource first: write into it. In another KB the id is taken.
        const now = await this.reader.exists({ kbid, rid });
        if (!now.exists) throw new DomainError(ErrorCodes.CONFLICT, 'The resource id is already in use');
        written = { rid, seqid: await modify(rid) };
      }
    }

    const [processingId] = await this.status.jobsOfWrite(written.rid, written.seqid);
    // pushWriteOf refuses a payload without fields, so the write scheduled at least one job.
    if (!processingId) throw new DomainError(ErrorCodes.INTERNAL, 'The push scheduled no processing job');
    return { seqid: written.seqid, account_seq: written.seqid, queue: QUEUE, uuid: written.rid, processing_id: processingId };
  }
}

/**
 * The create's unique violation was the resource id, not the slug: the resource's key, or its
 * fields' (keyed by the resource id; the one-statement insert may check those first).
 */
const ID_CONSTRAINTS = ['resources_pkey', 'fields_pkey'];
function isIdConflict(err: unknown): boolean {
  return err instanceof DomainError && err.code === ErrorCodes.SLUG_CONFLICT && ID_CONSTRAINTS.includes(String(err.details?.['constraint']));
}
