/**
 * Whether `value` reads as one e-mail address: a local part and a domain around the only `@`, no
 * whitespace, and a domain that is one label or has a dot with something on both sides.
 *
 * A single left-to-right pass (each character looked at once): the regular expression it replaces,
 * `^[^\s@]+@([^\s@]+\.[^\s@]+|[^\s@.]+)$`, backtracked quadratically on a domain of many dots that
 * ends in a refused character, and the IdP (any account's, so anyone's) chooses the NameID.
 */
export function isEmailAddress(value: string): boolean {
  let at = -1;
  let innerDot = false;
  let anyDot = false;
  for (let i = 0; i < value.length; i++) {
    const c = value.charCodeAt(i);
    if (isSpace(c)) return false;
    if (c === 0x40 /* @ */) {
      if (at !== -1) return false;
      at = i;
    } else if (c === 0x2e /* . */ && at !== -1) {
      anyDot = true;
      // A dot counts when it is neither the first nor the last character of the domain.
      if (i > at + 1 && i < value.length - 1) innerDot = true;
    }
  }
  if (at <= 0 || at === value.length - 1) return false;
  return anyDot ? innerDot : true;
}

/** What `\s` matches in a JavaScript regular expression (the check it replaces refused exactly these). */
function isSpace(c: number): boolean {
  return (
    (c >= 0x09 && c <= 0x0d) ||
    c === 0x20 ||
    c === 0xa0 ||
    c === 0x1680 ||
    (c >= 0x2000 && c <= 0x200a) ||
    c === 0x2028 ||
    c === 0x2029 ||
    c === 0x202f ||
    c === 0x205f ||
    c === 0x3000 ||
    c === 0xfeff
  );
}
