import { ArgsType, Field, Int, ObjectType, type ClassType } from 'type-graphql';
import type { CursorCodec, Page } from '../domain/pagination';

// Relay connections of the GraphQL schema: one generic type (type-graphql's generic
// types) for every list, and the runtime objects it is resolved from. A list adds
//   @ObjectType({ simpleResolvers: true, description }) export class ThingConnection extends Connection(Thing) {}
// and its resolver returns connectionOf(ThingConnection, cursors, await readPage(…), toNode).
//
// A cursor is an HMAC-signed id (domain/pagination.ts): signing one for each of a page's
// 100 edges cost ~6 % of a page request's CPU (bench/tuning-log.md) while most clients
// ask for pageInfo's endCursor only, or for no cursor at all. Here a cursor is signed
// when it is read.

/** pageInfo, with its cursors signed when read. */
@ObjectType({ simpleResolvers: true, description: 'Where a page sits in its list (Relay PageInfo)' })
export class PageInfo {
  @Field({ description: 'Whether records follow this page: ask for them with first and after: endCursor' }) readonly hasNextPage: boolean;
  @Field({ description: 'Whether records precede this page: ask for them with last and before: startCursor' }) readonly hasPreviousPage: boolean;

  constructor(
    private readonly codec: CursorCodec,
    private readonly firstId: bigint | undefined,
    private readonly lastId: bigint | undefined,
    hasNextPage: boolean,
    hasPreviousPage: boolean,
  ) {
    this.hasNextPage = hasNextPage;
    this.hasPreviousPage = hasPreviousPage;
  }

  @Field(() => String, { nullable: true, description: "The first edge's cursor; null on an empty page" })
  get startCursor(): string | null {
    return this.firstId === undefined ? null : this.codec.encode(this.firstId);
  }

  @Field(() => String, { nullable: true, description: "The last edge's cursor; null on an empty page" })
  get endCursor(): string | null {
    return this.lastId === undefined ? null : this.codec.encode(this.lastId);
  }
}

/** An edge whose cursor is signed only when a client (or the REST adapter) reads it. */
@ObjectType({ simpleResolvers: true })
class Edge<N> {
  constructor(private readonly codec: CursorCodec, private readonly recordId: bigint, readonly node: N) {}

  @Field({ description: 'Where this record sits in the list: pass it as after or before to page from here (opaque, signed)' })
  get cursor(): string {
    return this.codec.encode(this.recordId);
  }
}

/**
 * The connection type of a list of `node`s: `edges { cursor node }`, `pageInfo` and
 * `totalCount`, counted only when asked for. Its edge type is named after the node
 * (`OAuthToken` → `OAuthTokenEdge`); the subclass names the connection.
 */
export function Connection<N extends object>(node: ClassType<N>, options: { totalCount?: string } = {}) {
  @ObjectType(`${node.name}Edge`, { simpleResolvers: true, description: `One ${node.name} of a page, with its cursor` })
  class NodeEdge extends Edge<N> {}
  // the node is the runtime Edge's constructor property: declared to the schema here
  Field(() => node, { description: `The ${node.name}` })(NodeEdge.prototype, 'node');

  @ObjectType({ simpleResolvers: true })
  abstract class ConnectionClass {
    @Field(() => [NodeEdge], { description: "The page's records, in the list's order" }) edges!: Edge<N>[];
    @Field(() => PageInfo, { description: 'Whether there are records before and after this page, and the cursors to reach them' }) pageInfo!: PageInfo;
    /** the size of the whole list: counted when totalCount is asked for */
    count!: () => Promise<number>;

    // a resolver (simple: false), so that the compiled executor awaits the count
    @Field(() => Int, { simple: false, description: options.totalCount ?? 'Records in the whole list, all pages (counted only when asked for)' })
    get totalCount(): Promise<number> {
      return this.count();
    }
  }
  return ConnectionClass;
}

type ConnectionOf<N> = { edges: Edge<N>[]; pageInfo: PageInfo; count: () => Promise<number> };

/** The connection of one page of records (in the order given). */
export function connectionOf<C extends ConnectionOf<N>, R extends { id: bigint }, N>(
  type: new () => C,
  codec: CursorCodec,
  page: Page<R>,
  toNode: (record: R) => N,
): C {
  return Object.assign(new type(), {
    edges: page.items.map((r) => new Edge(codec, r.id, toNode(r))),
    pageInfo: new PageInfo(codec, page.items[0]?.id, page.items.at(-1)?.id, page.hasNextPage, page.hasPreviousPage),
    count: page.count,
  });
}

/** Relay's page arguments, forward (first/after) and backward (last/before). */
@ArgsType()
export class CursorPageArgs {
  @Field(() => Int, { nullable: true, description: 'Page size, forwards: 1..100 (larger values are clamped); 100 by default' }) first?: number | null;
  @Field(() => String, { nullable: true, description: "The records after this cursor (an edge's cursor, or pageInfo.endCursor)" }) after?: string | null;
  @Field(() => Int, { nullable: true, description: 'Page size, backwards from `before`: 1..100 (larger values are clamped)' }) last?: number | null;
  @Field(() => String, { nullable: true, description: "The records before this cursor (an edge's cursor, or pageInfo.startCursor)" }) before?: string | null;
}

/** Relay's page arguments, and offset ones (REST compatibility). */
@ArgsType()
export class PageArgs extends CursorPageArgs {
  @Field(() => Int, { nullable: true, description: 'Offset pagination (REST compatibility): page number, from 1' }) page?: number | null;
  @Field(() => Int, { nullable: true, description: 'Offset pagination: records per page, 1..100' }) perPage?: number | null;
}

/** The arguments of a list that is one offset page (groups, voice phone numbers). */
@ArgsType()
export class OffsetPageArgs {
  @Field(() => Int, { nullable: true, defaultValue: 1, description: 'Page number, from 1' }) page!: number | null;
  @Field(() => Int, { nullable: true, defaultValue: 100, description: 'Records per page, 1..100' }) perPage!: number | null;
}
