/**
 * The shape of src/ as the code must keep it (README, "Development": rest → graphql → domain → db),
 * checked by `npm run lint`. `depcruise src --config .dependency-cruiser.cjs`.
 * @type {import('dependency-cruiser').IConfiguration}
 */
module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'A cycle makes modules load half-initialised and hides which layer owns what: break it by moving the shared part down.',
      from: { path: '^src/' },
      to: { circular: true },
    },
    {
      name: 'domain-stays-protocol-free',
      severity: 'error',
      comment: 'The domain is the business: it never knows about GraphQL, REST, HTTP or the frameworks serving them.',
      from: { path: '^src/domain/' },
      to: { path: ['^src/(graphql|rest|http)/', '(^|/)node_modules/(fastify|@fastify/|fastify-plugin|@apollo/|@as-integrations/|type-graphql)'] },
    },
    {
      name: 'graphql-below-rest-and-http',
      severity: 'error',
      comment: 'REST runs GraphQL operations, not the other way round; GraphQL knows nothing of the HTTP plugins.',
      from: { path: '^src/graphql/' },
      to: { path: '^src/(rest|http)/' },
    },
    {
      name: 'not-to-unresolvable',
      severity: 'error',
      comment: 'An import that resolves to nothing is a typo or a missing dependency.',
      from: { path: '^src/' },
      to: { couldNotResolve: true },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^src/generated/' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['import', 'require', 'node', 'default', 'types'], mainFields: ['module', 'main', 'types', 'typings'] },
  },
};
