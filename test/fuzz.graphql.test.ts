import fc from 'fast-check';
import {
  astFromValue,
  getNamedType,
  isEnumType,
  isInputObjectType,
  isLeafType,
  isListType,
  isNonNullType,
  isNullableType,
  isObjectType,
  parse,
  print,
  validate,
  type GraphQLArgument,
  type GraphQLField,
  type GraphQLInputType,
  type GraphQLOutputType,
} from 'graphql';
import type { InjectOptions } from 'fastify';
import { buildGraphQLSchema } from '../src/graphql/schema';
import { GRAPHQL_LIMITS, operationCost } from '../src/graphql/limits';
import { BODY_LIMIT } from '../src/http/plugins/errors';
import {
  auditLogFilterSpec, webhookSpec, apiTokenSpec,
  callbackRequestSpec,
  directorySpecs,
  createFuzzFixture,
  deepArray,
  describeResponse,
  expectNothingWrittenOrLogged,
  DupObject,
  forbiddenEverywhere,
  graphqlProblems,
  hostileJson,
  hostileKey,
  hostileNumber,
  hostileString,
  invalidIdValue,
  invalidObject,
  JUST_OVER_LIMIT_BODY,
  oauthClientSpec,
  oauthTokenSpec,
  pct,
  pollutingBody,
  RawJson,
  runs,
  scopeMismatch,
  Sender,
  toJson,
  unauthenticated,
  validObject,
  type FuzzFixture,
  type GraphQLOutcome,
  type ObjectSpec,
} from './helpers/fuzz';

// Issue 7 item 1, GraphQL half: every Query and Mutation field of the schema
// (read from the resolvers, so a new field is fuzzed without touching this
// file) gets hostile variables — wrong types, huge ints, NUL and lone
// surrogates, arrays where objects belong, unknown fields, duplicate keys —,
// hostile credentials and hostile documents, and /graphql itself gets hostile
// HTTP bodies. Never a 5xx, never INTERNAL_SERVER_ERROR, only the codes of
// docs/api.md, "Errors" (and Apollo's own for malformed operations), nothing internal in
// the answer, nothing logged at error level, and the database unchanged.

// Each property loops over every operation (route): its time grows with the API, and a
// full parallel run on 2 cores roughly doubles it.
jest.setTimeout(300_000);

const schema = buildGraphQLSchema();

interface Op {
  kind: 'query' | 'mutation';
  name: string;
  field: GraphQLField<unknown, unknown>;
}

const OPS: Op[] = [
  ...Object.values(schema.getQueryType()!.getFields()).map((field) => ({ kind: 'query' as const, name: field.name, field })),
  ...Object.values(schema.getMutationType()!.getFields()).map((field) => ({ kind: 'mutation' as const, name: field.name, field })),
];
const withArgs = (ops: Op[]) => ops.filter((o) => o.field.args.length > 0);

/** A token may always show and revoke itself: scopes do not apply (docs/api.md, "Scopes and roles"). */
const SELF_OPS = new Set(['currentOAuthToken', 'revokeCurrentOAuthToken']);

/**
 * The record each top-level ID argument names, to pick a live id of the
 * caller's account ("own") or of another account ("foreign"). An ID argument
 * missing here fails the first test: add it when adding the field.
 */
type Entity = 'client' | 'token' | 'phoneNumber' | 'group' | 'user' | 'auditLog' | 'webhook' | 'invocation' | 'membership' | 'callback' | 'app' | 'apiToken';
const ID_ARGS: Record<string, Entity> = {
  'oauthClient.id': 'client',
  'updateOAuthClient.id': 'client',
  'deleteOAuthClient.id': 'client',
  'generateOAuthClientSecret.id': 'client',
  'endOAuthClientSecretGracePeriod.id': 'client',
  'oauthToken.id': 'token',
  'revokeOAuthToken.id': 'token',
  // an entry of the admin's authorized apps (token-<id>)
  'revokeAuthorizedApp.id': 'app',
  'oauthTokens.clientId': 'client',
  'callbackRequests.phoneNumberId': 'phoneNumber',
  'callbackRequests.agentId': 'user',
  'callbackRequest.id': 'callback',
  'acceptCallbackRequest.id': 'callback',
  'declineCallbackRequest.id': 'callback',
  'reportCallbackOutcome.id': 'callback',
  'cancelCallbackRequest.id': 'callback',
  // the fixture's user is an agent
  'agentAvailability.agentId': 'user',
  'setAgentAvailability.agentId': 'user',
  'user.id': 'user',
  'updateUser.id': 'user',
  'deleteUser.id': 'user',
  'setUserPassword.id': 'user',
  'group.id': 'group',
  'updateGroup.id': 'group',
  'deleteGroup.id': 'group',
  'groupMembership.id': 'membership',
  'deleteGroupMembership.id': 'membership',
  'groupMemberships.groupId': 'group',
  'groupMemberships.userId': 'user',
  'groupMembershipCount.groupId': 'group',
  'groupMembershipCount.userId': 'user',
  'phoneNumber.id': 'phoneNumber',
  'updatePhoneNumber.id': 'phoneNumber',
  'deletePhoneNumber.id': 'phoneNumber',
  'auditLog.id': 'auditLog',
  'webhook.id': 'webhook',
  'webhookSigningSecret.id': 'webhook',
  'updateWebhook.id': 'webhook',
  'deleteWebhook.id': 'webhook',
  'resetWebhookSigningSecret.id': 'webhook',
  'testWebhook.id': 'webhook',
  'webhookInvocations.webhookId': 'webhook',
  'webhookInvocationAttempts.webhookId': 'webhook',
  'webhookInvocationAttempts.invocationId': 'invocation',
  'apiToken.id': 'apiToken',
  'deleteApiToken.id': 'apiToken',
};
const FOREIGN: Record<Entity, `other${Capitalize<Entity>}`> = {
  client: 'otherClient', token: 'otherToken', phoneNumber: 'otherPhoneNumber', group: 'otherGroup', user: 'otherUser', auditLog: 'otherAuditLog', webhook: 'otherWebhook', invocation: 'otherInvocation',
  membership: 'otherMembership', callback: 'otherCallback', app: 'otherApp', apiToken: 'otherApiToken',
};

