import winkNLP from 'wink-nlp';
import model from 'wink-eng-lite-web-model';
import type { Span } from '../split';

export interface WinkEntity extends Span {
  type: string;
}

export interface WinkAnalysis {
  sentences: Span[];
  entities: WinkEntity[];
}

type Wink = ReturnType<typeof winkNLP>;
let wink: Wink | undefined;

/** One English pipeline per process: building it reads the model (~60 ms), so it is built on first use. */
function english(): Wink {
  wink ??= winkNLP(model);
  return wink;
}

/** True once the English pipeline is built. */
export function englishPipelineLoaded(): boolean {
  return wink !== undefined;
}

/**
 * Runs wink's English pipeline over `text` and maps its token-index spans back to UTF-16 offsets
 * into `text`. wink keeps every token's original characters and the whitespace before it, so the
 * offsets are rebuilt by walking the tokens; any disagreement with `text` returns null and the
 * caller falls back to the regex splitter rather than emit wrong offsets.
 */
export function analyseEnglish(text: string): WinkAnalysis | null {
  // A one-paragraph text is read twice in a row, for its sentences and for its entities: once is enough.
  if (last?.text === text) return last.analysis;
  const analysis = readEnglish(text);
  last = { text, analysis };
  return analysis;
}

/**
 * The last text analysed and its analysis (callers only read it). analyseText asks for the sentences
 * of each paragraph, then for the entities of the whole text: for a text of one paragraph (most
 * fields), both are the same string, and wink costs ~5 ms per 1,500 characters.
 */
let last: { text: string; analysis: WinkAnalysis | null } | undefined;

function readEnglish(text: string): WinkAnalysis | null {
  const nlp = english();
  const its = nlp.its;
  const doc = nlp.readDoc(text);
  // wink's typings return `T[] | string[]` for every `out`; the its helpers used here return strings.
  const values = doc.tokens().out(its.value) as string[];
  const spaces = doc.tokens().out(its.precedingSpaces) as string[];
  const starts: number[] = [];
  const ends: number[] = [];
  let cursor = 0;
  for (let i = 0; i < values.length; i++) {
    const value = values[i] as string;
    const start = cursor + (spaces[i] ?? '').length;
    if (text.slice(start, start + value.length) !== value) return null;
    starts.push(start);
    ends.push(start + value.length);
    cursor = start + value.length;
  }
  const toSpan = (first: number, last: number): Span | null => {
    const start = starts[first];
    const end = ends[last];
    return start === undefined || end === undefined || end <= start ? null : { start, end };
  };
  const sentences: Span[] = [];
  for (const [first, last] of doc.sentences().out(its.span) as unknown as [number, number][]) {
    const span = toSpan(first, last);
    if (span) sentences.push(span);
  }
  const entities: WinkEntity[] = [];
  const entitySpans = doc.entities().out(its.span) as unknown as [number, number][];
  const entityTypes = doc.entities().out(its.type) as string[];
  entitySpans.forEach(([first, last], i) => {
    const span = toSpan(first, last);
    if (span) entities.push({ ...span, type: entityTypes[i] as string });
  });
  return { sentences, entities };
}
