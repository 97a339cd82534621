import type { OpenAPIObject } from '@nestjs/swagger';

type Parameter = { name: string; in: string; required?: boolean; schema?: Record<string, unknown>; description?: string };

/**
 * Declares every `{name}` of every documented path as a path parameter of its operations.
 * Routes that read their parameters through the request (the shared resource-by-id and
 * resource-by-slug handlers, the account and KB guards' parameters) leave some undeclared, and a
 * document whose paths name parameters its operations do not declare is invalid: generated
 * clients then cannot fill them in.
 */
export function declarePathParameters(doc: OpenAPIObject): OpenAPIObject {
  for (const [path, item] of Object.entries(doc.paths)) {
    const names = [...path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1] as string);
    for (const [method, value] of Object.entries(item)) {
      if (!HTTP_METHODS.has(method) || !value || typeof value !== 'object') continue;
      const operation = value as { parameters?: Parameter[] };
      const parameters = (operation.parameters ??= []);
      const missing = names.filter((name) => !parameters.some((p) => p.in === 'path' && p.name === name));
      parameters.unshift(...missing.map((name) => ({ name, in: 'path', required: true, schema: { type: 'string' } })));
    }
  }
  return doc;
}

const HTTP_METHODS = new Set(['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace']);
