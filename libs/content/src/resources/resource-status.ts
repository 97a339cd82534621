import type { ResourceStatus } from '@kb/contracts';

/** A resource is in ERROR if any field failed, PENDING while any is pending, else PROCESSED. */
export function deriveResourceStatus(fieldStatuses: ResourceStatus[]): ResourceStatus {
  if (fieldStatuses.some((s) => s === 'ERROR')) return 'ERROR';
  if (fieldStatuses.some((s) => s === 'PENDING')) return 'PENDING';
  return 'PROCESSED';
}
