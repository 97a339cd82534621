import { SECRET_MASK as M, containsSecretMask, keepMaskedSecrets, maskSecrets, maskUrlCredentials } from './secrets';

describe('maskSecrets', () => {
  it('masks credential members of provider keys at any depth, and keeps the settings', () => {
    const userKeys = {
      openai: { key: 'sk-1', model: 'gpt-4o', organisation: 'acme' },
      openai_compatible: {
        api_key: 'k2',
        url: 'https://bob:hunter2@llm.example/v1?api_key=k3&region=eu',
        model: 'm',
        headers: { 'X-Custom': 'h1', Accept: 'application/json' },
        generation_config: { temperature: 0.2, default_max_completion_tokens: 800 },
        model_features: { streaming: true },
        matryoshka: [256, 512],
        nested: { client_secret: 's4', list: [{ access_token: 't5' }] },
      },
    };
    const masked = maskSecrets(userKeys);
    expect(masked).toEqual({
      openai: { key: M, model: 'gpt-4o', organisation: 'acme' },
      openai_compatible: {
        api_key: M,
        url: `https://${M}:${M}@llm.example/v1?api_key=${M}&region=eu`,
        model: 'm',
        headers: { 'X-Custom': M, Accept: M },
        generation_config: { temperature: 0.2, default_max_completion_tokens: 800 },
        model_features: { streaming: true },
        matryoshka: [256, 512],
        nested: { client_secret: M, list: [{ access_token: M }] },
      },
    });
    for (const secret of ['sk-1', 'k2', 'bob', 'hunter2', 'k3', 'h1', 's4', 't5']) expect(JSON.stringify(masked)).not.toContain(secret);
  });

  it.each([
    [
      'a link value',
      {
        uri: 'https://example.com/page',
        headers: { Authorization: 'Bearer x' },
        cookies: { sid: 'c' },
        localstorage: { jwt: 'l' },
        css_selector: 'main',
      },
      {
        uri: 'https://example.com/page',
        headers: { Authorization: M },
        cookies: { sid: M },
        localstorage: { jwt: M },
        css_selector: 'main',
      },
    ],
    [
      'a file value',
      { file: { uri: 'blob:k', filename: 'a.pdf', extra_headers: { Cookie: 'c' } }, password: 'pw', language: 'en' },
      { file: { uri: 'blob:k', filename: 'a.pdf', extra_headers: { Cookie: M } }, password: M, language: 'en' },
    ],
    [
      'a webhook',
      { uri: 'https://hooks.example/x?token=abc', headers: { 'X-Signature-Key': 'w' } },
      { uri: `https://hooks.example/x?token=${M}`, headers: { 'X-Signature-Key': M } },
    ],
    ['empty and absent members', { headers: {}, password: '', other: null }, { headers: {}, password: '', other: null }],
  ])('masks %s', (_what, input, expected) => {
    expect(maskSecrets(input)).toEqual(expected);
  });

  it.each([
    ['https://h.example/?apiKey=a&keyword=k&postcode=p', `https://h.example/?apiKey=${M}&keyword=k&postcode=p`],
    [
      'https://s3.example/o?X-Amz-Credential=c&X-Amz-Signature=s&X-Amz-Expires=60',
      `https://s3.example/o?X-Amz-Credential=${M}&X-Amz-Signature=${M}&X-Amz-Expires=60`,
    ],
    ['https://f.example/api/x?code=c&access_token=t&sig=s', `https://f.example/api/x?code=${M}&access_token=${M}&sig=${M}`],
    ['https://user@h.example/', `https://${M}@h.example/`],
  ])('masks the credentials of %s', (url, masked) => {
    expect(maskUrlCredentials(url)).toBe(masked);
  });

  it('leaves URLs without credentials and non-URLs byte for byte', () => {
    for (const s of ['https://example.com/a%20b?q=x y', 'not a url ?token=x', 'blob:content/kbs/1', 'http://[bad'])
      expect(maskUrlCredentials(s)).toBe(s);
  });
});

describe('keepMaskedSecrets', () => {
  const stored = { openai: { key: 'sk-real', model: 'gpt-4o', url: 'https://u:p@h.example/?key=k' }, other: { headers: { A: 'a' } } };

  it('keeps every stored secret a client sends back masked', () => {
    expect(keepMaskedSecrets(maskSecrets(stored), stored)).toEqual(stored);
  });

  it('takes new values as sent, and a mask where nothing was stored as sent', () => {
    const incoming = {
      openai: { key: 'sk-new', model: 'gpt-4o-mini', url: `https://${M}:${M}@other.example/?key=${M}` },
      other: { headers: { A: M, B: M } },
    };
    expect(keepMaskedSecrets(incoming, stored)).toEqual({
      openai: { key: 'sk-new', model: 'gpt-4o-mini', url: `https://${M}:${M}@other.example/?key=${M}` },
      other: { headers: { A: 'a', B: M } },
    });
  });

  it('does not turn a non-secret that happens to equal the mask into anything else', () => {
    expect(keepMaskedSecrets({ model: M }, { model: 'gpt-4o' })).toEqual({ model: M });
    expect(keepMaskedSecrets({ key: M }, null)).toEqual({ key: M });
  });

  it('tells whether a value holds a mask', () => {
    expect(containsSecretMask({ a: [{ b: `x${M}` }] })).toBe(true);
    expect(containsSecretMask({ a: 'b' })).toBe(false);
    expect(containsSecretMask(undefined)).toBe(false);
  });
});
