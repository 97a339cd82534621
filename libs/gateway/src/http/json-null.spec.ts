import { lastValueFrom, of } from 'rxjs';
import type { CallHandler, ExecutionContext } from '@nestjs/common';
import { JsonNullInterceptor } from './json-null';

describe('JsonNullInterceptor', () => {
  const run = async (value: unknown) => {
    const types: string[] = [];
    const context = {
      switchToHttp: () => ({ getResponse: () => ({ type: (t: string) => types.push(t) }) }),
    } as unknown as ExecutionContext;
    const next: CallHandler = { handle: () => of(value) };
    return { sent: await lastValueFrom(new JsonNullInterceptor().intercept(context, next)), types };
  };

  it('sends null (and nothing) as the JSON text null with a JSON content type', async () => {
    expect(await run(null)).toEqual({ sent: 'null', types: ['application/json'] });
    expect(await run(undefined)).toEqual({ sent: 'null', types: ['application/json'] });
  });

  it('leaves any other answer as it is', async () => {
    expect(await run({ a: 1 })).toEqual({ sent: { a: 1 }, types: [] });
    expect(await run(0)).toEqual({ sent: 0, types: [] });
  });
});
