import type { AnyDef } from './common/bus';
import { AccountsSubjects } from './accounts/accounts.subjects';
import { ContentSubjects } from './content/content.subjects';
import { ReportingSubjects } from './reporting/reporting.subjects';
import { UnderstandingSubjects } from './understanding/understanding.subjects';

/** Every subject of the system, for stream set-up and the snapshot test. */
export const ALL_SUBJECTS: readonly AnyDef[] = [
  ...Object.values(AccountsSubjects),
  ...Object.values(ContentSubjects),
  ...Object.values(UnderstandingSubjects),
  ...Object.values(ReportingSubjects),
] as AnyDef[];
