import nx from '@nx/eslint-plugin';
import tseslint from 'typescript-eslint';

const scopes = ['accounts', 'content', 'understanding', 'reporting', 'gateway'];

const noFocusedTests = {
  selector: "CallExpression[callee.object.name=/^(it|describe|test)$/][callee.property.name='only']",
  message: 'Do not commit focused tests (.only).',
};

/** `Record<string, unknown>`: the type of a free-form map, never of a whole request or response. */
const untypedRecord =
  "TSTypeReference[typeName.name='Record'][typeArguments.params.0.type='TSStringKeyword'][typeArguments.params.1.type='TSUnknownKeyword']";

/**
 * Issue 18: between the HTTP edge and the services every request and response is a declared type
 * (the DTOs of libs/contracts). No double cast, no untyped whole body or response; free-form
 * members (metadata maps and the like) stay `Record<string, unknown>`.
 */
const typedContract = [
  {
    selector: "TSAsExpression > TSAsExpression.expression[typeAnnotation.type='TSUnknownKeyword']",
    message: 'No `as unknown as`: type the value (a DTO of libs/contracts, or a narrower declared type).',
  },
  {
    selector: `TSTypeReference[typeName.name='Promise'] > TSTypeParameterInstantiation > ${untypedRecord}`,
    message: 'A response is a declared type (a DTO of libs/contracts), not Record<string, unknown>.',
  },
  {
    selector: `:matches(Identifier, PropertyDefinition, TSPropertySignature)[key.name='body'] > TSTypeAnnotation > ${untypedRecord}, Identifier[name='body'] > TSTypeAnnotation > ${untypedRecord}`,
    message: 'A request body is its DTO (libs/contracts), not Record<string, unknown>.',
  },
  {
    selector: `Property[key.name='body'] > TSAsExpression > ${untypedRecord}.typeAnnotation, TSAsExpression:has(> ${untypedRecord}.typeAnnotation) > MemberExpression.expression[property.name='body']`,
    message: 'A request body is its DTO (libs/contracts), not a cast.',
  },
];

export default [
  { ignores: ['**/dist', '**/node_modules', '**/data', '**/tmp', '**/*.js', '**/*.mjs', '**/*.cjs'] },
  ...nx.configs['flat/base'],
  ...nx.configs['flat/typescript'],
  {
    files: ['**/*.ts'],
    languageOptions: { parser: tseslint.parser },
    rules: {
      // The module boundaries of the architecture, enforced: apps never import apps, a service
      // never imports another service, contracts import nothing internal, platform only contracts.
      '@nx/enforce-module-boundaries': [
        'error',
        {
          enforceBuildableLibDependency: false,
          allow: [],
          depConstraints: [
            { sourceTag: 'type:contracts', onlyDependOnLibsWithTags: ['type:contracts'] },
            { sourceTag: 'type:platform', onlyDependOnLibsWithTags: ['type:platform', 'type:contracts'] },
            { sourceTag: 'type:service', onlyDependOnLibsWithTags: ['type:platform', 'type:contracts'] },
            { sourceTag: 'type:edge', onlyDependOnLibsWithTags: ['type:platform', 'type:contracts'] },
            // The generated client stands alone: what a newcomer would install, the OpenAPI document's types.
            { sourceTag: 'type:client', onlyDependOnLibsWithTags: [] },
            { sourceTag: 'type:e2e', onlyDependOnLibsWithTags: ['type:platform', 'type:contracts', 'type:edge', 'type:client'] },
            { sourceTag: 'scope:standalone', onlyDependOnLibsWithTags: ['type:service', 'type:edge', 'type:platform', 'type:contracts'] },
            ...scopes.map((s) => ({
              sourceTag: `scope:${s}`,
              onlyDependOnLibsWithTags: [`scope:${s}`, 'scope:platform', 'scope:contracts'],
            })),
          ],
        },
      ],
      '@typescript-eslint/no-explicit-any': 'error',
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', destructuredArrayIgnorePattern: '^_' },
      ],
      '@typescript-eslint/no-unsafe-function-type': 'off',
      'no-restricted-syntax': ['error', noFocusedTests],
    },
  },
  {
    // Root modules never read the environment: only main.ts files and configuration readers do.
    files: ['libs/{accounts,content,understanding,reporting,gateway}/src/**/*.ts'],
    rules: {
      'no-restricted-properties': [
        'error',
        { object: 'process', property: 'env', message: 'Root modules receive configuration; only main.ts reads process.env.' },
      ],
    },
  },
  {
    // The typed contract (issue 18): the gateway's routes, the contracts, and search and ask in the content service.
    files: [
      'libs/gateway/src/routes/**/*.ts',
      'libs/contracts/src/**/*.ts',
      'libs/content/src/search/**/*.ts',
      'libs/content/src/ask/**/*.ts',
    ],
    ignores: ['**/*.spec.ts'],
    rules: { 'no-restricted-syntax': ['error', noFocusedTests, ...typedContract] },
  },
  {
    files: ['**/*.spec.ts', '**/*.int-spec.ts', '**/*.e2e-spec.ts', '**/test/**/*.ts'],
    rules: { '@typescript-eslint/no-non-null-assertion': 'off', '@typescript-eslint/no-empty-function': 'off' },
  },
];
