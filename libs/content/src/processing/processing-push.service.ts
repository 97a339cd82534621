import { Injectable } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import {
  DomainError,
  ErrorCodes,
  PushPayloadDto,
  validatePayload,
  type ProcessingPushRequest,
  type ProcessingPushResponseDto,
  type ResourceWriteDto,
} from '@kb/contracts';
import { ResourceReaderService } from '../resources/resource-reader.service';
import { RESOURCE_ID_CONSTRAINTS, ResourcesService } from '../resources/resources.service';
import { ProcessingStatusService } from './processing-requests';
import { PushFilesService, type StagedPush } from './push-files';
import { canonicalUuid, pushWriteOf, type PushedFiles } from './push-payload';
import type { PushedBytes } from '../resources/held-bytes';

/** All pushes share the one processing queue (spec 4.5's sample `queue` value). */
const QUEUE = 'shared';

/**
 * "Send Data To Process" (spec 4.5): the pushed fields are written to a resource of the KB through
 * the ordinary write path, so each gets its processing job and status record in the same
 * statement or transaction as the write (nothing lost, nothing recorded for a rolled-back write).
 * The resource is the one named by `uuid` (else by `slug`) when it exists, a new one otherwise.
 * Files named by upload tokens are moved under the resource before the write and released after it
 * (PushFilesService).
 */
@Injectable()
export class ProcessingPushService {
  constructor(
    private readonly writer: ResourcesService,
    private readonly reader: ResourceReaderService,
    private readonly status: ProcessingStatusService,
    private readonly files: PushFilesService,
  ) {}

  async push(req: ProcessingPushRequest): Promise<ProcessingPushResponseDto> {
    // The bus validates only the payload's top level; its field maps are checked here (as the gateway did).
    const p = validatePayload(PushPayloadDto, req.body, { loc: ['body'] });
    const staged = await this.files.locate(req.account_id, p);
    const hasFiles = Object.keys(staged.files).length > 0 || Object.keys(staged.attachments).length > 0;
    // Checks the payload before any file is copied.
    pushWriteOf(p, placeholders(staged));
    const kbid = p.kbid;
    const ref = p.uuid ? { kbid, rid: canonicalUuid(p.uuid) } : p.slug ? { kbid, slug: p.slug } : undefined;
    const existing = ref ? await this.reader.exists(ref) : { exists: false };
    // Files are copied under the resource before its write, so its id is fixed first.
    const rid = existing.exists && existing.rid ? existing.rid : p.uuid ? canonicalUuid(p.uuid) : hasFiles ? randomUUID() : undefined;
    const moved =
      hasFiles && rid ? await this.files.move(kbid, rid, staged) : { pushed: undefined, written: [] as string[], bytes: undefined };
    let written: { rid: string; seqid: number };
    try {
      written = await this.write(p, req, existing, rid, pushWriteOf(p, moved.pushed).body, moved.bytes);
    } catch (err) {
      // A resource this push did not create keeps its other files; a new one had only these.
      await this.files.discard(moved.written);
      throw err;
    }
    if (hasFiles) await this.files.release(staged);

    const [processingId] = await this.status.jobsOfWrite(written.rid, written.seqid);
    // pushWriteOf refuses a payload without fields, so the write scheduled at least one job.
    if (!processingId) throw new DomainError(ErrorCodes.INTERNAL, 'The push scheduled no processing job');
    return { seqid: written.seqid, account_seq: written.seqid, queue: QUEUE, uuid: written.rid, processing_id: processingId };
  }

  private async write(
    p: PushPayloadDto,
    req: ProcessingPushRequest,
    existing: { exists: boolean; rid?: string },
    rid: string | undefined,
    body: ResourceWriteDto,
    bytes: PushedBytes | undefined,
  ): Promise<{ rid: string; seqid: number }> {
    const kbid = p.kbid;
    // The push's own webhook wins over its client's; either is signed with the client's secret.
    const target = p.webhook_config ?? req.client_webhook;
    const webhook =
      target && req.client ? { uri: target.uri, ...(target.headers ? { headers: target.headers } : {}), client: req.client } : undefined;
    const common = {
      kbid,
      ...(req.actor ? { actor: req.actor } : {}),
      ...(p.labels && p.labels.length > 0 ? { processing_labels: p.labels } : {}),
      ...(webhook ? { processing_webhook: webhook } : {}),
    };
    const modify = async (id: string) => (await this.writer.modify({ ...common, rid: id, body }, bytes)).seqid;
    if (existing.exists && existing.rid) return { rid: existing.rid, seqid: await modify(existing.rid) };
    try {
      const created = await this.writer.create(
        {
          ...common,
          ...(rid ? { rid } : {}),
          body: { ...body, ...(p.slug ? { slug: p.slug } : {}) },
        },
        bytes?.files,
        bytes?.attachments,
      );
      return { rid: created.uuid, seqid: created.seqid };
    } catch (err) {
      if (!rid || !isIdConflict(err)) throw err;
      // A concurrent push created the resource first: write into it. In another KB the id is taken.
      const now = await this.reader.exists({ kbid, rid });
      if (!now.exists) throw new DomainError(ErrorCodes.CONFLICT, 'The resource id is already in use');
      return { rid, seqid: await modify(rid) };
    }
  }
}

/** Field values standing for the staged files, to check the payload before anything is copied. */
function placeholders(staged: StagedPush): PushedFiles {
  const file = (u: { stat: { contentType: string } }) => ({ uri: 'blob:staged', content_type: u.stat.contentType });
  return {
    files: Object.fromEntries(Object.entries(staged.files).map(([f, u]) => [f, { file: file(u) }])),
    attachments: Object.fromEntries(
      Object.entries(staged.attachments).map(([f, m]) => [f, Object.fromEntries(Object.entries(m).map(([i, us]) => [i, us.map(file)]))]),
    ),
  };
}

/** The create's conflict was the resource id, not the slug. */
function isIdConflict(err: unknown): boolean {
  return (
    err instanceof DomainError && err.code === ErrorCodes.CONFLICT && RESOURCE_ID_CONSTRAINTS.includes(String(err.details?.['constraint']))
  );
}
