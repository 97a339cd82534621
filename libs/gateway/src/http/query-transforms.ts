import { Transform } from 'class-transformer';

/** `?show=a&show=b`, `?show=a` and `?show=a,b` all become `['a', 'b']`. */
export const QueryArray = () =>
  Transform(({ value }) => {
    if (value === undefined || value === null) return undefined;
    const list = Array.isArray(value) ? value : [value];
    return list
      .flatMap((v) => String(v).split(','))
      .map((v) => v.trim())
      .filter((v) => v !== '');
  });

/** Integers from the query string; anything that is not a whole number is left as is for the validator to reject. */
export const QueryInt = () => Transform(({ value }) => (typeof value === 'string' && /^-?\d+$/.test(value.trim()) ? Number(value) : value));

export const QueryBool = () =>
  Transform(({ value }) => {
    if (typeof value !== 'string') return value;
    const v = value.toLowerCase();
    return v === 'true' || v === '1' ? true : v === 'false' || v === '0' ? false : value;
  });
