import type { CursorCodec } from '../domain/pagination';

// Relay connections of the GraphQL schema. A cursor is an HMAC-signed id
// (domain/pagination.ts): signing one for each of a page's 100 edges cost ~6 % of a
// page request's CPU (bench/tuning-log.md) while most clients ask for pageInfo's
// endCursor only, or for no cursor at all. Here a cursor is signed when it is read.

/** An edge whose cursor is signed only when a client (or the REST adapter) reads it. */
export class Edge<N> {
  constructor(private readonly codec: CursorCodec, private readonly recordId: bigint, readonly node: N) {}

  get cursor(): string {
    return this.codec.encode(this.recordId);
  }
}

/** pageInfo, with its cursors signed when read. */
export class PageInfoOf {
  constructor(
    private readonly codec: CursorCodec,
    private readonly firstId: bigint | undefined,
    private readonly lastId: bigint | undefined,
    readonly hasNextPage: boolean,
    readonly hasPreviousPage: boolean,
  ) {}

  get startCursor(): string | null {
    return this.firstId === undefined ? null : this.codec.encode(this.firstId);
  }

  get endCursor(): string | null {
    return this.lastId === undefined ? null : this.codec.encode(this.lastId);
  }
}

/** The edges and pageInfo of one page of records (in the order given). */
export function pageOf<R extends { id: bigint }, N>(
  codec: CursorCodec,
  records: readonly R[],
  toNode: (record: R) => N,
  { hasNextPage, hasPreviousPage }: { hasNextPage: boolean; hasPreviousPage: boolean },
): { edges: Edge<N>[]; pageInfo: PageInfoOf } {
  return {
    edges: records.map((r) => new Edge(codec, r.id, toNode(r))),
    pageInfo: new PageInfoOf(codec, records[0]?.id, records.at(-1)?.id, hasNextPage, hasPreviousPage),
  };
}
