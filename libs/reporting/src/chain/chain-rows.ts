import type { ChainRecord } from './chain-hash';

/** The columns a chain hash covers, read back as stored (jsonb as parsed JSON, the date as a timestamp). */
export const CHAIN_COLUMNS =
  'e.id::text AS id, e.event_id, e.kbid::text AS kbid, e.type, e.date, e.user_id, e.user_type, e.client_type, e.total_duration, e.resource_id, e.audit_metadata, e.details, e.learning_id';

export interface StoredChainRow extends ChainRecord {
  id: string;
  kbid: string;
  type: string;
}
