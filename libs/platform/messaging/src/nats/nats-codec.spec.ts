import { contextFromHeaders, contextHeaders, natsName } from './nats-codec';

describe('nats codec', () => {
  it('carries the context in headers and back', () => {
    const h = contextHeaders({ requestId: 'r1', principalId: 'p1' });
    expect(contextFromHeaders(h)).toEqual({ requestId: 'r1', principalId: 'p1' });
    expect(contextFromHeaders(contextHeaders({}))).toEqual({});
    expect(contextFromHeaders(undefined)).toEqual({});
  });

  it('turns any string into a valid stream or consumer name', () => {
    expect(natsName('t1_worker:content.resource.processed')).toBe('t1_worker_content_resource_processed');
  });
});
