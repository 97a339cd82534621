import nlp from 'compromise';
import type { Span } from '../split';
import { analyseEnglish } from './wink';

export const ENTITY_LABELS = ['PERSON', 'ORG', 'PLACE', 'DATE', 'MONEY', 'EMAIL', 'URL', 'PHONE'] as const;
export type EntityLabel = (typeof ENTITY_LABELS)[number];

export interface Entity extends Span {
  text: string;
  label: EntityLabel;
}

export interface EntityExtraction {
  entities: Entity[];
}

/**
 * Overlaps are settled in this order: patterns with a rigid shape (an e-mail contains what looks
 * like an organisation, a URL a date) beat statistical guesses.
 */
const PRIORITY: Record<EntityLabel, number> = { EMAIL: 0, URL: 1, PHONE: 2, MONEY: 3, DATE: 4, PERSON: 5, ORG: 6, PLACE: 7 };

/** compromise and wink are run on windows of this size so a long document stays linear. */
const WINDOW_CHARS = 20_000;

const MONTHS = /\b(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\b/i;

/**
 * Named entities of `text` with exact UTF-16 offsets (`text.slice(start, end) === entity.text`).
 * E-mails, URLs, phone numbers, numeric dates and currency amounts are found by pattern in every
 * language; people, organisations, places (compromise) and written dates and amounts (wink) only
 * in English, the one language those models know.
 */
export function extractEntities(text: string, language: string | undefined): EntityExtraction {
  const found: Entity[] = patternEntities(text);
  if (language === 'en') {
    for (const [offset, window] of windows(text)) {
      found.push(...compromiseEntities(text, window, offset), ...winkEntities(text, window, offset));
    }
  }
  return { entities: settle(found) };
}

const PATTERNS: [EntityLabel, RegExp][] = [
  ['EMAIL', /(?<![\w.+-])[\w.+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}/g],
  ['URL', /\b(?:https?:\/\/|www\.)[^\s<>"'`]+/g],
  ['DATE', /\b\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2})?(?:Z|[+-]\d{2}:?\d{2})?)?\b|\b\d{1,2}[/.]\d{1,2}[/.](?:\d{4}|\d{2})\b/g],
  ['MONEY', /[$€£¥]\s?\d[\d,.]*(?:\s?(?:million|billion|thousand|bn|[kKmM])\b)?|\b\d[\d,.]*\s?(?:€|EUR|USD|GBP|\$)(?![\w])/g],
  ['PHONE', /(?<![\w+])(?:\+\d{1,3}[\s.-]?)?(?:\(\d{1,4}\)[\s.-]?)?\d{2,4}(?:[\s.-]\d{2,4}){1,5}(?!\w)/g],
];

function patternEntities(text: string): Entity[] {
  const out: Entity[] = [];
  for (const [label, pattern] of PATTERNS) {
    for (const m of text.matchAll(pattern)) {
      let value = m[0];
      if (label === 'URL' || label === 'MONEY') value = value.replace(/[.,;:!?)\]}'"”’]+$/, '');
      if (label === 'PHONE' && !isPhone(value)) continue;
      const start = m.index;
      out.push({ text: value, label, start, end: start + value.length });
    }
  }
  return out;
}