/** Field rules of each input object type (test/helpers/fuzz.ts). A type missing here fails the first test. */
function inputSpecs(fx: FuzzFixture): Record<string, ObjectSpec> {
  return {
    OAuthClientInput: oauthClientSpec(), CreateOAuthTokenInput: oauthTokenSpec(fx), CallbackRequestInput: callbackRequestSpec(fx), AuditLogFilter: auditLogFilterSpec(fx), WebhookInput: webhookSpec(), ApiTokenInput: apiTokenSpec(),
    ...directorySpecs(fx),
  };
}

// ---------------------------------------------------------------------------
// Documents

/** A selection set for an output type: some leaf fields, maybe one nested object (depth ≤ 2 below the root). */
function selection(type: GraphQLOutputType, depth = 0): fc.Arbitrary<string> {
  const named = getNamedType(type);
  if (isLeafType(named)) return fc.constant('');
  if (!isObjectType(named)) return fc.constant('{ __typename }');
  const fields = Object.values(named.getFields()).filter((f) => f.args.every((a) => !isNonNullType(a.type)));
  const leaves = fields.filter((f) => isLeafType(getNamedType(f.type))).map((f) => f.name);
  const objects = fields.filter((f) => isObjectType(getNamedType(f.type)));
  const nested = depth < 2 && objects.length
    ? fc.option(fc.constantFrom(...objects).chain((f) => selection(f.type, depth + 1).map((s) => `${f.name} ${s}`)), { nil: undefined })
    : fc.constant(undefined);
  return fc.tuple(fc.subarray(['__typename', ...leaves], { minLength: 1 }), nested).map(([ls, n]) => `{ ${[...ls, ...(n ? [n] : [])].join(' ')} }`);
}

/** A non-null argument with a default (`all: Boolean! = false`) may be left out, never null. */
const hasDefault = (a: GraphQLArgument) => a.defaultValue !== undefined;

/**
 * `mutation Fuzz($id: ID!) { deleteOAuthClient(id: $id) }`: every argument passed as a
 * variable of its exact type, with the argument's default (`$all: Boolean! = false`).
 */
function document(op: Op): fc.Arbitrary<string> {
  const args = op.field.args;
  const variable = (a: GraphQLArgument) => `$${a.name}: ${String(a.type)}${hasDefault(a) ? ` = ${print(astFromValue(a.defaultValue, a.type)!)}` : ''}`;
  const defs = args.length ? `(${args.map(variable).join(', ')})` : '';
  const pass = args.length ? `(${args.map((a) => `${a.name}: $${a.name}`).join(', ')})` : '';
  // Within the cost budget even at the largest page size (variables left out count
  // as 100), so that what is judged is the property at hand, not the budget.
  return selection(op.field.type)
    .filter((sel) => withinBudget(`${op.kind} { ${op.name} ${sel} }`))
    .map((sel) => `${op.kind} Fuzz${defs} { ${op.name}${pass} ${sel} }`);
}

/** The cost of a selection with its arguments left out (page sizes at their largest). */
function withinBudget(doc: string): boolean {
  try {
    return operationCost(schema, parse(doc)) <= GRAPHQL_LIMITS.maxCost;
  } catch {
    return true; // a required argument left out: a lookup by id, far below the budget
  }
}

// ---------------------------------------------------------------------------
// Variables

/** Leave the variable (or input field) out. */
const OMIT = Symbol('omit');

