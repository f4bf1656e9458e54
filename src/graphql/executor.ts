import { execute as interpret, getOperationAST, getVariableValues, GraphQLError, printSchema, valueFromASTUntyped, type DocumentNode, type ExecutionResult, type GraphQLSchema } from 'graphql';
import { compileQuery, isCompiledQuery, type CompiledQuery } from 'graphql-jit';

import type { ApolloServerOptionsWithGateway, BaseContext } from '@apollo/server';
import type { GraphQLExecutorKind } from '../config';

// Operations run by a compiled executor (graphql-jit): each distinct document is
// turned once into a JavaScript function specialised to its selection set, then
// every request runs that function with the same resolvers, authorization
// (@Allow is resolver middleware), object budget and error objects as
// graphql-js's interpreter would. Measured in bench/tuning-log.md.
//
// Used by the REST adapter (its documents are fixed: compiled at start-up) and by
// Apollo through its gateway interface (client documents: compiled on first use,
// kept in a bounded cache keyed by Apollo's hash of the query text).

interface OperationArgs {
  document: DocumentNode;
  operationName?: string | null;
  variableValues?: Record<string, unknown> | null;
  contextValue: unknown;
}

type GatewayInterface = ApolloServerOptionsWithGateway<BaseContext>['gateway'];
type GatewayExecutor = NonNullable<Awaited<ReturnType<GatewayInterface['load']>>['executor']>;

/** Documents whose compilation failed or that graphql-jit does not handle: the interpreter runs them. */
const INTERPRET = Symbol('interpret');
interface Compiled {
  query: CompiledQuery | typeof INTERPRET;
  /** the operation's variable definitions: coerced by graphql-js first, for its exact errors */
  operation: ReturnType<typeof getOperationAST>;
  /**
   * Default values of the operation's variables, as a client would write them
   * (`$all: Boolean! = false`): graphql-jit does not apply them, so a variable left
   * out gets its default here before the compiled query runs.
   */
  defaults: [name: string, value: unknown][];
}

/** Distinct client documents kept compiled per process; past it, the least recently used goes. */
export const COMPILED_CACHE_SIZE = 500;

function compile(schema: GraphQLSchema, document: DocumentNode, operationName: string | null | undefined): Compiled {
  const operation = getOperationAST(document, operationName);
  // no such operation: the interpreter answers with graphql-js's own error
  if (!operation) return { query: INTERPRET, operation, defaults: [] };
  const defaults = (operation.variableDefinitions ?? [])
    .filter((d) => d.defaultValue !== undefined)
    .map((d): [string, unknown] => [d.variable.name.value, valueFromASTUntyped(d.defaultValue!)]);
  try {
    const compiled = compileQuery(schema, document, operationName ?? undefined);
    return { query: isCompiledQuery(compiled) ? compiled : INTERPRET, operation, defaults };
  } catch {
    return { query: INTERPRET, operation, defaults };
  }
}

async function run(schema: GraphQLSchema, compiled: Compiled, args: OperationArgs): Promise<ExecutionResult> {
  const { query, operation } = compiled;
  if (query === INTERPRET || !operation) {
    return interpret({ schema, document: args.document, operationName: args.operationName, variableValues: args.variableValues, contextValue: args.contextValue });
  }
  let variables = args.variableValues ?? {};
  if (operation.variableDefinitions?.length) {
    // graphql-js's coercion errors name the variable's definition node, which is how
    // Apollo recognises them (400 BAD_USER_INPUT); graphql-jit's do not.
    const coerced = getVariableValues(schema, operation.variableDefinitions, variables, { maxErrors: 50 });
    if (coerced.errors) return { errors: coerced.errors };
    for (const [name, value] of compiled.defaults) {
      if (variables[name] === undefined) variables = { ...variables, [name]: value };
    }
  }
  const result = await (query.query(undefined, args.contextValue, variables) as ExecutionResult | Promise<ExecutionResult>);
  return result.errors ? { ...result, errors: result.errors.map(asGraphQLError) } : result;
}

/**
 * graphql-jit's errors inherit from GraphQLError without running its constructor
 * (no `extensions` object, which Apollo's error formatting reads): the same error
 * rebuilt as graphql-js would have made it.
 */
function asGraphQLError(e: GraphQLError): GraphQLError {
  const error = new GraphQLError(e.message, { path: e.path, originalError: e.originalError ?? undefined, extensions: e.extensions ?? undefined });
  (error as { locations?: GraphQLError['locations'] }).locations = e.locations;
  if (e.originalError?.stack) error.stack = e.originalError.stack;
  return error;
}

/**
 * An executor for a fixed set of documents (the REST routes): `prepare` compiles
 * a document once (at start-up), the returned function runs it.
 */
