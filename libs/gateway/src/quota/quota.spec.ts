import { ACCESS_TABLE } from '../auth/access-table';
import { BlockingView } from './blocking-view';
import { isPerRequestQuotaRoute, predictQuotaFeatures, quotaFeaturesFor } from './quota-features';
import type { MessageBus } from '@kb/platform/messaging';
import type { AccountBlockingDto } from '@kb/contracts';

describe('quotaFeaturesFor', () => {
  it.each([
    ['POST', '/api/v1/kb/:kbid/find', ['search']],
    ['GET', '/api/v1/kb/:kbid/search', ['search']],
    ['POST', '/api/v1/kb/:kbid/slug/:rslug/ask', ['ask']],
    ['POST', '/api/v1/kb/:kbid/resources', ['processing', 'storage']],
    ['PATCH', '/api/v1/kb/:kbid/resource/:rid', ['processing', 'storage']],
    ['PUT', '/api/v1/kb/:kbid/resource/:rid/text/:field_id', ['processing', 'storage']],
    ['POST', '/api/v1/kb/:kbid/upload', ['processing', 'storage']],
    ['POST', '/api/v1/kb/:kbid/tusupload', ['processing', 'storage']],
    ['POST', '/api/v1/processing/push', ['processing', 'storage']],
    // An import into a KB adds resources and bytes: refused when the account or the KB is at a storage limit.
    ['POST', '/api/v1/kb/:kbid/import', ['storage']],
    ['GET', '/api/v1/kb/:kbid/import/:import_id/status', []],
    ['POST', '/api/v1/kb/:kbid/export', []],
    // Continuations, deletions, reads and suggestions are never refused.
    ['PATCH', '/api/v1/kb/:kbid/tusupload/:upload_id', []],
    ['DELETE', '/api/v1/kb/:kbid/resource/:rid', []],
    ['GET', '/api/v1/kb/:kbid/resource/:rid', []],
    ['GET', '/api/v1/kb/:kbid/suggest', []],
    ['POST', '/api/v1/kb/:kbid/resource/:rid/reindex', []],
    ['GET', '/api/v1/account/:account_id/usage', []],
  ])('%s %s → %j', (method, path, features) => {
    expect(quotaFeaturesFor(method, path)).toEqual(features);
  });

  it('names only routes of the access table', () => {
    const limited = Object.keys(ACCESS_TABLE).filter((k) => {
      const [m, p] = k.split(' ') as [string, string];
      return quotaFeaturesFor(m, p).length > 0;
    });
    expect(limited).toEqual(
      expect.arrayContaining([
        'POST /api/v1/kb/:kbid/find',
        'POST /api/v1/kb/:kbid/ask',
        'POST /api/v1/kb/:kbid/resources',
        'POST /api/v1/processing/push',
      ]),
    );
    // Reads of a resource are never refused; searching inside one is a search.
    expect(
      limited.filter((k) => k.startsWith('DELETE ') || (k.startsWith('GET /api/v1/kb/:kbid/resource') && !k.endsWith('/search'))),
    ).toEqual([]);
    expect(quotaFeaturesFor('GET', '/api/v1/kb/:kbid/resource/:rid/search')).toEqual(['search']);
  });
});