/** Values that coerce to the type (graphql-js input coercion), hostile in content. */
function wellTyped(type: GraphQLInputType, fx: FuzzFixture): fc.Arbitrary<unknown> {
  if (isNonNullType(type)) return wellTyped(type.ofType, fx);
  const orNull = (a: fc.Arbitrary<unknown>) => fc.oneof({ weight: 5, arbitrary: a }, { weight: 1, arbitrary: fc.constant(null) });
  if (isListType(type)) return orNull(fc.oneof(fc.array(wellTyped(type.ofType, fx), { maxLength: 3 }), wellTyped(type.ofType, fx)));
  if (isEnumType(type)) return orNull(fc.constantFrom(...type.getValues().map((v) => v.name)));
  if (isInputObjectType(type)) {
    const fields = Object.values(type.getFields());
    return orNull(fc.tuple(...fields.map((f) => fc.option(wellTyped(f.type, fx), { nil: OMIT }))).map((vals) => new DupObject(fields.map((f, i) => [f.name, vals[i]] as [string, unknown]).filter(([, v]) => v !== OMIT))));
  }
  switch (type.name) {
    case 'ID':
      return orNull(fc.oneof(invalidIdValue(fx.ids.otherClient), fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 })));
    case 'Int':
      return orNull(fc.oneof(fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 }), fc.constantFrom(0, -1, 2 ** 31 - 1, -(2 ** 31))));
    case 'Float':
      return orNull(fc.double({ noNaN: true, noDefaultInfinity: true }));
    case 'Boolean':
      return orNull(fc.boolean());
    default:
      return orNull(hostileString);
  }
}

/** Values graphql-js must refuse while coercing variables (→ 400 BAD_USER_INPUT before anything runs). */
function wrongTyped(type: GraphQLInputType, fx: FuzzFixture): fc.Arbitrary<unknown> {
  if (isNonNullType(type)) return fc.oneof(fc.constant(OMIT), fc.constant(null), wrongTyped(type.ofType, fx));
  const noOmit = (a: fc.Arbitrary<unknown>) => a.map((v) => (v === OMIT ? null : v));
  if (isListType(type)) {
    const inner = noOmit(wrongTyped(type.ofType, fx));
    // A single value is coerced into a one-element list, so a wrong item is wrong either way.
    // (A wrong single value must not itself be a list: ["a", "b"] is no String but is a [String!].)
    return fc.oneof(inner.filter((v) => v !== null && !Array.isArray(v)), fc.tuple(fc.array(wellTyped(type.ofType, fx).filter((v) => v !== null || isNullableType(type.ofType)), { maxLength: 2 }), inner).map(([good, bad]) => [...good, bad]));
  }
  const objects = fc.constantFrom<unknown>({}, { id: 1 }, { __typename: 'X' }, [1, 2], [{ a: 1 }]);
  if (isEnumType(type)) {
    const names = type.getValues().map((v) => v.name);
    return fc.oneof(
      hostileString.filter((s) => !names.includes(s)),
      fc.constantFrom(...names.map((n) => n.toLowerCase())).filter((s) => !names.includes(s)),
      fc.constantFrom<unknown>(0, 1, true),
      objects,
    );
  }
  if (isInputObjectType(type)) {
    const fields = Object.values(type.getFields());
    const names = fields.map((f) => f.name);
    return fc.oneof(
      // not an object at all (an empty array would pass: graphql-js reads [] as an object without fields)
      fc.oneof(hostileString, hostileNumber, fc.boolean(), fc.constantFrom<unknown>([1], ['x', 'y'], [[]])),
      // a field the type does not have
      fc.tuple(hostileKey.filter((k) => !names.includes(k)), hostileJson).map(([k, v]) => new DupObject([[k, v]])),
      // one known field of the wrong type (the last of a repeated key counts)
      fc.constantFrom(...fields).chain((f) =>
        fc.tuple(noOmit(wrongTyped(f.type, fx)), fc.boolean()).map(([bad, dup]) => new DupObject(dup ? [[f.name, null], [f.name, bad]] : [[f.name, bad]])),
      ),
    );
  }
  switch (type.name) {
    case 'ID':
      // Strings and integers are IDs; anything else is not.
      return fc.oneof(fc.constantFrom<unknown>(1.5, -0.5, 1e-7, true, false, new RawJson('1e400'), new RawJson('-1e400'), new RawJson('1.5')), objects, fc.double({ noNaN: true, noDefaultInfinity: true }).filter((d) => !Number.isInteger(d)));
    case 'Int':
      return fc.oneof(
        fc.constantFrom<unknown>('1', '0', '', 1.5, 2 ** 31, -(2 ** 31) - 1, 2 ** 53, 1e300, true, new RawJson('1e400'), new RawJson('9223372036854775808'), new RawJson('1.0000001')),
        fc.integer({ min: 2 ** 31, max: Number.MAX_SAFE_INTEGER }),
        fc.integer({ min: Number.MIN_SAFE_INTEGER, max: -(2 ** 31) - 1 }),
        objects,
        hostileString,
      );
    case 'Boolean':
      return fc.oneof(fc.constantFrom<unknown>(0, 1, 'true', 'false', ''), objects);
    case 'String':
      return fc.oneof(hostileNumber, fc.boolean(), objects, fc.constant(['a', 'b']));
    default:
      return fc.oneof(hostileNumber, fc.boolean(), objects);
  }
}

