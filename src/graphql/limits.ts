import type { ApolloServerPlugin, BaseContext, GraphQLRequestListener } from '@apollo/server';
import { ApolloArmor } from '@escape.tech/graphql-armor';
import type { GraphQLArmorRejectCallback } from '@escape.tech/graphql-armor-types';
import {
  defaultFieldResolver, getNamedType, getNullableType, GraphQLError, isCompositeType, isListType, isObjectType,
  type DocumentNode, type GraphQLNamedType, type GraphQLOutputType, type GraphQLSchema, type ParseOptions, type ValidationRule,
} from 'graphql';
import { getComplexity, type ComplexityEstimator } from 'graphql-query-complexity';
import { BadRequestError } from '../domain/errors';
import { pageRequest, pageSize, type PageArgs } from '../domain/pagination';
import { contextError } from './errors';

/**
 * Limits on what one GraphQL operation may ask for (docs/api.md, "GraphQL"), enforced before
 * anything executes:
 *   - depth, aliases, directives and field suggestions: graphql-armor's validation rules;
 *   - tokens: graphql-js's own parser limit (Apollo `parseOptions.maxTokens`), so an
 *     oversized document fails while parsing with HTTP 400 (armor's max-tokens plugin
 *     throws from a hook that Apollo turns into HTTP 500);
 *   - cost: graphql-query-complexity (the estimator library type-graphql is built
 *     for), run once the operation and its variables are known.
 *
 * Why not armor's cost limit: it multiplies by `first`/`last` only when they are
 * literals (a `$first` variable counts as 1) and counts a list without arguments
 * (oauthClients, OAuthClient.tokens) once, so the cycle
 * `oauthClients { tokens { client { tokens { client { tokens … } } } } }` passed
 * the depth limit at a tiny cost while it could return 100⁴ objects.
 *
 * Cost model (complexityEstimator below): each field costs 1; a connection field
 * (any field with first/last/page/perPage arguments: oauthTokens, callbackRequests, auditLogs)
 * multiplies its selection by its page size, computed from its arguments (variables
 * resolved) by the very function its resolver pages with (domain/pagination.ts
 * pageRequest: offset `perPage`, keyset `first` or `last`); any other list of
 * objects by 100, the largest page any list field returns. The budget is then
 * roughly "fields in the worst-case answer" (`users` pages like `oauthTokens`; `groups`
 * and `phoneNumbers` take page/perPage and count as a page); 120 000 is about ten thousand objects
 * of a dozen fields. Measured:
 *   - `{ oauthTokens(first: 100) { edges { node { id client { name } user { email } } } } }`        701
 *   - the full token page (every field, client, user, pageInfo, totalCount)                      2 801
 *   - that page and a full callbackRequests(first: 100) page in one request                      4 402
 *   - the full audit log page, auditLogs(first: 100) or (last: 100) (every field, pageInfo, totalCount)  2 401
 *   - `oauthClients { …every field… tokens { …every field… user { … } } }` (100 × 100 tokens)  111 201
 *   - rejected: two of those under aliases                                                      222 402
 *   - rejected: oauthClients → tokens → client → tokens (100³)                               1 020 101
 *   - rejected: oauthTokens(first: $n) → client → tokens → client → tokens, n = 100           1 020 401
 *     (the same with n = 1: 10 205, accepted)
 */
export const GRAPHQL_LIMITS = {
  maxDepth: 8,
  maxAliases: 15,
  maxDirectives: 50,
  maxTokens: 1000,
  maxCost: 120_000,
  /** the largest page of any list field (connections clamp `first`/`last` to it) */
  listSize: 100,
} as const;

