// Whether an error means "the database cannot be reached right now" (→ 503),
// as opposed to a bug (→ 500). Covers pg, Prisma's driver adapters and PGlite.
const NETWORK_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH']);
// PostgreSQL: admin shutdown, crash shutdown, cannot connect now, too many connections, and
// 08P01, the code pgbouncer gives every error of its own ("server login has been failing, try
// again later", "pgbouncer cannot connect to server", "server conn crashed?", query_wait_timeout):
// the server behind it is away or restarting, which is a 503 like the server's own.
const PG_CODES = new Set(['57P01', '57P02', '57P03', '53300', '08000', '08001', '08003', '08006', '08P01']);

export function isDatabaseUnavailable(err: unknown, depth = 0): boolean {
  if (!err || typeof err !== 'object' || depth > 5) return false;
  const e = err as { code?: unknown; message?: unknown; cause?: unknown; kind?: unknown; originalCode?: unknown };
  if (typeof e.code === 'string' && (NETWORK_CODES.has(e.code) || PG_CODES.has(e.code))) return true;
  if (typeof e.originalCode === 'string' && PG_CODES.has(e.originalCode)) return true;
  if (e.code === 'P1001' || e.code === 'P1002' || e.code === 'P1017' || e.kind === 'DatabaseNotReachable') return true;
  const message = typeof e.message === 'string' ? e.message : '';
  // "timeout exceeded when trying to connect": pg-pool waited connectionTimeoutMillis for a
  // free connection (every one busy on a database that does not answer)
  if (/Connection terminated|connection timeout|timeout exceeded when trying to connect|Can't reach database|ECONNREFUSED|terminating connection|Client has encountered a connection error/i.test(message)) return true;
  return isDatabaseUnavailable(e.cause, depth + 1);
}
