import { existsSync, readFileSync } from 'node:fs';
import Module, { createRequire } from 'node:module';
import { join } from 'node:path';

interface EldResult {
  language: string;
  isReliable(): boolean;
}
interface EldDetector {
  detect(text: string): EldResult;
}

/** Fewer letters than this say too little about the language (a name, a code, "OK"). */
const MIN_LETTERS = 12;
/** Han, kana and hangul characters carry a word each, so they count for more than one letter. */
const IDEOGRAPH_WEIGHT = 3;
/** eld's cost grows with the text; the first few thousand characters decide as well as the whole. */
const SAMPLE_CHARS = 4000;

let detector: EldDetector | null | undefined;

/**
 * ISO 639-1 code of `text`'s language, or undefined when the text is too short or eld is unsure.
 * URLs, e-mail addresses and digits are removed first: they are language-neutral noise.
 */
export function detectLanguage(text: string): string | undefined {
  const sample = text
    .slice(0, SAMPLE_CHARS)
    .replace(/\b(?:https?:\/\/|www\.)\S+|\S+@\S+\.\S+/g, ' ')
    .replace(/[\p{N}_]+/gu, ' ');
  if (letterWeight(sample) < MIN_LETTERS) return undefined;
  const eld = loadEld();
  if (!eld) return scriptLanguage(sample);
  const result = eld.detect(sample);
  return result.language && result.isReliable() ? result.language : undefined;
}

/** True once eld's model is loaded (or known to be missing): detection no longer blocks on it. */
export function languageModelLoaded(): boolean {
  return detector !== undefined;
}

function letterWeight(text: string): number {
  let weight = 0;
  for (const ch of text) {
    if (/[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}]/u.test(ch)) weight += IDEOGRAPH_WEIGHT;
    else if (/\p{L}/u.test(ch)) weight += 1;
  }
  return weight;
}

/**
 * eld ships as ES modules only, with an `import`-only exports map, while this code runs as
 * CommonJS (SWC build, jest). Node ≥ 20.19 can `require` an ES module that has no top-level await,
 * so the medium build is required by its file path (which the exports map does not govern). This
 * keeps detection synchronous. On an older Node every require throws and the script fallback is used.
 */
function loadEld(): EldDetector | null {
  if (detector !== undefined) return detector;
  detector = null;
  const file = eldEntry();
  if (!file) return detector;
  for (const nodeRequire of nodeRequires()) {
    try {
      detector = (nodeRequire(file) as { eld?: EldDetector }).eld ?? null;
      if (detector) break;
    } catch {
      // this require cannot load ES modules; try the next one
    }
  }
  return detector;
}

/**
 * Node's own loaders. jest hands out a sandboxed `createRequire` that cannot load ES modules;
 * `Module._load`, the long-stable internal entry behind every `require`, is still Node's there.
 */
function nodeRequires(): ((file: string) => unknown)[] {
  const out: ((file: string) => unknown)[] = [createRequire(__filename)];
  const load = (Module as unknown as { _load?: (request: string, parent: null, isMain: boolean) => unknown })._load;
  if (typeof load === 'function') out.push((file) => load.call(Module, file, null, false));
  return out;
}

/** The medium build's file, found the way Node looks for packages from this file. */
function eldEntry(): string | undefined {
  for (const dir of createRequire(__filename).resolve.paths('eld') ?? []) {
    const pkgDir = join(dir, 'eld');
    const pkgFile = join(pkgDir, 'package.json');
    if (!existsSync(pkgFile)) continue;
    const pkg = JSON.parse(readFileSync(pkgFile, 'utf8')) as { exports?: Record<string, { import?: string }> };
    return join(pkgDir, pkg.exports?.['./medium']?.import ?? './src/entries/static.medium.js');
  }
  return undefined;
}

/** Last resort without eld: scripts that belong to one language in practice. */
function scriptLanguage(text: string): string | undefined {
  if (/[\p{Script=Hiragana}\p{Script=Katakana}]/u.test(text)) return 'ja';
  if (/\p{Script=Hangul}/u.test(text)) return 'ko';
  if (/\p{Script=Han}/u.test(text)) return 'zh';
  if (/\p{Script=Greek}/u.test(text)) return 'el';
  if (/\p{Script=Hebrew}/u.test(text)) return 'he';
  return undefined;
}
