import type { EventDef, LiveDef, QueueDef, RpcDef, StreamDef } from './common/bus';
import { AccountsSubjects } from './accounts/accounts.subjects';
import { ContentSubjects } from './content/content.subjects';
import { ReportingSubjects } from './reporting/reporting.subjects';
import { UnderstandingSubjects } from './understanding/understanding.subjects';

/** The processes of the distributed topology, each with its own bus identity. */
export const BusApps = ['gateway', 'accounts', 'content', 'understanding', 'reporting'] as const;
export type BusApp = (typeof BusApps)[number];

type CallDef = RpcDef<unknown, unknown> | StreamDef<unknown, unknown>;
type FlowDef = EventDef<unknown> | QueueDef<unknown> | LiveDef<unknown>;

/**
 * What one app may do on the bus. The NATS server configuration (one user per app with publish and
 * subscribe allow-lists) is built from this table, so it is the place to review who may ask what.
 */
export interface BusAccess {
  /** Requests and streams it answers. */
  serves: readonly CallDef[];
  /** Requests and streams it sends. */
  calls: readonly CallDef[];
  /** Events it publishes, jobs it enqueues and live messages it sends (on any key). */
  emits: readonly FlowDef[];
  /** Events it subscribes to, queues it consumes and live messages it may listen to (per key, as needed). */
  receives: readonly FlowDef[];
}

/**
 * Requests no HTTP route leads to. `accounts.kb-config.resolve` answers with a KB's provider keys in
 * clear: only the services that call those providers for the KB may ask for it, never the edge.
 */
export const INTERNAL_CALLS: readonly CallDef[] = [
  AccountsSubjects.resolveKbConfig,
  UnderstandingSubjects.embedQuery,
  UnderstandingSubjects.rerank,
  UnderstandingSubjects.pdfPageImage,
  ContentSubjects.countResources,
  AccountsSubjects.kbAccount,
  AccountsSubjects.accountQuota,
  ContentSubjects.resolveStrategies,
  ContentSubjects.remiJudge,
];

const calls = (subjects: Record<string, { kind: string }>): CallDef[] =>
  Object.values(subjects).filter((d): d is CallDef => d.kind === 'rpc' || d.kind === 'stream');

/**
 * Requests carrying a caller's Principal (the authorisation the gateway resolved) come from the
 * gateway only; services call each other solely for the internal requests listed above.
 */
export const BUS_ACCESS: Record<BusApp, BusAccess> = {
  gateway: {
    serves: [],
    // The predict API's vectors and entities carry no secrets: the edge asks understanding for them.
    calls: [
      ...calls(AccountsSubjects),
      ...calls(ContentSubjects),
      ...calls(ReportingSubjects),
      UnderstandingSubjects.predictEmbed,
      UnderstandingSubjects.predictTokens,
    ].filter((d) => !INTERNAL_CALLS.includes(d)),
    // The predict API's calls are metered where they all pass, in batches (docs/usage.md).
    emits: [ContentSubjects.auditBatch],
    // Live KB notifications: each replica subscribes to the KBs its notification readers follow.
    // Blocks are kept in memory and read on every admitted request (usage limits).
    receives: [
      AccountsSubjects.credentialRevoked,
      AccountsSubjects.accessChanged,
      ContentSubjects.kbNotification,
      ReportingSubjects.blockingChanged,
    ],
  },
  accounts: {
    serves: calls(AccountsSubjects),
    calls: [],
    emits: [
      AccountsSubjects.kbCreated,
      AccountsSubjects.kbDeleted,
      AccountsSubjects.accountDeleted,
      AccountsSubjects.semanticModelsChanged,
      AccountsSubjects.credentialRevoked,
      AccountsSubjects.accessChanged,
      AccountsSubjects.accountLimitsChanged,
    ],
    // The account record shows the blocks reporting decides.
    receives: [ReportingSubjects.blockingChanged],
  },
  content: {
    serves: calls(ContentSubjects),
    // The query vector and the cross-encoder reranker's scores come from the models the understanding service runs.
    // /ask's page_image has the PDF pages rendered where the extraction sandbox runs.
    calls: [
      AccountsSubjects.resolveKbConfig,
      UnderstandingSubjects.embedQuery,
      UnderstandingSubjects.rerank,
      UnderstandingSubjects.pdfPageImage,
    ],
    emits: [
      ContentSubjects.auditRecorded,
      ContentSubjects.auditBatch,
      ContentSubjects.resourceReindexed,
      ContentSubjects.kbNotification,
      ContentSubjects.generateQuestionAnswers,
      UnderstandingSubjects.processField,
      UnderstandingSubjects.deliverWebhook,
    ],
    receives: [
      ContentSubjects.resourceReindexed,
      ContentSubjects.generateQuestionAnswers,
      AccountsSubjects.kbDeleted,
      AccountsSubjects.accountDeleted,
      AccountsSubjects.semanticModelsChanged,
      UnderstandingSubjects.fieldProcessed,
      UnderstandingSubjects.webhookAttempted,
    ],
  },
  understanding: {
    serves: [
      UnderstandingSubjects.embedQuery,
      UnderstandingSubjects.rerank,
      UnderstandingSubjects.pdfPageImage,
      UnderstandingSubjects.predictEmbed,
      UnderstandingSubjects.predictTokens,
    ],
    // The KB's embedding and transcription providers are called with the KB's own keys; the split
    // and extract strategies a field names are read from content (docs/kb-configuration.md).
    calls: [AccountsSubjects.resolveKbConfig, ContentSubjects.resolveStrategies],
    // Only the processing workers publish processing results.
    emits: [UnderstandingSubjects.fieldProcessed, UnderstandingSubjects.webhookAttempted],
    receives: [UnderstandingSubjects.processField, UnderstandingSubjects.deliverWebhook, AccountsSubjects.semanticModelsChanged],
  },
  reporting: {
    serves: calls(ReportingSubjects),
    // Usage is metered per account, and blocks decided against the account's limits; the REMi scorer's built-in model vectors,
    // and its LLM judge run by content with the KB's provider (reporting never sees the provider keys; docs/remi.md).
    calls: [AccountsSubjects.kbAccount, AccountsSubjects.accountQuota, UnderstandingSubjects.embedQuery, ContentSubjects.remiJudge],
    emits: [ReportingSubjects.blockingChanged],
    receives: [
      ContentSubjects.auditRecorded,
      ContentSubjects.auditBatch,
      AccountsSubjects.kbCreated,
      AccountsSubjects.kbDeleted,
      AccountsSubjects.accountLimitsChanged,
    ],
  },
};
