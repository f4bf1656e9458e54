import type { Db, SqlQuery } from './create-db';

// The only way a repository runs SQL (src/domain/**/*.repository.ts receive a
// TenantSql, never the raw `sql` function: eslint.config.mjs). Modelled on Ory
// Hydra's persister, where QueryWithNetwork(ctx) is the only way a query gets its
// tenant filter: here query() binds the account id as $1 of every statement
// itself, so a statement cannot run without an account, nor with one the caller
// typed in. The few statements that must span accounts go through crossTenant(),
// under one of the reasons listed in CROSS_TENANT. docs/api.md, "Tenancy".

/** The account a statement runs in (domain/authorization.ts's AccountScope, among others). */
interface TenantScope {
  readonly accountId: bigint;
}

/**
 * Every reason a statement may span accounts. A new one is a design decision:
 * it goes here, with why, and its repository method gets an isolation case
 * (test/tenant-isolation.test.ts) like every other.
 */
export const CROSS_TENANT = {
  /** Basic sign-in names a user by email: on the bare host in any account (the one whose password matches); an API token sign-in finds its token by hash (docs/api.md, "API tokens"). */
  signIn: 'sign-in by email on the bare host, before any account is known',
  /** rate_window_hits rows are keyed by HMACs of emails (with the account a guess counts against) and of addresses; they hold no account's data. */
  loginThrottle: 'the login throttle counts attempts per key, not per account',
  /** A Bearer token is found by its hash; the account is the token's. */
  presentedToken: 'a presented token is found by its hash before its account is known',
  /** The grant endpoints and the authorization pages find a client by its public identifier (on an account's host, of that account only). */
  clientIdentifier: 'a client is found by its identifier before its account is known',
  /** The background engine (src/jobs/engine.ts) claims, finishes and retries the due jobs of every account, and the service's own. */
  jobEngine: 'the job engine works through the jobs of every account',
  /** The live event feed (src/domain/events/event-feed.ts) reads each new event once, by the id its NOTIFY carries, before it knows the account; it hands the event only to that account's subscribers. */
  eventFeed: 'a new event is read by its id, once for all subscribers, before its account is known',
  /**
   * The retention purge (src/domain/retention) removes what is over past its retention in every
   * account at once, by index range (an expired token is expired whoever's it is): per account it
   * would be one statement per account and table on every run, most of them finding nothing.
   */
  retention: 'the retention purge removes what is over in every account at once',
  /** The operator (CLI) and the first start create and list the accounts themselves. */
  operator: 'the operator and the first start work on all accounts',
} as const;

export type CrossTenantReason = keyof typeof CROSS_TENANT;

export class TenantSql {
  constructor(private readonly sql: SqlQuery) {}

  /**
   * Runs `text` in the scope's account: $1 is the account id (bound here), and
   * `params` are $2, $3, …. The text must read $1, as the filter of every
   * tenant table it touches (`account_id = $1`; `id = $1` on accounts) or as the
   * account of what it inserts. A text without "$1" is refused here (a cheap
   * check on every statement: no regular expression, no string built); one that
   * names $10 but not $1 is refused by PostgreSQL itself, which cannot type an
   * unread parameter.
   */
  query<T = Record<string, unknown>>(scope: TenantScope, text: string, params: readonly unknown[] = []): Promise<T[]> {
    if (!text.includes('$1')) throw new Error('A tenant statement must read the account id, $1');
    return this.sql<T>(text, [String(scope.accountId), ...params]);
  }

  /** A statement that spans accounts, for one of the reasons of CROSS_TENANT; its parameters are $1, $2, …. */
  crossTenant<T = Record<string, unknown>>(_why: CrossTenantReason, text: string, params?: unknown[]): Promise<T[]> {
    return this.sql<T>(text, params);
  }
}

/** db.transaction, with the transaction's connection as a TenantSql: what the services hand their repositories. */
export function tenantTransaction<T>(db: Pick<Db, 'transaction'>, fn: (sql: TenantSql) => Promise<T>, first?: string): Promise<T> {
  return db.transaction((sql) => fn(new TenantSql(sql)), first);
}
