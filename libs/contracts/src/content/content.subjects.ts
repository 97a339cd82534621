import { event, rpc } from '../common/bus';
import { AuditRecordedEvent } from './audit.event';
import {
  CreateResourceRequest, DeleteResourceRequest, GetResourceRequest, KbContentRef, ListResourcesRequest, ModifyResourceRequest, ResourceRef,
} from './resource-requests.dto';
import {
  AppendMessagesRequest, DeleteFieldRequest, DeleteMessageRequest, GetFieldRequest, Md5Request, PutFieldRequest, RegisterUploadRequest, ReprocessRequest,
} from './field-requests.dto';
import { LabelSetRef, SetLabelSetRequest, type LabelSetDto, type LabelSetsDto } from './labelset.dto';
import type { FieldRecord, ResourceCreatedDto, ResourceDto, ResourceListDto, SeqIdDto } from './resource.dto';

export const ContentSubjects = {
  createResource: rpc<CreateResourceRequest, ResourceCreatedDto>('content.resource.create', CreateResourceRequest),
  getResource: rpc<GetResourceRequest, ResourceDto>('content.resource.get', GetResourceRequest),
  resourceExists: rpc<ResourceRef, { exists: boolean; rid?: string }>('content.resource.exists', ResourceRef),
  listResources: rpc<ListResourcesRequest, ResourceListDto>('content.resource.list', ListResourcesRequest),
  modifyResource: rpc<ModifyResourceRequest, SeqIdDto>('content.resource.modify', ModifyResourceRequest),
  deleteResource: rpc<DeleteResourceRequest, Record<string, never>>('content.resource.delete', DeleteResourceRequest),
  putField: rpc<PutFieldRequest, SeqIdDto>('content.field.put', PutFieldRequest),
  getField: rpc<GetFieldRequest, FieldRecord>('content.field.get', GetFieldRequest),
  deleteField: rpc<DeleteFieldRequest, Record<string, never>>('content.field.delete', DeleteFieldRequest),
  appendMessages: rpc<AppendMessagesRequest, SeqIdDto>('content.conversation.append', AppendMessagesRequest),
  deleteMessage: rpc<DeleteMessageRequest, Record<string, never>>('content.conversation.delete-message', DeleteMessageRequest),
  reprocessResource: rpc<ReprocessRequest, SeqIdDto>('content.resource.reprocess', ReprocessRequest),
  registerUpload: rpc<RegisterUploadRequest, { uuid: string; seqid: number; field_id: string }>('content.upload.register', RegisterUploadRequest),
  md5Exists: rpc<Md5Request, { exists: boolean }>('content.file.checksum-exists', Md5Request),
  listLabelSets: rpc<KbContentRef, LabelSetsDto>('content.labelset.list', KbContentRef),
  getLabelSet: rpc<LabelSetRef, LabelSetDto>('content.labelset.get', LabelSetRef),
  setLabelSet: rpc<SetLabelSetRequest, Record<string, never>>('content.labelset.set', SetLabelSetRequest),
  deleteLabelSet: rpc<LabelSetRef, Record<string, never>>('content.labelset.delete', LabelSetRef),
  countResources: rpc<KbContentRef, { resources: number }>('content.kb.count', KbContentRef),

  auditRecorded: event<AuditRecordedEvent>('content.audit.recorded', 'AUDIT', AuditRecordedEvent),
} as const;
