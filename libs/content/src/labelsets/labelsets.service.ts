import { Inject, Injectable } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import {
  DomainError,
  ErrorCodes,
  type KbContentRef,
  type LabelSetDto,
  type LabelSetRef,
  type LabelSetsDto,
  type SetLabelSetRequest,
  type ValidationIssue,
} from '@kb/contracts';
import { CONTENT_DATA_SOURCE } from '../content.tokens';

/** Label sets of a KB, and the check of labels used on resources against them. */
@Injectable()
export class LabelSetsService {
  constructor(@Inject(CONTENT_DATA_SOURCE) private readonly ds: DataSource) {}

  async list(ref: KbContentRef): Promise<LabelSetsDto> {
    const rows: { id: string; body: LabelSetDto }[] = await this.ds.query(
      `SELECT id, body FROM content.labelsets WHERE kbid = $1 ORDER BY id`,
      [ref.kbid],
    );
    return { uuid: ref.kbid, labelsets: Object.fromEntries(rows.map((r) => [r.id, r.body])) };
  }

  async get(ref: LabelSetRef): Promise<LabelSetDto> {
    const rows: { body: LabelSetDto }[] = await this.ds.query(`SELECT body FROM content.labelsets WHERE kbid = $1 AND id = $2`, [
      ref.kbid,
      ref.labelset,
    ]);
    if (!rows[0]) throw new DomainError(ErrorCodes.NOT_FOUND, `Label set ${ref.labelset} not found`);
    return rows[0].body;
  }

  async set(req: SetLabelSetRequest): Promise<Record<string, never>> {
    const labels = req.body.labels ?? [];
    const seen = new Map<string, number>();
    const issues: ValidationIssue[] = [];
    labels.forEach((l, i) => {
      const k = l.title.toLowerCase();
      if (seen.has(k))
        issues.push({
          loc: ['body', 'labels', i, 'title'],
          msg: `Label titles must be unique (case-insensitive): "${l.title}" repeats label ${seen.get(k)}`,
          type: 'value_error',
        });
      seen.set(k, i);
    });
    if (issues.length > 0) throw DomainError.validation(issues);
    const body: LabelSetDto = {
      title: req.body.title ?? req.labelset,
      color: req.body.color ?? 'blue',
      multiple: req.body.multiple ?? true,
      kind: req.body.kind ?? [],
      labels,
    };
    await this.ds.query(
      `INSERT INTO content.labelsets (kbid, id, body, modified_at) VALUES ($1, $2, $3, now()) ON CONFLICT (kbid, id) DO UPDATE SET body = EXCLUDED.body, modified_at = now()`,
      [req.kbid, req.labelset, JSON.stringify(body)],
    );
    return {};
  }

  async delete(ref: LabelSetRef): Promise<Record<string, never>> {
    const rows: unknown[] = await this.ds.query(
      `WITH d AS (DELETE FROM content.labelsets WHERE kbid = $1 AND id = $2 RETURNING id) SELECT id FROM d`,
      [ref.kbid, ref.labelset],
    );
    if (rows.length === 0) throw new DomainError(ErrorCodes.NOT_FOUND, `Label set ${ref.labelset} not found`);
    return {};
  }

  /**
   * Labels given in `usermetadata.classifications` must exist when their label set exists (a label
   * set that does not exist yet is free-form, as in the reference system).
   */
  async classificationIssues(
    kbid: string,
    classifications: Record<string, unknown>[] | undefined,
    loc: (string | number)[],
  ): Promise<ValidationIssue[]> {
    if (!classifications || classifications.length === 0) return [];
    const sets = (await this.list({ kbid })).labelsets;
    const issues: ValidationIssue[] = [];
    classifications.forEach((c, i) => {
      const labelset = c['labelset'];
      const label = c['label'];
      if (typeof labelset !== 'string' || typeof label !== 'string') {
        issues.push({ loc: [...loc, i], msg: 'A classification needs a labelset and a label (strings)', type: 'value_error' });
        return;
      }
      const set = sets[labelset];
      if (set && !(set.labels ?? []).some((l) => l.title.toLowerCase() === label.toLowerCase())) {
        issues.push({ loc: [...loc, i, 'label'], msg: `Label "${label}" is not in label set "${labelset}"`, type: 'value_error' });
      }
    });
    return issues;
  }
}