export function prepareOperation(
  schema: GraphQLSchema,
  document: DocumentNode,
  kind: GraphQLExecutorKind = 'compiled',
): (contextValue: unknown, variableValues: Record<string, unknown>) => Promise<ExecutionResult> {
  const compiled: Compiled = kind === 'compiled' ? compile(schema, document, undefined) : { query: INTERPRET, operation: null, defaults: [] };
  return (contextValue, variableValues) => run(schema, compiled, { document, contextValue, variableValues: withoutUndefined(variableValues) as Record<string, unknown> });
}

/**
 * Variables built in JavaScript (the REST routes) may hold `undefined` for a field
 * not given; graphql-js reads that as absent, graphql-jit as null. Dropped here, so
 * that "not given" keeps meaning "keep the current value". (Apollo's variables come
 * from JSON, which has no undefined.)
 */
function withoutUndefined(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutUndefined);
  if (value === null || typeof value !== 'object') return value;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) if (v !== undefined) out[k] = withoutUndefined(v);
  return out;
}

/** A small LRU: a Map keeps insertion order, and a hit moves the key to the end. */
class Lru<V> {
  private readonly map = new Map<string, V>();
  constructor(private readonly max: number) {}
  get(key: string): V | undefined {
    const value = this.map.get(key);
    if (value !== undefined) {
      this.map.delete(key);
      this.map.set(key, value);
    }
    return value;
  }
  set(key: string, value: V): void {
    this.map.set(key, value);
    if (this.map.size > this.max) this.map.delete(this.map.keys().next().value as string);
  }
}

/** A query Apollo has parsed, validated and run: the same text can be run again without its pipeline (http/plugins/graphql.ts). */
export interface KnownQuery {
  document: DocumentNode;
  operationName: string | null;
  /** the operation declares no variables: its cost, checked when Apollo ran it, is the same every time */
  fixedCost: boolean;
  execute: (contextValue: unknown, variableValues: Record<string, unknown>) => Promise<ExecutionResult>;
}

/**
 * Query texts Apollo accepted (parsed within the token limit, validated with every
 * rule of graphql/limits.ts and introspection's), by text and operation name, at most
 * COMPILED_CACHE_SIZE texts, the oldest out first (a hit costs one Map lookup by the
 * text; a text pushed out is learnt again through Apollo). Only queries: a mutation
 * is always Apollo's.
 */
export class KnownQueries {
  private readonly byText = new Map<string, KnownQuery[]>();

  find(text: string, operationName: string | null): KnownQuery | undefined {
    const queries = this.byText.get(text);
    if (queries === undefined) return undefined;
    for (const query of queries) if (query.operationName === operationName) return query;
    return undefined;
  }

  remember(text: string, query: KnownQuery): void {
    const queries = this.byText.get(text);
    if (queries) {
      // a document's operations: at most as many as it names (the token limit bounds them)
      queries.push(query);
      return;
    }
    this.byText.set(text, [query]);
    if (this.byText.size > COMPILED_CACHE_SIZE) this.byText.delete(this.byText.keys().next().value as string);
  }
}

/**
 * Apollo Server's gateway interface, used only to hand it our executor: Apollo
 * still parses, validates (with the limits of graphql/limits.ts), builds the
 * context and formats errors; only execution is ours. Not a federated gateway.
 * The queries it runs are remembered in `known`, when given.
 */
export function compiledExecutorGateway(schema: GraphQLSchema, cacheSize = COMPILED_CACHE_SIZE, known?: KnownQueries): GatewayInterface {
  const cache = new Lru<Compiled>(cacheSize);
  const executor: GatewayExecutor = async (requestContext) => {
    const { document, queryHash } = requestContext;
    // as the client sent it: Apollo's own operationName is null when it named no operation of the document
    const operationName = requestContext.request.operationName ?? null;
    const key = `${queryHash}:${operationName ?? ''}`;
    let compiled = cache.get(key);
    if (compiled === undefined) {
      compiled = compile(schema, document, operationName);
      cache.set(key, compiled);
    }
    const text = requestContext.source;
    if (known && text !== undefined && requestContext.operation?.operation === 'query' && !known.find(text, operationName)) {
      const entry = compiled;
      known.remember(text, {
        document,
        operationName,
        fixedCost: !compiled.operation?.variableDefinitions?.length,
        execute: (contextValue, variableValues) => run(schema, entry, { document, operationName, variableValues, contextValue }),
      });
    }
    return run(schema, compiled, {
      document,
      operationName,
      variableValues: requestContext.request.variables ?? {},
      contextValue: requestContext.context,
    }) as ReturnType<GatewayExecutor>;
  };
  return {
    async load() {
      return { schema, executor };
    },
    onSchemaLoadOrUpdate(callback) {
      callback({ apiSchema: schema, coreSupergraphSdl: printSchema(schema) });
      return () => {};
    },
    async stop() {},
  };
}
