// Lint: ESLint's recommended rules plus typescript-eslint's, on the TypeScript
// sources, tests and scripts. Generated code is checked by the compiler only.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import graphqlPlugin from '@graphql-eslint/eslint-plugin';

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'src/generated/**', 'coverage/**', '.data/**', 'bench/results/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: {
      globals: {
        process: 'readonly', console: 'readonly', Buffer: 'readonly', URL: 'readonly',
        setTimeout: 'readonly', clearTimeout: 'readonly', setInterval: 'readonly', clearInterval: 'readonly',
        setImmediate: 'readonly', __dirname: 'readonly', require: 'readonly', module: 'writable',
        AbortController: 'readonly', fetch: 'readonly', TextEncoder: 'readonly', TextDecoder: 'readonly',
      },
    },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' }],
      'no-constant-condition': ['error', { checkLoops: false }],
    },
  },
  {
    // Tenancy (docs/api.md, "Tenancy"): the domain runs SQL only through the
    // repositories, and a repository only through TenantSql (src/db/tenant-sql.ts),
    // which binds the account as $1 of every statement. A repository never gets
    // the raw `sql` function, so a query without its account cannot be written
    // by accident; statements that span accounts say so (TenantSql.crossTenant).
    files: ['src/domain/**/*.ts'],
    rules: {
      'no-restricted-syntax': [
        'error',
        { selector: "CallExpression[callee.property.name='sql']", message: 'Run SQL through a repository and its TenantSql (src/db/tenant-sql.ts).' },
      ],
    },
  },
  {
    files: ['src/domain/**/*.repository.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        { patterns: [{ group: ['**/db/create-db'], message: 'A repository receives a TenantSql (src/db/tenant-sql.ts), never the raw sql function or the Db.' }] },
      ],
    },
  },
  {
    // tests read response bodies of arbitrary shape
    files: ['test/**/*.ts', 'bench/**/*.ts'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
  {
    // The GraphQL schema explains itself (docs/graphql.md): schema.graphql, as emitted from the
    // resolvers, under graphql-eslint's recommended schema rules, with a description required on
    // every type, field, argument, input field and enum value. A field added without one fails
    // `npm run lint` (test/schema-descriptions.test.ts shows it).
    files: ['schema.graphql'],
    languageOptions: { parser: graphqlPlugin.parser, parserOptions: { graphQLConfig: { schema: 'schema.graphql' } } },
    plugins: { '@graphql-eslint': graphqlPlugin },
    rules: {
      ...graphqlPlugin.configs['flat/schema-recommended'].rules,
      '@graphql-eslint/require-description': [
        'error',
        { types: true, rootField: true, FieldDefinition: true, InputValueDefinition: true, EnumValueDefinition: true, DirectiveDefinition: true },
      ],
      '@graphql-eslint/description-style': ['error', { style: 'block' }],
      // value objects and Relay's page types have no identity of their own
      '@graphql-eslint/strict-id-in-types': [
        'error',
        {
          exceptions: {
            types: [
              'AccountSettings', 'CallbackRateLimit', 'PageInfo', 'PhoneNumberCapabilities', 'WebhookSigningSecret', 'WebhookTestResponse',
              // an agent's or the queue's state now, and a step of a request's history: views, not records (an agent is a User)
              'AgentActivity', 'AgentAvailability', 'CallbackHistoryStep', 'QueueActivity',
            ],
            suffixes: ['Connection', 'Edge'],
          },
        },
      ],
    },
  },
  {
    // the pages' own browser scripts (src/http/pages/*/): classic scripts, served as they are
    files: ['src/http/pages/**/*.js'],
    languageOptions: {
      sourceType: 'script',
      globals: {
        window: 'readonly', document: 'readonly', location: 'readonly', sessionStorage: 'readonly', fetch: 'readonly',
        URL: 'readonly', setTimeout: 'readonly', setInterval: 'readonly', clearTimeout: 'readonly', graphqlWs: 'readonly',
      },
    },
  },
  {
    files: ['**/*.js', '**/*.cjs'],
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
);