describe('predictQuotaFeatures (predict calls of understanding-API keys)', () => {
  it('knows which routes depend on the request: the UA predict routes only', () => {
    expect(isPerRequestQuotaRoute('GET', '/api/v1/predict/:endpoint')).toBe(true);
    expect(isPerRequestQuotaRoute('post', '/api/v1/predict/compat/embeddings')).toBe(true);
    expect(isPerRequestQuotaRoute('POST', '/api/v1/predict/compat/chat/completions')).toBe(true);
    expect(isPerRequestQuotaRoute('GET', '/api/v1/predict/compat/models')).toBe(false);
    // The `/{kbid}` variants: a key's calls on a KB of its account hold the same limits.
    expect(isPerRequestQuotaRoute('GET', '/api/v1/predict/:endpoint/:kbid')).toBe(true);
    expect(isPerRequestQuotaRoute('POST', '/api/v1/predict/compat/embeddings/:kbid')).toBe(true);
    expect(isPerRequestQuotaRoute('POST', '/api/v1/predict/compat/chat/completions/:kbid')).toBe(true);
    expect(isPerRequestQuotaRoute('GET', '/api/v1/predict/compat/models/:kbid')).toBe(false);
    // A KB's predict routes hold no self-hosted limit.
    expect(isPerRequestQuotaRoute('POST', '/api/v1/kb/:kbid/predict/:endpoint')).toBe(false);
    expect(quotaFeaturesFor('POST', '/api/v1/kb/:kbid/predict/:endpoint')).toEqual([]);
    expect(isPerRequestQuotaRoute('DELETE', '/api/v1/predict/:endpoint')).toBe(false);
  });

  it.each([
    ['/api/v1/predict/:endpoint', 'sentence', undefined, ['self_hosted_search']],
    ['/api/v1/predict/:endpoint', 'query', {}, ['self_hosted_search']],
    ['/api/v1/predict/:endpoint', 'chat', { question: 'q' }, ['self_hosted_ask']],
    ['/api/v1/predict/:endpoint', 'sentences', { texts: ['a'] }, []],
    ['/api/v1/predict/:endpoint', 'tokens', undefined, []],
    ['/api/v1/predict/:endpoint', 'summarize', {}, []],
    ['/api/v1/predict/:endpoint', 'no-such-endpoint', {}, []],
    ['/api/v1/predict/:endpoint', undefined, {}, []],
    ['/api/v1/predict/compat/chat/completions', undefined, { messages: [] }, ['self_hosted_ask']],
    ['/api/v1/predict/compat/embeddings', undefined, { input: 'a query' }, ['self_hosted_search']],
    ['/api/v1/predict/compat/embeddings', undefined, { input: ['a query'] }, ['self_hosted_search']],
    // A batch embeds passages (indexing), not a search; a malformed body is refused by its DTO, not here.
    ['/api/v1/predict/compat/embeddings', undefined, { input: ['a', 'b'] }, []],
    ['/api/v1/predict/compat/embeddings', undefined, null, []],
    ['/api/v1/predict/compat/embeddings', undefined, 'text', []],
    ['/api/v1/predict/:endpoint/:kbid', 'query', {}, ['self_hosted_search']],
    ['/api/v1/predict/:endpoint/:kbid', 'chat', {}, ['self_hosted_ask']],
    ['/api/v1/predict/:endpoint/:kbid', 'rerank', {}, []],
    ['/api/v1/predict/compat/chat/completions/:kbid', undefined, { messages: [] }, ['self_hosted_ask']],
    ['/api/v1/predict/compat/embeddings/:kbid', undefined, { input: 'a query' }, ['self_hosted_search']],
  ])('%s %s %j → %j', (path, endpoint, body, features) => {
    expect(predictQuotaFeatures(path, endpoint, body)).toEqual(features);
  });
});

describe('BlockingView', () => {
  const month = new Date().toISOString().slice(0, 7);
  const block = (account: string, extra: Partial<AccountBlockingDto> = {}): AccountBlockingDto => ({
    account_id: account,
    month,
    features: ['search'],
    kbs: {},
    blocking_state: 'quota',
    ...extra,
  });

  function fakeBus(list: () => Promise<AccountBlockingDto[]>) {
    const handlers: ((e: AccountBlockingDto) => Promise<void>)[] = [];
    const bus = {
      subscribe: async (_def: unknown, h: (e: AccountBlockingDto) => Promise<void>) => void handlers.push(h),
      request: async () => list(),
    } as unknown as MessageBus;
    return { bus, emit: (e: AccountBlockingDto) => Promise.all(handlers.map((h) => h(e))) };
  }

  it('refuses the blocked features of the current month only, per account and per KB', async () => {
    const { bus, emit } = fakeBus(async () => []);
    const view = new BlockingView(bus, { refreshMs: 60_000 });
    await view.start();
    await emit(block('a'));
    await emit(block('b', { features: [], kbs: { kb1: ['storage'] } }));
    await emit(block('c', { month: '2001-01' }));
    expect(view.blocked('a', 'kb9', ['search'])).toBe('search');
    expect(view.blocked('a', 'kb9', ['ask'])).toBeNull();
    expect(view.blocked('b', 'kb1', ['processing', 'storage'])).toBe('storage');
    expect(view.blocked('b', 'kb2', ['processing', 'storage'])).toBeNull();
    expect(view.blocked('c', undefined, ['search'])).toBeNull();
    expect(view.blocked(undefined, undefined, ['search'])).toBeNull();
    await emit(block('a', { features: [], blocking_state: 'unblocked' }));
    expect(view.blocked('a', undefined, ['search'])).toBeNull();
    view.stop();
  });

  it('keeps an event that arrives while the full list is read', async () => {
    let release: (l: AccountBlockingDto[]) => void = () => undefined;
    const { bus, emit } = fakeBus(() => new Promise((r) => (release = r)));
    const view = new BlockingView(bus, { refreshMs: 60_000 });
    await view.start();
    const refreshing = view.refresh();
    await emit(block('a'));
    release([block('z')]); // read before a's event
    await refreshing;
    expect(view.blocked('a', undefined, ['search'])).toBe('search');
    expect(view.blocked('z', undefined, ['search'])).toBe('search');
    view.stop();
  });
});
