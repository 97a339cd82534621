import { DomainError, ErrorCodes } from '@kb/contracts';
import { presentedCredential } from './credential-header';

const codeOf = (fn: () => unknown): string | undefined => {
  try {
    fn();
    return undefined;
  } catch (err) {
    return (err as DomainError).code;
  }
};

describe('presentedCredential', () => {
  it.each([
    [{ authorization: 'Bearer abc' }, 'authorization'],
    [{ 'x-svc-serviceaccount': 'Bearer k' }, 'serviceaccount'],
    [{ 'x-nuclia-serviceaccount': 'bearer k' }, 'serviceaccount'],
    [{ 'x-stf-serviceaccount': 'Bearer k' }, 'serviceaccount'],
    [{ 'x-svc-uakey': 'Bearer u' }, 'uakey'],
    [{ 'x-stf-nuakey': 'Bearer u' }, 'uakey'],
  ])('accepts %j', (headers, header) => {
    expect(presentedCredential(headers)?.header).toBe(header);
  });

  it('returns null without a credential, ignoring empty headers', () => {
    expect(presentedCredential({ accept: 'json', authorization: '  ' })).toBeNull();
  });

  it.each([
    [{ authorization: 'Bearer a', 'x-svc-serviceaccount': 'Bearer b' }],
    [{ 'x-svc-serviceaccount': 'Bearer a', 'x-nuclia-serviceaccount': 'Bearer a' }],
    [{ 'x-svc-uakey': ['Bearer a', 'Bearer b'] }],
    [{ authorization: 'Bearer a', 'x-stf-nuakey': 'Bearer c' }],
  ])('rejects several credentials %j', (headers) => {
    expect(codeOf(() => presentedCredential(headers))).toBe(ErrorCodes.MULTIPLE_CREDENTIALS);
  });

  it.each([[{ authorization: 'Basic abc' }], [{ 'x-svc-serviceaccount': 'token-without-scheme' }], [{ authorization: 'Bearer a b' }]])(
    'rejects malformed %j',
    (headers) => {
      expect(codeOf(() => presentedCredential(headers))).toBe(ErrorCodes.UNAUTHENTICATED);
    },
  );
});