export interface GraphQLLimits {
  plugins: ApolloServerPlugin[];
  /**
   * Whether an operation with these variables is within the cost budget (the check
   * the plugin makes; costs cached the same way); undefined when the variables do
   * not fit the operation (Apollo's own check answers that).
   */
  withinCost: CostCheck;
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
export function graphqlLimits(): GraphQLLimits {
  const onRejection = () => ({ propagateOnRejection: false, onReject: [reportRejection] });
  const armor = new ApolloArmor({
    // flattenFragments: a fragment counts as the fields it stands for, as if written inline
    maxDepth: { n: GRAPHQL_LIMITS.maxDepth, flattenFragments: true, ...onRejection() },
    maxAliases: { n: GRAPHQL_LIMITS.maxAliases, ...onRejection() },
    maxDirectives: { n: GRAPHQL_LIMITS.maxDirectives, ...onRejection() },
    costLimit: { enabled: false }, // see complexityLimit()
    maxTokens: { enabled: false },
    // "Did you mean …" would leak the schema when introspection is off: the error
    // formatter removes it (createFormatError), without a plugin listener on every request.
    blockFieldSuggestion: { enabled: false },
  });
  const { plugins, validationRules } = armor.protect();
  const { plugin, withinCost } = complexityLimit();
  return { plugins: [...plugins, plugin], withinCost, validationRules, parseOptions: { maxTokens: GRAPHQL_LIMITS.maxTokens } };
}

const PAGE_ARGS = new Set(['first', 'last', 'page', 'perPage']);

/** Records a connection can return for these arguments; arguments its resolver refuses return none, counted as a full page. */
function connectionSize(args: Record<string, unknown>): number {
  try {
    return pageSize(pageRequest(args as PageArgs));
  } catch {
    return GRAPHQL_LIMITS.listSize;
  }
}

function listOfObjects(type: GraphQLOutputType): boolean {
  const inner = getNullableType(type);
  return isListType(inner) && isCompositeType(getNamedType(inner));
}

/** Worst-case size of the answer, field by field (see the cost model above). */
const complexityEstimator: ComplexityEstimator = ({ type, field, args, childComplexity }) => {
  const { listSize } = GRAPHQL_LIMITS;
  // Introspection (__schema, __type and the fields of their __ types) answers with the schema
  // itself, whose size is fixed: its lists are as long as the schema's, not pages of records.
  // Priced as 100 each, Sandbox's and GraphiQL's introspection query cost ~37 million.
  if (type.name.startsWith('__') || field.name.startsWith('__')) return 1 + childComplexity;
  if (field.args.some((a) => PAGE_ARGS.has(a.name))) return 1 + connectionSize(args) * childComplexity;
  // A connection's edges are the page already counted on the connection field.
  if (type.name.endsWith('Connection') && field.name === 'edges') return 1 + childComplexity;
  return 1 + (listOfObjects(field.type) ? listSize : 1) * childComplexity;
};

export function operationCost(schema: GraphQLSchema, query: DocumentNode, variables?: Record<string, unknown>, operationName?: string): number {
  return getComplexity({ schema, query, variables, operationName, estimators: [complexityEstimator] });
}

// Costs remembered per document (Apollo hands back the same parsed document for
// a query it has seen) and per operation name + variables: a dashboard repeating
// its queries is not costed again. Bounded: variables over 512 characters are
// costed every time, and a document keeps at most 64 variable sets.
const MAX_COST_KEY = 512;
const MAX_COSTS_PER_DOCUMENT = 64;

export type CostCheck = (schema: GraphQLSchema, document: DocumentNode, variables?: Record<string, unknown>, operationName?: string) => boolean | undefined;

/**
 * Refuses an operation whose worst-case answer is over the budget, with HTTP 400
 * and code BAD_REQUEST, before it runs. One per server (its cost cache holds that
 * server's documents).
 */
function complexityLimit(): { plugin: ApolloServerPlugin; withinCost: CostCheck } {
  const costs = new WeakMap<DocumentNode, Map<string, number>>();
  const costOf = (schema: GraphQLSchema, document: DocumentNode, variables?: Record<string, unknown>, operationName?: string) => {
    const key = `${operationName ?? ''}\u0000${JSON.stringify(variables ?? {})}`;
    if (key.length > MAX_COST_KEY) return operationCost(schema, document, variables, operationName);
    let known = costs.get(document);
    const cached = known?.get(key);
    if (cached !== undefined) return cached;
    const cost = operationCost(schema, document, variables, operationName);
    if (!known) costs.set(document, (known = new Map()));
    if (known.size >= MAX_COSTS_PER_DOCUMENT) known.clear();
    known.set(key, cost);
    return cost;
  };
  const listener: GraphQLRequestListener<BaseContext> = {
    async didResolveOperation({ request, document, schema }) {
      let cost: number;
      try {
        cost = costOf(schema, document, request.variables, request.operationName ?? undefined);
      } catch {
        return; // variables that do not fit the operation: Apollo's own check answers 400
      }
      if (cost > GRAPHQL_LIMITS.maxCost) {
        throw contextError(new BadRequestError(`Query cost limit of ${GRAPHQL_LIMITS.maxCost} exceeded, found ${cost}.`));
      }
    },
  };
  const withinCost: CostCheck = (schema, document, variables, operationName) => {
    try {
      return costOf(schema, document, variables, operationName) <= GRAPHQL_LIMITS.maxCost;
    } catch {
      return undefined;
    }
  };
  return {
    plugin: {
      async requestDidStart() {
        return listener;
      },
    },
    withinCost,
  };
}

/** Objects (records, connections, edges, list items) an operation resolved so far; kept in its context. */
export interface ObjectCount {
  count: number;
  exceeded: boolean;
}

class CostLimitExceededError extends BadRequestError {
  constructor() {
    super(`Query cost limit of ${GRAPHQL_LIMITS.maxCost} exceeded while running; ask for fewer or smaller pages`);
  }
}

function spend(counter: ObjectCount, value: unknown, weight: number): unknown {
  counter.count += weight * (Array.isArray(value) ? value.length : value === null || value === undefined ? 0 : 1);
  if (counter.count > GRAPHQL_LIMITS.maxCost) {
    counter.exceeded = true;
    throw new CostLimitExceededError();
  }
  return value;
}

/**
 * Defence in depth behind the cost estimate: every field that returns objects
 * counts what it returned in the operation's context, and once the operation has
 * resolved more objects than the cost budget (each object costs at least 1 in the
 * estimate, so an operation whose estimate is right never gets there) every
 * further object field fails at once with the cost-limit error, and the answer
 * carries no data (responseHead: HTTP 400). Wraps the schema's resolvers once, at
 * start-up; scalar fields are not touched.
 */
export function limitResolvedObjects(schema: GraphQLSchema): void {
  // An edge's node is a plain property of the edge, there when the edge is: the
  // edges list counts each of its edges as two objects (the edge and its node), and
  // `node` keeps the default resolver, so that reading it costs no resolver call
  // (100 per page).
  const plainNode = (type: GraphQLNamedType) =>
    isObjectType(type) && type.name.endsWith('Edge') && type.getFields().node !== undefined && type.getFields().node.resolve === undefined;
  for (const type of Object.values(schema.getTypeMap())) {
    if (!isObjectType(type) || type.name.startsWith('__')) continue;
    const nodeCounted = plainNode(type);
    for (const field of Object.values(type.getFields())) {
      const named = getNamedType(field.type);
      if (!isCompositeType(named)) continue;
      if (nodeCounted && field.name === 'node') continue;
      const weight = plainNode(named) ? 2 : 1;
      const resolve = field.resolve ?? defaultFieldResolver;
      field.resolve = (source, args, context: { objects?: ObjectCount }, info) => {
        const counter = (context.objects ??= { count: 0, exceeded: false });
        if (counter.exceeded) throw new CostLimitExceededError();
        const result = resolve(source, args, context, info);
        return result instanceof Promise ? result.then((value) => spend(counter, value, weight)) : spend(counter, result, weight);
      };
    }
  }
}
