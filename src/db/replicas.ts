/** create-db.ts's SqlQuery (repeated here: create-db builds the router, and imports this module) */
type SqlQuery = <T = Record<string, unknown>>(sql: string, params?: unknown[]) => Promise<T[]>;

// Reads that may be served by a streaming replica (READ_REPLICA_URL), with bounded staleness.
//
// A replica serves a read only while it is known to hold everything the primary had committed
// REPLICA_MAX_LAG_MS ago or later. Known how: a monitor samples the primary's WAL position
// (pg_current_wal_lsn(), taken with the time the question was sent) and each replica's replayed
// position (pg_last_wal_replay_lsn()); a replica that has replayed a sample's position holds every
// transaction committed before that sample's time. Its staleness is then at most the age of the
// newest sample it has replayed — an upper bound, never an estimate from the replica's own clock
// (pg_last_xact_replay_timestamp() grows while the primary is idle, and says nothing about what was
// not yet received). Which reads come here, and which never do: docs/scaling.md.
//
// A replica that stops costs no request: a read it fails (connection refused, reset, a recovery
// conflict, anything) is run again on the primary at once, and the replica is left out until the
// monitor reaches it again. Reads are plain SELECTs: running one twice changes nothing.

/** One replica: where its queries go, and how it closes. */
export interface ReplicaTarget {
  /** for logs: host:port/database, never the password */
  name: string;
  sql: SqlQuery;
  close(): Promise<void>;
}

export interface ReplicaState {
  name: string;
  /** reads go to it now */
  usable: boolean;
  /** at most this far behind the primary (ms); null until a first sample is replayed, or while it is unreachable */
  lagMs: number | null;
}

type ReplicaLog = { warn(obj: object, msg: string): void; info(obj: object, msg: string): void };

export interface ReplicaRouter {
  /** a read: on a replica within the lag, else on the primary */
  read: SqlQuery;
  states(): ReplicaState[];
  close(): Promise<void>;
}

/** 'XXXXXXXX/YYYYYYYY' (hex) → a number that orders like the position. */
export function parseLsn(lsn: string): bigint {
  const [high, low] = lsn.split('/');
  return (BigInt(`0x${high}`) << 32n) + BigInt(`0x${low}`);
}

/** Not an SQL error of the statement (a SQLSTATE) but the connection: refused, reset, timed out, or the server shutting down. */
function connectionLost(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code !== 'string' || !/^[0-9A-Z]{5}$/.test(code) || code.startsWith('08') || code.startsWith('57P');
}

interface Sample {
  at: number;
  lsn: bigint;
}

class Replica {
  /** the time of the newest primary sample it has replayed (-Infinity: none yet) */
  freshAt = -Infinity;
  /** unreachable, or not a standby: left out until the monitor reaches it again */
  down = false;
  constructor(readonly target: ReplicaTarget) {}
}

/** Samples the primary and the replicas every `intervalMs`; hands reads to a fresh replica in turn. */
export function replicaRouter(
  primary: SqlQuery,
  targets: ReplicaTarget[],
  options: { maxLagMs: number; intervalMs?: number; log?: ReplicaLog; now?: () => number },
): ReplicaRouter {
  const now = options.now ?? Date.now;
  const interval = options.intervalMs ?? Math.min(1000, Math.max(50, Math.floor(options.maxLagMs / 4)));
  const replicas = targets.map((t) => new Replica(t));
  // the primary's recent positions, oldest first (enough to cover the lag allowed, and more)
  const samples: Sample[] = [];
  let next = 0;
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let primaryFailing = false;

  const markDown = (replica: Replica, err: unknown, why: string) => {
    if (!replica.down) options.log?.warn({ err, replica: replica.target.name }, `read replica left out: ${why}; reads go to the primary`);
    replica.down = true;
  };

  const sampleReplica = async (replica: Replica) => {
    try {
      const [row] = await replica.target.sql<{ standby: boolean; lsn: string | null }>('SELECT pg_is_in_recovery() AS standby, pg_last_wal_replay_lsn()::text AS lsn');
      // promoted, or a primary by mistake: its data is not the primary's
      if (!row.standby || row.lsn === null) return markDown(replica, undefined, 'it is not a streaming standby');
      const replayed = parseLsn(row.lsn);
      for (let i = samples.length - 1; i >= 0; i--) {
        if (samples[i].lsn <= replayed) {
          replica.freshAt = Math.max(replica.freshAt, samples[i].at);
          break;
        }
      }
      if (replica.down) options.log?.info({ replica: replica.target.name }, 'read replica reachable again');
      replica.down = false;
    } catch (err) {
      markDown(replica, err, 'unreachable');
    }
  };

  const sample = async () => {
    const at = now();
    try {
      const [row] = await primary<{ lsn: string }>('SELECT pg_current_wal_lsn()::text AS lsn');
      samples.push({ at, lsn: parseLsn(row.lsn) });
      // a sample older than twice the lag allowed can no longer make a replica usable
      while (samples.length > 2 && samples[1].at < at - 2 * options.maxLagMs - interval) samples.shift();
      primaryFailing = false;
    } catch (err) {
      // without the primary's position nothing proves a replica fresh: they age out by themselves
      if (!primaryFailing) options.log?.warn({ err }, 'read replicas: could not read the primary\'s WAL position');
      primaryFailing = true;
    }
    await Promise.all(replicas.map(sampleReplica));
  };

  const loop = async () => {
    await sample();
    if (!stopped) timer = setTimeout(() => void loop(), interval).unref();
  };
  void loop();

  const usable = (r: Replica) => !r.down && now() - r.freshAt <= options.maxLagMs;

  return {
    async read(text, params) {
      for (let tried = 0; tried < replicas.length; tried++) {
        const replica = replicas[next++ % replicas.length];
        if (!usable(replica)) continue;
        try {
          return await replica.target.sql(text, params);
        } catch (err) {
          // run again on the primary: the read's own mistake fails there too (and is reported
          // from there); a lost replica is left out until the monitor reaches it again
          if (connectionLost(err)) markDown(replica, err, 'a read lost its connection');
          break;
        }
      }
      return primary(text, params);
    },
    states: () =>
      replicas.map((r) => ({
        name: r.target.name,
        usable: usable(r),
        lagMs: r.down || r.freshAt === -Infinity ? null : Math.max(0, now() - r.freshAt),
      })),
    async close() {
      stopped = true;
      clearTimeout(timer);
      await Promise.all(replicas.map((r) => r.target.close()));
    },
  };
}
