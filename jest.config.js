/** @type {import('jest').Config} */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.test.ts'],
  // Faults (npm run test:faults) and soak (npm run test:soak) stop servers and run
  // for minutes: they have their own commands, not part of npm test. test/serial
  // (timing) is part of npm test, in a second jest run with nothing beside it.
  testPathIgnorePatterns: ['/node_modules/', '<rootDir>/test/faults/', '<rootDir>/test/soak/', '<rootDir>/test/serial/'],
  transform: {
    '^.+\\.(t|j|mj)sx?$': [
      '@swc/jest',
      {
        jsc: {
          parser: { syntax: 'typescript', decorators: true },
          transform: { legacyDecorator: true, decoratorMetadata: true },
          target: 'es2022',
        },
        module: { type: 'commonjs' },
      },
    ],
  },
  // ESM-only packages: cookie@2 (fastify inject), the schema engine's wasm glue, oauth4webapi (the OAuth client of
  // the tests) and typebox (the REST schemas; .mjs, which Node requires natively but jest must transform)
  transformIgnorePatterns: ['/node_modules/(?!(cookie|@prisma/schema-engine-wasm|oauth4webapi|typebox|content-disposition)/)'],
  // fails a test file whose requests got answers the OpenAPI document does not describe
  setupFilesAfterEnv: ['<rootDir>/test/helpers/openapi-conformance.ts'],
  testTimeout: 60_000,
  // at the end of every run, each skipped test and why (test/helpers/skip.ts gives the reasons)
  reporters: ['default', '<rootDir>/test/helpers/skipped-tests.js'],
  maxWorkers: 2,
  // PGlite's Emscripten runtime keeps the event loop alive after close()
  forceExit: true,
};
