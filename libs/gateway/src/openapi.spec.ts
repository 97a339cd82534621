import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { generateOpenApiDocument, serializeOpenApi } from './openapi';

describe('committed openapi.json', () => {
  it('matches what the code serves (run `npm run openapi` after an API change)', async () => {
    const committed = readFileSync(join(__dirname, '..', '..', '..', 'openapi.json'), 'utf8');
    expect(serializeOpenApi(await generateOpenApiDocument())).toBe(committed);
  });
});
