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
// monitor reaches it again. Reads are plain SELECTs: running one twice changes nothing. A replica
// that stops answering without failing (its host frozen, a network partition: the connection stays
// open and nothing comes back) is left out when it leaves the monitor's question unanswered for
// ANSWER_TIMEOUT_MS; the reads waiting on it then run again on the primary too.

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

/**
 * How long a replica may leave the monitor's question (a trivial one) unanswered before it is left
 * out: as long as create-db gives it to accept a connection.
 */
const ANSWER_TIMEOUT_MS = 1000;

/** A read abandoned on a replica that was left out while it ran (it runs again on the primary). */
class LeftOut extends Error {}

class Replica {
  /** the time of the newest primary sample it has replayed (-Infinity: none yet) */
  freshAt = -Infinity;
  /** unreachable, or not a standby: left out until the monitor reaches it again */
  down = false;
  /** times it was left out: only a question asked after the last time brings it back */
  leftOut = 0;
  /** the monitor's question to it while unanswered (not asked again meanwhile) */
  asking: Promise<void> | undefined;
  /** the reads running on it, abandoned when it is left out */
  readonly abandon = new Set<(err: LeftOut) => void>();
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
    if (!replica.down && !stopped) options.log?.warn({ err, replica: replica.target.name }, `read replica left out: ${why}; reads go to the primary`);
    replica.down = true;
    replica.leftOut++;
    for (const abandon of replica.abandon) abandon(new LeftOut(`read replica ${replica.target.name} left out: ${why}`));
    replica.abandon.clear();
  };

  /** A read on a replica, given up (LeftOut) if the replica is left out before it answers. */
  const readOn = async <T>(replica: Replica, text: string, params?: unknown[]): Promise<T[]> => {
    let abandon!: (err: LeftOut) => void;
    const leftOut = new Promise<never>((_, reject) => (abandon = reject));
    replica.abandon.add(abandon);
    try {
      // (a late answer or failure of the abandoned query is handled by the race, and ignored)
      return await Promise.race([replica.target.sql<T>(text, params), leftOut]);
    } finally {
      replica.abandon.delete(abandon);
    }
  };

  const ask = async (replica: Replica) => {
    const leftOutBefore = replica.leftOut;
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
      // an answer to a question asked before it was left out (by a read that lost its connection,
      // or by this very question taking too long) does not bring it back: the next question does
      if (replica.leftOut !== leftOutBefore) return;
      if (replica.down && !stopped) options.log?.info({ replica: replica.target.name }, 'read replica reachable again');
      replica.down = false;
    } catch (err) {
      markDown(replica, err, 'unreachable');
    }
  };

  /** Asks a replica where it is, unless the last question is still unanswered; waits at most ANSWER_TIMEOUT_MS. */
  const sampleReplica = async (replica: Replica) => {
    if (replica.asking) return;
    const asking = ask(replica).finally(() => {
      replica.asking = undefined;
    });
    replica.asking = asking;
    let deadline: NodeJS.Timeout | undefined;
    const late = new Promise<void>((resolve) => {
      deadline = setTimeout(() => {
        markDown(replica, undefined, `it did not answer within ${ANSWER_TIMEOUT_MS} ms`);
        resolve();
      }, ANSWER_TIMEOUT_MS);
    });
    try {
      await Promise.race([asking, late]);
    } finally {
      clearTimeout(deadline);
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
      if (!primaryFailing && !stopped) options.log?.warn({ err }, 'read replicas: could not read the primary\'s WAL position');
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
          return await readOn(replica, text, params);
        } catch (err) {
          // run again on the primary: the read's own mistake fails there too (and is reported
          // from there); a lost replica is left out until the monitor reaches it again
          if (!(err instanceof LeftOut) && connectionLost(err)) markDown(replica, err, 'a read lost its connection');
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
