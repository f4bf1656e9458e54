import type { FastifyBaseLogger, FastifyRequest } from 'fastify';
import type { WebSocket, WebsocketHandler } from '@fastify/websocket';
import { CloseCode, makeServer, type Context } from 'graphql-ws';
import { getOperationAST, GraphQLError, parse, specifiedRules, validate, type DocumentNode, type GraphQLSchema } from 'graphql';
import { asDomainError, BadRequestError } from '../../domain/errors';
import type { Services } from '../../domain/services';
import type { EventFeed } from '../../domain/events/event-feed';
import { SubscriberSession } from '../../domain/events/subscriber-session';
import type { SubscriptionLimits } from '../../domain/events/subscription-limits';
import { createFormatError } from '../../graphql/errors';
import type { GraphQLLimits } from '../../graphql/limits';
import type { GraphQLContext } from '../../graphql/context';
import type { ContextBuilder } from '../request-context';

export interface SubscriptionsOptions {
  schema: GraphQLSchema;
  buildContext: ContextBuilder;
  services: Services;
  feed: EventFeed;
  limits: GraphQLLimits;
  log: FastifyBaseLogger;
  subscriptionLimits?: Partial<SubscriptionLimits>;
}

interface Extra {
  socket: WebSocket;
  request: FastifyRequest;
  session?: SubscriberSession;
}

// Close codes of connection_init (docs/api.md, "Live events"), from the domain error's kind.
const CONNECT_CLOSE: Record<string, { code: number; reason: string }> = {
  UNAUTHENTICATED: { code: CloseCode.Unauthorized, reason: "Unauthorized: couldn't authenticate you" },
  FORBIDDEN: { code: CloseCode.Forbidden, reason: 'Forbidden' },
  RATE_LIMITED: { code: 4429, reason: 'Too many failed sign-ins: try again later' },
  SERVICE_UNAVAILABLE: { code: 1013, reason: 'The service is temporarily unavailable' },
};
const NO_CREDENTIALS = { code: CloseCode.Unauthorized, reason: 'Unauthorized: send {"authorization": "Bearer …"} in the connection_init payload' };
const KEEP_ALIVE_MS = 12_000;

/** `authorization` (or `Authorization`, as GraphiQL's headers pane names it) of a connection_init payload. */
function credentialsOf(params: Record<string, unknown> | undefined): string | undefined {
  const value = params?.authorization ?? params?.Authorization;
  return typeof value === 'string' && value.trim() !== '' ? value : undefined;
}

const refused = (message: string, code = 'BAD_REQUEST') => [new GraphQLError(message, { extensions: { code } })];

/**
 * The WebSocket side of GET /graphql: graphql-ws's protocol (graphql-transport-ws)
 * over @fastify/websocket, on the same schema as Apollo, with the same
 * authenticator, policy and limits. The shape is graphql-ws's own
 * @fastify/websocket adapter (a "starter to copy"), with authentication in
 * connection_init, subscriptions only (queries and mutations stay on HTTP, where
 * they are logged and audited per request), and a SubscriberSession per connection
 * joined to the process's one event feed.
 */
