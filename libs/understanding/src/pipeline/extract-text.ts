import type { TextFormat } from '@kb/contracts';

/**
 * Plain text of a text field by its format. HTML loses its tags, Markdown its markup (except
 * KEEP_MARKDOWN), JSON is rendered as indented text; the rest is kept as written.
 */
export function extractText(body: string, format: TextFormat): string {
  switch (format) {
    case 'HTML':
      return decodeEntities(
        body
          .replace(/<(script|style)[^>]*>[\s\S]*?<\/\1>/gi, '')
          .replace(/<\/(p|div|h[1-6]|li|tr|br|section|article|blockquote|pre)>/gi, '\n\n')
          .replace(/<br\s*\/?>/gi, '\n')
          .replace(/<[^>]+>/g, ''),
      )
        .replace(/[ \t]+/g, ' ')
        .replace(/\n\s*\n\s*(\n\s*)+/g, '\n\n')
        .trim();
    case 'MARKDOWN':
      return body
        .replace(/```[a-z]*\n?/gi, '')
        .replace(/!\[([^\]]*)\]\([^)]*\)/g, '$1')
        .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
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
