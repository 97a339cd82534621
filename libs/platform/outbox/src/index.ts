export { outboxTable, outboxTableSql } from './outbox-table';
export { TransactionalOutbox, type OutboxConfig, type OutboxEntry, type OutboxKind, type OutboxRow } from './transactional-outbox';
