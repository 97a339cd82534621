import { ExtractionError } from './extraction.error';

const STEP = /(\/\/?)([a-zA-Z*][\w.-]*(?::[\w.-]+)?)((?:\[[^\]]*\])*)/y;
const PREDICATE = /\[([^\]]*)\]/g;
const QUOTED = `(?:'([^']*)'|"([^"]*)")`;

/**
 * Translates the XPath subset people paste from browser dev tools into a CSS selector:
 * `/html/body/div[2]`, `//article`, `//*[@id="main"]`, `//div[@class='x']`,
 * `//div[contains(@class,'x')]`, `//a[starts-with(@href,'/doc')]`, a trailing `/text()`.
 * No XPath engine ships with the pinned DOM libraries (linkedom has no `document.evaluate`),
 * and anything outside this subset is refused with INVALID_SELECTOR rather than guessed.
 */
export function xpathToCss(xpath: string): string {
  const source = xpath.trim().replace(/\/text\(\)$/, '');
  if (!source.startsWith('/')) throw invalid(xpath);
  const parts: string[] = [];
  STEP.lastIndex = 0;
  let at = 0;
  while (at < source.length) {
    STEP.lastIndex = at;
    const m = STEP.exec(source);
    if (!m) throw invalid(xpath);
    const [, axis, name, predicates] = m as unknown as [string, string, string, string];
    let css = name === '*' ? '*' : name.toLowerCase();
    for (const [, pred] of predicates.matchAll(PREDICATE)) css += predicateToCss(pred ?? '', name, xpath);
    parts.push(parts.length === 0 ? css : axis === '//' ? ` ${css}` : ` > ${css}`);
    at = STEP.lastIndex;
  }
  return parts.join('');
}

function predicateToCss(pred: string, name: string, xpath: string): string {
  const p = pred.trim();
  if (/^\d+$/.test(p)) {
    if (name === '*') throw invalid(xpath);
    return `:nth-of-type(${p})`;
  }
  let m = new RegExp(`^@([\\w:-]+)$`).exec(p);
  if (m) return `[${m[1]}]`;
  m = new RegExp(`^@([\\w:-]+)\\s*=\\s*${QUOTED}$`).exec(p);
  if (m) return `[${m[1]}=${JSON.stringify(m[2] ?? m[3] ?? '')}]`;
  m = new RegExp(`^(contains|starts-with)\\(\\s*@([\\w:-]+)\\s*,\\s*${QUOTED}\\s*\\)$`).exec(p);
  if (m) return `[${m[2]}${m[1] === 'contains' ? '*=' : '^='}${JSON.stringify(m[3] ?? m[4] ?? '')}]`;
  throw invalid(xpath);
}

function invalid(xpath: string): ExtractionError {
  return new ExtractionError(`Unsupported XPath expression: ${xpath}`, 'INVALID_SELECTOR');
}
