import type { ApolloServerPlugin } from '@apollo/server';
import { ApolloArmor } from '@escape.tech/graphql-armor';
import type { GraphQLArmorRejectCallback } from '@escape.tech/graphql-armor-types';
import { GraphQLError, type ParseOptions, type ValidationRule } from 'graphql';

/**
 * Limits on what one GraphQL operation may ask for (API.md §8), enforced by
 * graphql-armor's validation rules before anything executes.
 *
 * Cost model (graphql-armor cost-limit): a scalar costs 1, an object 2 plus
 * depthCostFactor × the cost of its selections, and a field with a literal
 * `first`/`last` argument multiplies its subtree by that number. A factor of 3
 * (armor's default is 1.5) makes lists nested in lists expensive while wide,
 * shallow dashboard pages stay cheap. Measured with these weights:
 *   - `{ oauthTokens(first: 100) { edges { node { id client { name } user { email } } } } }`      32 300
 *   - the full token page: every token field, client { id name clientIdentifier },
 *     user { id email name role }, cursor, pageInfo, totalCount (first: 100)                 102 500
 *   - that page and a full callbackRequests(first: 100) page in one request                    133 000
 *   - `oauthClients { …every field… tokens { …every field… user { … } } }`                        221
 *   - rejected: tokens(first: 100) → client → tokens → user (100 × 100 rows)                  170 000
 *   - rejected: two full token pages under two aliases                                        205 000
 *   - rejected: 15 aliased copies of the first query                                          484 500
 * Known gap: lists without `first` (oauthClients, OAuthClient.tokens, at most 100
 * each) count once, so the depth limit is what bounds their nesting.
 *
 * Tokens: graphql-js's own parser limit (Apollo `parseOptions.maxTokens`), so an
 * oversized document fails while parsing with HTTP 400. (armor's max-tokens
 * plugin throws from a hook that Apollo turns into HTTP 500.) The introspection
 * query of Apollo Sandbox is about 190 tokens; the full dashboard query about 75.
 */
export const GRAPHQL_LIMITS = {
  maxDepth: 8,
  maxAliases: 15,
  maxDirectives: 50,
  maxTokens: 1000,
  maxCost: 150_000,
  objectCost: 2,
  scalarCost: 1,
  depthCostFactor: 3,
} as const;

export interface GraphQLLimits {
  plugins: ApolloServerPlugin[];
  validationRules: ValidationRule[];
  parseOptions: ParseOptions;
}

/**
 * Reports a rejection as an ordinary validation error (Apollo answers HTTP 400,
 * code GRAPHQL_VALIDATION_FAILED), without armor's misleading "Syntax Error: " prefix.
 */
const reportRejection: GraphQLArmorRejectCallback = (context, error) => {
  context?.reportError(new GraphQLError(error.message.replace(/^Syntax Error:\s*/, '')));
};

/** Fresh every call: ApolloArmor mutates the configuration it is given. */
export function graphqlLimits(options: { introspection: boolean }): GraphQLLimits {
  const onRejection = () => ({ propagateOnRejection: false, onReject: [reportRejection] });
  const armor = new ApolloArmor({
    // flattenFragments: a fragment counts as the fields it stands for, as if written inline
    maxDepth: { n: GRAPHQL_LIMITS.maxDepth, flattenFragments: true, ...onRejection() },
    maxAliases: { n: GRAPHQL_LIMITS.maxAliases, ...onRejection() },
    maxDirectives: { n: GRAPHQL_LIMITS.maxDirectives, ...onRejection() },
    costLimit: {
      maxCost: GRAPHQL_LIMITS.maxCost,
      objectCost: GRAPHQL_LIMITS.objectCost,
      scalarCost: GRAPHQL_LIMITS.scalarCost,
      depthCostFactor: GRAPHQL_LIMITS.depthCostFactor,
      flattenFragments: true,
      ...onRejection(),
    },
    maxTokens: { enabled: false },
    // With introspection on the schema is public anyway; off, "Did you mean …" would leak it.
    blockFieldSuggestion: { enabled: !options.introspection },
  });
  const { plugins, validationRules } = armor.protect();
  return { plugins, validationRules, parseOptions: { maxTokens: GRAPHQL_LIMITS.maxTokens } };
}
