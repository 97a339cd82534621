import { validatePayload } from '../common/validation';
import { EmbedQueryRequest, decodeFloat32, encodeFloat32 } from './query.dto';

describe('float32 query vectors', () => {
  it('round-trips the float32 value of every number, little-endian', () => {
    const vector = [0, -0, 1, -1, 1 / 3, -0.123456789, 3.4e38, 1e-45, Number.MIN_VALUE, 2 ** -126];
    const decoded = decodeFloat32(encodeFloat32(vector));
    expect(decoded).toEqual(vector.map(Math.fround));
    expect(Buffer.from(encodeFloat32([1]), 'base64')).toEqual(Buffer.from([0x00, 0x00, 0x80, 0x3f]));
    expect(encodeFloat32([])).toBe('');
    expect(decodeFloat32('')).toEqual([]);
  });

  it('keeps non-finite values as they are (the reader decides what to do with them)', () => {
    const decoded = decodeFloat32(encodeFloat32([Number.POSITIVE_INFINITY, Number.NaN, 1e39]));
    expect(decoded[0]).toBe(Number.POSITIVE_INFINITY);
    expect(decoded[1]).toBeNaN();
    expect(decoded[2]).toBe(Number.POSITIVE_INFINITY);
  });

  it('refuses text that is not a whole number of float32 values', () => {
    expect(() => decodeFloat32(Buffer.from([1, 2, 3]).toString('base64'))).toThrow(RangeError);
    expect(() => decodeFloat32(Buffer.from([1, 2, 3, 4, 5]).toString('base64'))).toThrow(RangeError);
  });

  it('accepts only float32 as the encoding asked for', () => {
    expect(validatePayload(EmbedQueryRequest, { kbid: 'kb', text: 'q', encoding: 'float32' })).toMatchObject({ encoding: 'float32' });
    expect(() => validatePayload(EmbedQueryRequest, { kbid: 'kb', text: 'q', encoding: 'json' })).toThrow();
    expect(() => validatePayload(EmbedQueryRequest, { kbid: 'kb', text: 'q', encoding: 1 })).toThrow();
  });
});
