import { queue } from '../common/bus';
import { FieldProcessedResult, ProcessFieldJob } from './processing.dto';

export const UnderstandingSubjects = {
  /** Work queue consumed by processing workers. */
  processField: queue<ProcessFieldJob>('understanding.field.process', 'PROCESSING', ProcessFieldJob),
  /** Results, consumed by content to store `extracted` and index. */
  fieldProcessed: queue<FieldProcessedResult>('understanding.field.processed', 'PROCESSED', FieldProcessedResult),
} as const;
