import nx from '@nx/eslint-plugin';
import tseslint from 'typescript-eslint';

const scopes = ['accounts', 'content', 'understanding', 'reporting', 'gateway'];

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
      'no-restricted-syntax': [
        'error',
        {
          selector: "CallExpression[callee.object.name=/^(it|describe|test)$/][callee.property.name='only']",
          message: 'Do not commit focused tests (.only).',
        },
      ],
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
    files: ['**/*.spec.ts', '**/*.int-spec.ts', '**/*.e2e-spec.ts', '**/test/**/*.ts'],
    rules: { '@typescript-eslint/no-non-null-assertion': 'off', '@typescript-eslint/no-empty-function': 'off' },
  },
];