/** Variables as JSON text: OMIT members left out, raw literals and repeated keys kept. */
function variablesJson(args: readonly GraphQLArgument[], values: unknown[]): string {
  return toJson(new DupObject(args.map((a, i) => [a.name, values[i]] as [string, unknown]).filter(([, v]) => v !== OMIT)));
}

const post = (query: string, variablesText: string | undefined, headers: Record<string, string>): InjectOptions => ({
  method: 'POST',
  url: '/graphql',
  headers: { 'content-type': 'application/json', ...headers },
  payload: `{"query":${JSON.stringify(query)}${variablesText === undefined ? '' : `,"variables":${variablesText}`}}`,
});

/** Is the document valid GraphQL for the schema? (armor's depth/alias/cost limits aside) */
function locallyValid(query: string): boolean {
  try {
    return validate(schema, parse(query, { maxTokens: 1000 })).length === 0;
  } catch {
    return false;
  }
}

describe('GraphQL fuzzing: hostile operations never get a 5xx (issue 7)', () => {
  let fx: FuzzFixture;
  let sender: Sender;
  let specs: Record<string, ObjectSpec>;
  const started = Date.now();

  beforeAll(async () => {
    fx = await createFuzzFixture();
    sender = new Sender(fx.ctx);
    specs = inputSpecs(fx);
  });
  afterAll(() => fx.ctx.close());

  // After every property: nothing written, nothing logged at error level.
  expectNothingWrittenOrLogged(() => fx.ctx);

  /**
   * Sends, checks what every answer must be (graphqlProblems) plus `expectation`,
   * and throws a readable message for fast-check to report with its seed.
   */
  async function sendChecked(opts: InjectOptions, expectation: (o: GraphQLOutcome) => string | undefined) {
    const res = await sender.send(opts);
    const requestText = `${opts.url} ${JSON.stringify(opts.headers ?? {})} ${Buffer.isBuffer(opts.payload) ? opts.payload.toString('latin1') : String(opts.payload ?? '')}`;
    const { problems, outcome } = graphqlProblems(res, requestText);
    // Generated values may together pass the body limit (a long string in each of several
    // fields): whatever the operation, such a body is refused first, with 413 PayloadTooLarge.
    const tooLarge = Buffer.byteLength(typeof opts.payload === 'string' || Buffer.isBuffer(opts.payload) ? opts.payload : '') > BODY_LIMIT;
    const expected = tooLarge ? (outcome.status === 413 && outcome.envelope ? undefined : `status ${outcome.status} for a body over ${BODY_LIMIT} bytes, expected 413`) : expectation(outcome);
    if (expected) problems.push(expected);
    if (problems.length) throw new Error(`${opts.method} ${String(opts.url).slice(0, 200)} ${String(opts.payload ?? '').slice(0, 400)}\n  ${problems.join('; ')}\n  answer: ${describeResponse(res)}`);
    return outcome;
  }

  /** A refusal: errors, each with one of `codes`, and no data for the field. */
  const refused = (field: string, codes: string[]) => (o: GraphQLOutcome) => {
    if (o.envelope) return codes.includes('BAD_REQUEST') ? undefined : 'an HTTP-level refusal where a GraphQL error was expected';
    if (!o.codes.length) return 'no errors';
    if (!o.codes.every((c) => codes.includes(c))) return `codes ${o.codes.join(', ')}, expected ${codes.join(' or ')}`;
    if (o.body?.data != null && o.body.data[field] != null) return `data.${field} is not null`;
    return undefined;
  };

  it('knows every operation: each ID argument names a record kind, each input type has field rules', () => {
    expect(OPS.length).toBeGreaterThanOrEqual(17);
    for (const op of OPS) {
      for (const arg of op.field.args) {
        const named = getNamedType(arg.type);
        if (named.name === 'ID') expect([`${op.name}.${arg.name}`, ID_ARGS[`${op.name}.${arg.name}`] !== undefined]).toEqual([`${op.name}.${arg.name}`, true]);
        if (isInputObjectType(named)) expect([named.name, specs[named.name] !== undefined]).toEqual([named.name, true]);
      }
    }
  });

  it('refuses variables of the wrong type for every argument of every operation with 400 BAD_USER_INPUT, signed in or not', async () => {
    for (const op of withArgs(OPS)) {
      const args = op.field.args;
      const values = fc.integer({ min: 0, max: args.length - 1 }).chain((bad) =>
        fc.tuple(...args.map((a, i) => (i === bad ? wrongTyped(a.type, fx).filter((v) => !(hasDefault(a) && v === OMIT)) : isNonNullType(a.type) ? wellTyped(a.type, fx).filter((v) => v !== null) : fc.option(wellTyped(a.type, fx), { nil: OMIT })))),
      );
      await fc.assert(
        // (Variables are coerced before any resolver runs: the caller's credentials make no difference.)
        fc.asyncProperty(document(op), values, fc.constantFrom(fx.auth.admin, undefined), async (query, vals, authorization) => {
          await sendChecked(post(query, variablesJson(args, vals), authorization ? { authorization } : {}), (o) => {
            if (o.status !== 400) return `status ${o.status}, expected 400`;
            if (!o.codes.length || !o.codes.every((c) => c === 'BAD_USER_INPUT')) return `codes ${o.codes.join(', ')}, expected BAD_USER_INPUT`;
            return o.body && 'data' in o.body ? 'data present' : undefined;
          });
        }),
        { numRuns: runs(110) },
      );
    }
  });

  /** For each argument: a good value (a live id of the caller's, a valid input) or a bad one (an id naming nothing of the caller's, an input with an invalid field). */
  function argumentValue(op: Op, arg: GraphQLArgument, bad: boolean): fc.Arbitrary<unknown> {
    const named = getNamedType(arg.type);
    const entity = ID_ARGS[`${op.name}.${arg.name}`];
    if (entity) {
      if (!bad) return fc.constant(fx.ids[entity]);
      const foreign = fx.ids[FOREIGN[entity]];
      return fc.oneof(invalidIdValue(foreign), fc.constant(foreign));
    }
    if (isInputObjectType(named)) return bad ? invalidObject(specs[named.name], { noise: false }).map((o) => o.body) : validObject(specs[named.name]);
    const value = wellTyped(arg.type, fx).filter((v) => v !== null || !isNonNullType(arg.type));
    // a required argument is always given (reportCallbackOutcome's outcome); an optional one may be left out
    return isNonNullType(arg.type) ? value : fc.option(value, { nil: OMIT });
  }

  it('refuses every mutation whose ids name nothing of the caller\'s or whose input is invalid: NOT_FOUND / BAD_USER_INPUT, nothing written', async () => {
    const mutations = withArgs(OPS.filter((o) => o.kind === 'mutation'));
    expect(mutations.length).toBeGreaterThanOrEqual(6);
    for (const op of mutations) {
      const args = op.field.args;
      const decisive = args.map((a, i) => (ID_ARGS[`${op.name}.${a.name}`] || isInputObjectType(getNamedType(a.type)) ? i : -1)).filter((i) => i >= 0);
      expect([op.name, decisive.length > 0]).toEqual([op.name, true]);
      // At least one decisive argument bad, the others good or bad.
      const values = fc.tuple(fc.constantFrom(...decisive), fc.array(fc.boolean(), { minLength: args.length, maxLength: args.length })).chain(([forced, flags]) =>
        fc.tuple(...args.map((a, i) => argumentValue(op, a, i === forced || (decisive.includes(i) && flags[i])))),
      );
      await fc.assert(
        fc.asyncProperty(document(op), values, async (query, vals) => {
          await sendChecked(post(query, variablesJson(args, vals), { authorization: fx.auth.admin }), refused(op.name, ['NOT_FOUND', 'BAD_USER_INPUT']));
        }),
        { numRuns: runs(140) },
      );
    }
  });

  it('answers hostile but well-typed arguments of every query without a 5xx: a lookup of a bad id is null', async () => {
    for (const op of withArgs(OPS.filter((o) => o.kind === 'query'))) {
      const args = op.field.args;
      const lookup = args.length === 1 && ID_ARGS[`${op.name}.${args[0].name}`] !== undefined && isNullableType(op.field.type);
      const values = fc.tuple(...args.map((a) => (ID_ARGS[`${op.name}.${a.name}`] ? argumentValue(op, a, true) : isNonNullType(a.type) ? wellTyped(a.type, fx).filter((v) => v !== null) : fc.option(wellTyped(a.type, fx), { nil: OMIT }))));
      await fc.assert(
        fc.asyncProperty(document(op), values, async (query, vals) => {
          await sendChecked(post(query, variablesJson(args, vals), { authorization: fx.auth.admin }), (o) => {
            if (lookup) return o.codes.length ? `codes ${o.codes.join(', ')} for a lookup` : o.body?.data?.[op.name] === null ? undefined : `data.${op.name} is not null`;
            const allowed = ['BAD_REQUEST', 'BAD_USER_INPUT', 'NOT_FOUND', 'GRAPHQL_VALIDATION_FAILED'];
            return o.codes.every((c) => allowed.includes(c)) ? undefined : `codes ${o.codes.join(', ')}`;
          });
        }),
        { numRuns: runs(100) },
      );
    }
  });

  it('refuses bad or insufficient credentials on every operation, even with valid arguments behind them', async () => {
    for (const op of OPS) {
      const access = op.kind === 'query' ? 'read' : 'write';
      const faults = SELF_OPS.has(op.name)
        ? fc.oneof(unauthenticated(fx), forbiddenEverywhere(fx))
        : fc.oneof(unauthenticated(fx), forbiddenEverywhere(fx), scopeMismatch(fx, access));
      const args = op.field.args;
      const values = fc.tuple(...args.map((a) => argumentValue(op, a, false)));
      await fc.assert(
        fc.asyncProperty(faults, document(op), values, async (fault, query, vals) => {
          const code = fault.expect === 401 ? 'UNAUTHENTICATED' : 'FORBIDDEN';
          await sendChecked(post(query, args.length ? variablesJson(args, vals) : undefined, fault.headers), refused(op.name, [code]));
        }),
        { numRuns: runs(70) },
      );
    }
  });

  /** Documents that are not valid GraphQL, or break the limits in docs/api.md, "GraphQL". */
  const badDocument: fc.Arbitrary<{ kind: string; query: string }> = fc.oneof(
    // A valid operation cut short.
    fc.constantFrom(...OPS).chain((op) => fc.tuple(document(op), fc.nat()).map(([q, n]) => ({ kind: 'truncated', query: q.slice(0, n % q.length) }))),
    fc.oneof(hostileString, fc.string({ unit: 'binary', maxLength: 80 }), fc.string({ unit: fc.constantFrom(...'{}()[]$@!:=.,"# \n\tqueryfragmenton'.split('')), maxLength: 60 }))
      .map((query) => ({ kind: 'garbage', query })),
    fc.constantFrom(...OPS).chain((op) => {
      const sel = isLeafType(getNamedType(op.field.type)) ? '' : '{ __typename }';
      const args = op.field.args;
      const required = args.filter((a) => isNonNullType(a.type) && !hasDefault(a));
      const lit = (a: GraphQLArgument, v: string) => `(${a.name}: ${v})`;
      const cases = [
        `${op.kind} { ${op.name} ${sel} nope }`,
        `${op.kind} { ${op.name}(nope: 1) ${sel} }`,
        sel ? `${op.kind} { ${op.name} { __typename { x } } }` : `${op.kind} { ${op.name} { x } }`,
        sel ? `${op.kind} { ${op.name} }` : `${op.kind} { ${op.name} { __typename } }`,
        `${op.kind} Q($unused: Int) { ${op.name}${required.length ? `(${required.map((a) => `${a.name}: $missing`).join(', ')})` : ''} ${sel} }`,
        `${op.kind} A { ${op.name}${required.length ? `(${required.map((a) => `${a.name}: ${String(getNamedType(a.type)) === 'ID' ? '"1"' : '{}'}`).join(', ')})` : ''} ${sel} } ${op.kind} A { __typename }`,
        `${op.kind} @nope { ${op.name} ${sel} }`,
        `${op.kind} { ${op.name} ${sel} __typename @skip(if: "yes") }`,
        `subscription { ${op.name} ${sel} }`,
        `${op.kind} { ...F } fragment F on ${op.kind === 'query' ? 'Query' : 'Mutation'} { ...G } fragment G on ${op.kind === 'query' ? 'Query' : 'Mutation'} { ...F }`,
        `${op.kind} { ...Missing }`,
        `${op.kind} { ${op.name} ${sel ? `{ ${'__typename '.repeat(1001)}}` : ''} ${sel ? '' : '__typename '.repeat(1001)} }`,
        `${op.kind} ${'{ __typename '.repeat(4000)}${'}'.repeat(4000)}`,
      ];
      for (const a of required) {
        cases.push(`${op.kind} { ${op.name} ${sel} }`); // required argument missing
        const named = String(getNamedType(a.type));
        for (const v of named === 'ID' ? ['1.5', 'true', '{a: 1}', '[1]', 'null', 'FOO'] : ['1', '"x"', '[[1]]', 'null', '{nope: 1}', '{name: 1}']) cases.push(`${op.kind} { ${op.name}${lit(a, v)} ${sel} }`);
        cases.push(`${op.kind} V($v: String!) { ${op.name}(${a.name}: $v) ${sel} }`.replace('String!', named === 'String' ? 'Int!' : 'String!'));
      }
      return fc.constantFrom(...cases).map((query) => ({ kind: 'invalid operation', query }));
    }),
    // More than 15 aliases (docs/api.md, "GraphQL"; aliases of __typename are free).
    fc.integer({ min: 16, max: 60 }).map((n) => ({ kind: 'too many aliases', query: `query { ${Array.from({ length: n }, (_, i) => `a${i}: me { id }`).join(' ')} }` })),
    // Too deep for docs/api.md, "GraphQL" (depth ≤ 8): tokens → client → tokens → … on valid fields.
    fc.integer({ min: 9, max: 40 }).map((depth) => {
      let inner = 'id';
      for (let i = 0; i < depth; i++) inner = i % 2 ? `client { ${inner} }` : `tokens { ${inner} }`;
      return { kind: 'too deep', query: `query { oauthClients { ${inner} } }` };
    }),
  );

  it('refuses invalid documents, and documents over the limits, with 400 (parse/validation codes)', async () => {
    await fc.assert(
      fc.asyncProperty(badDocument, fc.constantFrom(fx.auth.admin, undefined), async ({ kind, query }, authorization) => {
        // Only what graphql-js itself refuses, plus the documents built to break the limits.
        fc.pre(kind === 'too deep' || kind === 'too many aliases' || !locallyValid(query));
        const request = post(query, undefined, authorization ? { authorization } : {});
        await sendChecked(request, (o) => {
          if (o.status !== 400) return `status ${o.status}, expected 400`;
          const allowed = ['GRAPHQL_PARSE_FAILED', 'GRAPHQL_VALIDATION_FAILED', 'BAD_REQUEST', 'BAD_USER_INPUT', 'OPERATION_RESOLUTION_FAILURE'];
          if (!o.envelope && !o.codes.length) return 'no errors';
          return o.codes.every((c) => allowed.includes(c)) ? undefined : `codes ${o.codes.join(', ')}`;
        });
      }),
      { numRuns: runs(900) },
    );
  });

  /** Whole requests to /graphql that are wrong at the HTTP or GraphQL-over-HTTP level. */
  const badRequest: fc.Arbitrary<{ kind: string; opts: InjectOptions }> = fc.oneof(
    fc.tuple(hostileJson, fc.nat()).map(([v, n]) => {
      const text = toJson({ query: '{ me { id } }', variables: { v } });
      return { kind: 'truncated JSON', opts: { method: 'POST' as const, url: '/graphql', headers: { 'content-type': 'application/json' }, payload: text.slice(0, 1 + (n % (text.length - 1))) } };
    }),
    fc.oneof(fc.array(hostileJson, { maxLength: 2 }), hostileString, hostileNumber, fc.constantFrom<unknown>(null, true, [{ query: '{ me { id } }' }, { query: '{ me { id } }' }], deepArray(10_000)))
      .map((v) => ({ kind: 'not an object', opts: { method: 'POST' as const, url: '/graphql', headers: { 'content-type': 'application/json' }, payload: toJson(v) } })),
    fc.record({
      query: fc.oneof(fc.constantFrom<unknown>(OMIT, null, '', 42, ['{ me { id } }'], { query: '{ me { id } }' }), fc.constant('{ me { id } }')),
      variables: fc.oneof(fc.constant<unknown>(OMIT), fc.constantFrom<unknown>('{"a":1}', [1], 5, true, '')),
      operationName: fc.oneof(fc.constant<unknown>(OMIT), fc.constantFrom<unknown>(5, {}, ['x'], 'Nope')),
      extensions: fc.oneof(
        fc.constant<unknown>(OMIT),
        fc.constantFrom<unknown>('x', 5, [], { persistedQuery: 1 }, { persistedQuery: { version: 2, sha256Hash: 'abc' } }, { persistedQuery: { version: 1, sha256Hash: 'abc' } }, { persistedQuery: { version: 1, sha256Hash: { a: 1 } } }, { persistedQuery: { version: '1', sha256Hash: '0'.repeat(64) } }),
      ),
    })
      // At least one member wrong: a plain `{ me { id } }` with nothing else would be a valid request.
      .filter((r) => !(r.query === '{ me { id } }' && r.variables === OMIT && r.operationName === OMIT && r.extensions === OMIT))
      .map((r) => ({
        kind: 'wrong members',
        opts: { method: 'POST' as const, url: '/graphql', headers: { 'content-type': 'application/json' }, payload: toJson(new DupObject(Object.entries(r).filter(([, v]) => v !== OMIT))) },
      })),
    pollutingBody.map((payload) => ({ kind: 'prototype pollution', opts: { method: 'POST' as const, url: '/graphql', headers: { 'content-type': 'application/json' }, payload } })),
    fc.constantFrom([0xff], [0xc0, 0xaf], [0xed, 0xa0, 0x80], [0x80]).map((bytes) => ({
      kind: 'invalid UTF-8',
      opts: { method: 'POST' as const, url: '/graphql', headers: { 'content-type': 'application/json' }, payload: Buffer.concat([Buffer.from('{"query":"{ me { id } }","variables":{"a":"'), Buffer.from(bytes), Buffer.from('"}}')]) },
    })),
    fc.constantFrom(JUST_OVER_LIMIT_BODY, JSON.stringify({ query: '{ me { id } }', variables: { v: 'x'.repeat(1024 * 1024) } }))
      .map((payload) => ({ kind: 'over 64 KiB', opts: { method: 'POST' as const, url: '/graphql', headers: { 'content-type': 'application/json' }, payload } })),
    fc.constantFrom('text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'application/graphql', 'text/json', 'application/xml')
      .map((type) => ({ kind: 'not JSON content', opts: { method: 'POST' as const, url: '/graphql', headers: { 'content-type': type }, payload: '{"query":"{ me { id } }"}' } })),
    // GET: a mutation (never over GET), no CSRF preflight header, or a garbage document.
    fc.tuple(fc.constantFrom('mutation { revokeCurrentOAuthToken }', 'mutation { deleteOAuthClient(id: "1") }'), fc.boolean()).map(([q, preflight]) => ({
      kind: 'mutation over GET',
      opts: { method: 'GET' as const, url: `/graphql?query=${pct(q)}`, headers: preflight ? { 'apollo-require-preflight': 'true' } : {} },
    })),
    fc.tuple(hostileString, fc.constantFrom('', '&variables=%7B', '&variables=[1]', '&extensions=x', '&operationName=%00')).map(([q, rest]) => ({
      kind: 'GET garbage',
      opts: { method: 'GET' as const, url: `/graphql?query=${pct(q)}${rest}`, headers: { 'apollo-require-preflight': 'true' } },
    })),
    fc.constantFrom('PUT', 'DELETE', 'PATCH').map((method) => ({ kind: 'wrong method', opts: { method: method as 'PUT', url: '/graphql', headers: { 'content-type': 'application/json' }, payload: '{"query":"{ me { id } }"}' } })),
  );

  it('refuses broken HTTP requests to /graphql with a 4xx, never INTERNAL_SERVER_ERROR', async () => {
    await fc.assert(
      fc.asyncProperty(badRequest, fc.constantFrom(fx.auth.admin, fx.auth.readOnly), async ({ kind, opts }, authorization) => {
        if (kind === 'truncated JSON') {
          let parses: boolean;
          try {
            parses = typeof JSON.parse(String(opts.payload)) === 'object';
          } catch {
            parses = false;
          }
          fc.pre(!parses);
        }
        await sendChecked({ ...opts, headers: { ...opts.headers, authorization } }, (o) => {
          if (o.status < 400 && !(o.status === 200 && o.codes.length > 0)) return `status ${o.status} for ${kind}`;
          return undefined;
        });
      }),
      { numRuns: runs(700) },
    );
  });

  describe('regressions found by the fuzzer', () => {
    it.each([
      ['a hash that does not match the query', { query: '{ me { id } }', extensions: { persistedQuery: { version: 1, sha256Hash: 'abc' } } }],
      ['an unsupported version', { query: '{ me { id } }', extensions: { persistedQuery: { version: 2, sha256Hash: 'abc' } } }],
      ['a persistedQuery that is not an object', { query: '{ me { id } }', extensions: { persistedQuery: 1 } }],
    ])('answers a persisted query with %s as BAD_REQUEST (400), not INTERNAL_SERVER_ERROR', async (_what, body) => {
      const res = await sender.send({ method: 'POST', url: '/graphql', headers: { 'content-type': 'application/json', authorization: fx.auth.admin }, payload: body });
      expect(res.statusCode).toBe(400);
      expect(res.json().errors.map((e: any) => e.extensions.code)).toEqual(['BAD_REQUEST']);
    });

    it('refuses a NUL character in a client name or a token scope with BAD_USER_INPUT, not a database error', async () => {
      const client = await sender.send(post('mutation($i: OAuthClientInput!) { createOAuthClient(input: $i) { id } }', JSON.stringify({ i: { name: 'a\u0000b', scopes: 'read', redirectUris: ['https://a.example/cb'] } }), { authorization: fx.auth.admin }));
      expect(client.json().errors.map((e: any) => [e.extensions.code, Object.keys(e.extensions.details)])).toEqual([['BAD_USER_INPUT', ['name']]]);
      const token = await sender.send(post('mutation($i: CreateOAuthTokenInput!) { createOAuthToken(input: $i) { id } }', JSON.stringify({ i: { clientId: fx.ids.client, scopes: ['\u0000'] } }), { authorization: fx.auth.admin }));
      expect(token.json().errors.map((e: any) => [e.extensions.code, Object.keys(e.extensions.details)])).toEqual([['BAD_USER_INPUT', ['scopes']]]);
    });
  });

  it('sent thousands of hostile requests (part of the 10,000 per run of issue 7)', () => {
    const seconds = (Date.now() - started) / 1000;
    console.log(`GraphQL fuzzing: ${sender.sent} requests in ${seconds.toFixed(1)} s`);
    expect(sender.sent).toBeGreaterThanOrEqual(runs(5_000));
  });
});
