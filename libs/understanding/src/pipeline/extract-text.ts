import type { TextFormat } from '@kb/contracts';

/**
 * Plain text of a text field by its format. HTML loses its tags, Markdown its markup (except
 * KEEP_MARKDOWN), JSON is rendered as indented text; the rest is kept as written.
 */
export function extractText(body: string, format: TextFormat): string {
  switch (format) {
    case 'HTML':
      // Every pattern here runs in linear time on any input: a text field's body is the caller's
      // (up to the JSON body limit) and is converted on the service's own thread. `<[^<>]+>` stops
      // at the next '<', so a run of unclosed '<' is not rescanned to the end for each one.
      return decodeEntities(
        dropScriptsAndStyles(body)
          .replace(/<\/(p|div|h[1-6]|li|tr|br|section|article|blockquote|pre)>/gi, '\n\n')
          .replace(/<br\s*\/?>/gi, '\n')
          .replace(/<[^<>]+>/g, ''),
      )
        .replace(/[ \t]+/g, ' ')
        .replace(/\n\s*\n\s*(\n\s*)+/g, '\n\n')
        .trim();
    case 'MARKDOWN':
      // Link text stops at the next '[' and the address at the next '(' for the same reason.
      return body
        .replace(/```[a-z]*\n?/gi, '')
        .replace(/!\[([^[\]]*)\]\([^()]*\)/g, '$1')
        .replace(/\[([^[\]]*)\]\([^()]*\)/g, '$1')
        .replace(/^#{1,6}\s+/gm, '')
        .replace(/(\*\*|__)(.*?)\1/g, '$2')
        .replace(/^\s*[-*+]\s+/gm, '')
        .replace(/^>\s?/gm, '')
        .trim();
    case 'JSON':
      try {
        return JSON.stringify(JSON.parse(body), null, 2);
      } catch {
        return body;
      }
    default:
      return body;
  }
}

function decodeEntities(s: string): string {
  const named: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: ' ' };
  return s.replace(/&(#x[0-9a-f]+|#\d+|[a-z]+);/gi, (whole, code: string) => {
    if (code[0] === '#') {
      const n = code[1]?.toLowerCase() === 'x' ? parseInt(code.slice(2), 16) : parseInt(code.slice(1), 10);
      return Number.isFinite(n) ? String.fromCodePoint(n) : whole;
    }
    return named[code.toLowerCase()] ?? whole;
  });
}

/**
 * Removes <script> and <style> elements with their content. A lazy `<script>[\s\S]*?</script>`
 * regex rescans the rest of the text for every unclosed opening tag (quadratic: 256 KB of
 * `<script>` took 5 s); here the closing tag is searched once per element, and once a kind has no
 * closing tag left, its later openings are not searched again. Unclosed ones stay, as before, for
 * the tag stripper.
 */
function dropScriptsAndStyles(html: string): string {
  const opening = /<(script|style)[^<>]*>/gi;
  const unclosed = new Set<string>();
  let out = '';
  let at = 0;
  for (let m = opening.exec(html); m; m = opening.exec(html)) {
    const name = (m[1] ?? '').toLowerCase();
    if (unclosed.has(name)) continue;
    const closing = new RegExp(`</${name}>`, 'gi');
    closing.lastIndex = opening.lastIndex;
    const end = closing.exec(html);
    if (!end) {
      unclosed.add(name);
      continue;
    }
    out += html.slice(at, m.index);
    at = closing.lastIndex;
    opening.lastIndex = at;
  }
  return out + html.slice(at);
}