export function subscriptionsHandler(options: SubscriptionsOptions): WebsocketHandler {
  const { schema, buildContext, services, feed, limits, log } = options;
  const formatError = createFormatError((err) => log.error({ err }, 'graphql subscription error'));
  const rules = [...specifiedRules, ...limits.validationRules];
  const server = makeServer<Record<string, unknown>, Extra>({
    schema,
    async onConnect(ctx) {
      const { socket, request } = ctx.extra;
      const close = (c: { code: number; reason: string }) => {
        socket.close(c.code, c.reason);
        return false;
      };
      // a domain error (the database out of reach included: 1013) closes with its code; anything else is a bug (4500 "Internal error", logged)
      const refuse = (err: unknown) => {
        const domain = asDomainError(err);
        if (!domain) log.error({ err }, 'graphql subscription connection_init');
        return close(CONNECT_CLOSE[domain?.code ?? ''] ?? { code: CloseCode.InternalServerError, reason: 'Internal error' });
      };
      const authorization = credentialsOf(ctx.connectionParams);
      if (!authorization) return close(NO_CREDENTIALS);
      let viewer;
      try {
        viewer = await buildContext.authenticateWith(request, authorization);
      } catch (err) {
        return refuse(err);
      }
      if (!viewer) return close(NO_CREDENTIALS);
      const session = new SubscriberSession({
        viewer,
        recheck: () => buildContext.authenticateWith(request, authorization),
        // leaves the feed at once: a peer that does not read would hold the closing handshake for 30 s
        close: (code, reason) => {
          feed.leave(session);
          socket.close(code, reason);
        },
        limits: options.subscriptionLimits,
      });
      try {
        // the feed's LISTEN starts with the first session: it fails when the database is out of
        // reach (it was a 4500 "Internal error" close, logged as an error)
        await feed.join(session);
      } catch (err) {
        return refuse(err);
      }
      ctx.extra.session = session;
      return true;
    },
    onSubscribe(ctx, _id, payload) {
      const session = ctx.extra.session!;
      if (Object.keys(ctx.subscriptions).length > session.limits.perConnection) {
        return refused(`At most ${session.limits.perConnection} subscriptions at once on one connection`);
      }
      let document: DocumentNode;
      try {
        document = parse(payload.query, limits.parseOptions);
      } catch (err) {
        return refused(err instanceof GraphQLError ? err.message : 'Syntax error');
      }
      const errors = validate(schema, document, rules);
      if (errors.length > 0) return errors.map((e) => new GraphQLError(e.message, { nodes: e.nodes, extensions: { code: 'GRAPHQL_VALIDATION_FAILED' } }));
      const operation = getOperationAST(document, payload.operationName);
      if (!operation) {
        return refused(payload.operationName ? `Unknown operation named "${payload.operationName.slice(0, 100)}"` : 'Must provide operation name if query contains multiple operations');
      }
      if (operation.operation !== 'subscription') {
        return refused(new BadRequestError('Only subscriptions run over WebSocket: send queries and mutations to POST /graphql').message);
      }
      const contextValue: GraphQLContext = {
        get viewer() {
          return session.viewer;
        },
        services,
        baseUrl: '',
        loaders: null,
        subscriber: session,
      };
      return { schema, document, operationName: payload.operationName, variableValues: payload.variables, contextValue };
    },
    onNext(_ctx, _id, _payload, _args, result) {
      if (!result.errors) return undefined;
      return { ...result, errors: result.errors.map((e) => formatError(e.toJSON(), e)) };
    },
    onError(_ctx, _id, _payload, errors) {
      return errors.map((e) => formatError(e.toJSON(), e));
    },
    onClose(ctx: Context<Record<string, unknown>, Extra>) {
      const session = ctx.extra.session;
      if (!session) return;
      session.ended();
      feed.leave(session);
    },
  });

  return function handler(socket: WebSocket, request: FastifyRequest) {
    let alive = true;
    socket.on('pong', () => (alive = true));
    // a peer that stops answering pings is dropped (its subscriptions end)
    const keepAlive = setInterval(() => {
      if (!alive) return socket.terminate();
      alive = false;
      socket.ping();
    }, KEEP_ALIVE_MS);
    const closed = server.opened(
      {
        protocol: socket.protocol,
        send: (data) =>
          new Promise<void>((resolve, reject) => {
            if (socket.readyState !== socket.OPEN) return resolve();
            socket.send(data, (err) => (err ? reject(err) : resolve()));
          }),
        close: (code, reason) => socket.close(code, reason),
        onMessage: (cb) =>
          socket.on('message', (data: Buffer) => {
            cb(String(data)).catch((err: unknown) => {
              if (socket.readyState !== socket.OPEN) return;
              log.error({ err }, 'graphql subscription message');
              socket.close(CloseCode.InternalServerError, 'Internal error');
            });
          }),
      },
      { socket, request },
    );
    socket.once('close', (code: number, reason: Buffer) => {
      clearInterval(keepAlive);
      void closed(code, String(reason));
    });
  };
}