/** Digit groups are everywhere (years, amounts, ids): only a phone-like count or a prefix qualifies. */
function isPhone(value: string): boolean {
  const digits = value.replace(/\D/g, '').length;
  if (digits < 7 || digits > 15) return false;
  if (/^[+(]/.test(value)) return true;
  // Dates and thousands-grouped amounts ("100 000 000") share the shape of a phone number.
  if (/^\d{4}[-./]\d{1,2}[-./]\d{1,2}$|^\d{1,2}[-./]\d{1,2}[-./]\d{2,4}$/.test(value)) return false;
  if (/^\d{1,3}(?:[\s.]\d{3})+$/.test(value)) return false;
  return digits >= 9 || /^\d{3}-\d{4}$/.test(value);
}

/** Cuts text into windows that end at a paragraph or line break, so no entity is cut in two. */
function* windows(text: string): Generator<[number, string]> {
  let from = 0;
  while (from < text.length) {
    let to = Math.min(text.length, from + WINDOW_CHARS);
    if (to < text.length) {
      const br = text.lastIndexOf('\n', to);
      if (br > from) to = br + 1;
    }
    yield [from, text.slice(from, to)];
    from = to;
  }
}

const ABBREVIATION_END = /(?:\b[A-Z]|\b(?:Inc|Corp|Ltd|Co|Bros|Jr|Sr|St|Dr|Mr|Mrs|Ms|Prof))\.$/;

/** compromise's matches carry trailing punctuation ("Apple Inc.!", "Paris,"); abbreviations keep their dot. */
function trimEntity(value: string): string {
  let out = value.trim().replace(/^[\s"'“‘([]+/, '');
  for (;;) {
    const next = out.replace(/[\s,;:!?"'”’)\]]+$/, '');
    const dotless = next.endsWith('.') && !ABBREVIATION_END.test(next) ? next.slice(0, -1) : next;
    if (dotless === out) return out;
    out = dotless;
  }
}

interface CompromiseMatch {
  text: string;
  offset?: { start: number; length: number };
}

/**
 * compromise's pipeline without its last step, 'chunks' (noun and verb phrases, ~10 % of the
 * pipeline's time): it only sets each term's `chunk`, which nothing people(), organizations() or
 * places() match on reads (they match tags: #Person, #Organization, #Place, @hasComma…).
 */
const TAGGING_HOOKS = nlp.hooks().filter((hook) => hook !== 'chunks');

/** nlp(window) with TAGGING_HOOKS (compromise's world is this module's alone; the swap is synchronous). */
function tagged(window: string): ReturnType<typeof nlp> {
  const world = nlp.world() as { hooks: string[] };
  const hooks = world.hooks;
  world.hooks = TAGGING_HOOKS;
  try {
    return nlp(window);
  } finally {
    world.hooks = hooks;
  }
}

function compromiseEntities(text: string, window: string, offset: number): Entity[] {
  const doc = tagged(window);
  const groups: [EntityLabel, CompromiseMatch[]][] = [
    ['PERSON', doc.people().json({ offset: true }) as CompromiseMatch[]],
    ['ORG', doc.organizations().json({ offset: true }) as CompromiseMatch[]],
    ['PLACE', doc.places().json({ offset: true }) as CompromiseMatch[]],
  ];
  const out: Entity[] = [];
  for (const [label, matches] of groups) {
    for (const match of matches) {
      const value = trimEntity(match.text);
      if (value.length < 2 || !/\p{Lu}/u.test(value)) continue;
      const start = locate(text, value, offset + (match.offset?.start ?? 0), offset);
      if (start >= 0) out.push({ text: value, label, start, end: start + value.length });
    }
  }
  return out;
}

/**
 * compromise's offsets are a hint, not a contract (it normalises some characters); the entity is
 * looked up in the original text near the hint so the offsets returned are exact.
 */
function locate(text: string, value: string, hint: number, windowStart: number): number {
  if (text.startsWith(value, hint)) return hint;
  const near = text.indexOf(value, Math.max(windowStart, hint - 16));
  return near >= 0 && near <= hint + 64 ? near : -1;
}

function winkEntities(text: string, window: string, offset: number): Entity[] {
  const analysis = analyseEnglish(window);
  if (!analysis) return [];
  const out: Entity[] = [];
  for (const e of analysis.entities) {
    if (e.type !== 'DATE' && e.type !== 'MONEY') continue;
    const raw = window.slice(e.start, e.end);
    // Relative dates ("yesterday", "last Monday") name no date a reader could find again.
    if (e.type === 'DATE' && !/\d/.test(raw) && !MONTHS.test(raw)) continue;
    const value = raw.replace(/[.,;:!?]+$/, '');
    const start = offset + e.start;
    if (value) out.push({ text: value, label: e.type, start, end: start + value.length });
  }
  return out.filter((e) => text.slice(e.start, e.end) === e.text);
}

/** Drops exact duplicates, then any entity overlapping one with higher priority or a longer span. */
function settle(found: Entity[]): Entity[] {
  const ranked = [...found].sort(
    (a, b) => PRIORITY[a.label] - PRIORITY[b.label] || b.end - b.start - (a.end - a.start) || a.start - b.start,
  );
  const kept: Entity[] = [];
  for (const e of ranked) {
    if (kept.some((k) => e.start < k.end && k.start < e.end)) continue;
    kept.push(e);
  }
  return kept.sort((a, b) => a.start - b.start || a.end - b.end);
}
