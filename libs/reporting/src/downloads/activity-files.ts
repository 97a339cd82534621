import { stringify } from 'csv-stringify/sync';
import type { ActivityDownloadQuery, ActivityQueryItem, ActivityRecord, ActivityShown, AuditEventType } from '@kb/contracts';
import type { ActivityService } from '../activity/activity.service';

/** Records read per statement while a file is written. */
export const FILE_PAGE = 1000;

/**
 * Every record of a query, page after page (id order), through the activity query itself (the
 * same checks, members and time limit per page): a file holds exactly what the query shows.
 */
export async function* allRecords(
  activity: ActivityService,
  kbid: string,
  eventType: AuditEventType,
  query: ActivityDownloadQuery,
  signal?: AbortSignal,
): AsyncGenerator<ActivityRecord> {
  let after: number | undefined;
  for (;;) {
    const pagination = after === undefined ? { limit: FILE_PAGE } : { limit: FILE_PAGE, starting_after: after };
    let more = false;
    let seen = 0;
    for await (const item of activity.query(
      { kbid, event_type: eventType, body: { ...query, pagination } },
      signal,
    ) as AsyncIterable<ActivityQueryItem>) {
      if (item.type === 'page') {
        more = item.has_more;
        continue;
      }
      seen++;
      after = Number(item.record['id']);
      yield item.record;
    }
    if (!more || seen === 0 || signal?.aborted) return;
  }
}

/** One NDJSON line per record. */
export async function* ndjsonText(records: AsyncIterable<ActivityRecord>): AsyncGenerator<string> {
  let batch = '';
  for await (const r of records) {
    batch += `${JSON.stringify(r)}\n`;
    if (batch.length >= 64 * 1024) {
      yield batch;
      batch = '';
    }
  }
  if (batch) yield batch;
}

/**
 * CSV (RFC 4180, through csv-stringify): a UTF-8 byte order mark so spreadsheets read the text
 * right, a header row of the shown members, then one row per record; nested values (metadata,
 * context, history) as JSON text in their cell, absent ones empty.
 */
export async function* csvText(
  columns: ActivityShown[],
  records: AsyncIterable<ActivityRecord>,
  options: { bom?: boolean } = {},
): AsyncGenerator<string> {
  yield stringify([columns], { bom: options.bom ?? true, record_delimiter: 'windows' });
  let rows: string[][] = [];
  for await (const r of records) {
    rows.push(columns.map((c) => cell(r[c])));
    if (rows.length >= FILE_PAGE) {
      yield stringify(rows, { record_delimiter: 'windows' });
      rows = [];
    }
  }
  if (rows.length > 0) yield stringify(rows, { record_delimiter: 'windows' });
}

function cell(value: unknown): string {
  if (value === null || value === undefined) return '';
  if (typeof value === 'object') return JSON.stringify(value);
  return String(value);
}
