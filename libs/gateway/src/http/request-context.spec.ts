import { userTypeOf } from './request-context';

describe('userTypeOf', () => {
  it("says nuakey for keys and user for people (the activity log's user_type)", () => {
    expect(['api_key', 'temporal_key', 'ua_key'].map((k) => userTypeOf(k as never))).toEqual(['nuakey', 'nuakey', 'nuakey']);
    expect(['user_token', 'pat'].map((k) => userTypeOf(k as never))).toEqual(['user', 'user']);
    expect(userTypeOf(undefined)).toBe('user');
  });
});
