import type { TenantSql } from '../../db/tenant-sql';
import type { AccountScope } from '../authorization';
import type { AgentCallStatus, AgentState } from './callback-lifecycle.repository';

// Zendesk Talk's live stats of the account (docs/api.md, "Voice stats"): read-only
// aggregates over callback requests and agents' availability, one statement each.

/** Zendesk's current_queue_activity. Times in seconds, over the requests waiting now. */
export interface QueueActivity {
  agentsOnline: number;
  callbacksWaiting: number;
  /** live inbound calls waiting: this service queues callbacks only, so always 0 */
  callsWaiting: number;
  averageWaitTime: number;
  longestWaitTime: number;
}

/** Zendesk's agents_activity row. Times in seconds. */
export interface AgentActivity {
  agentId: bigint;
  name: string;
  agentState: AgentState;
  callStatus: AgentCallStatus | null;
  /** time spent online, since the agent's first availability change */
  availableTime: number;
  callsAccepted: number;
  callsMissed: number;
  callbacksCompleted: number;
  /** mean dialing-to-completed time of the agent's completed callbacks; 0 when none */
  averageTalkTime: number;
}

type Int8 = string | number | bigint;

export class VoiceStatsRepository {
  constructor(private readonly db: TenantSql) {}

  async queueActivity(scope: AccountScope): Promise<QueueActivity> {
    const [row] = await this.db.query<{ online: number; waiting: number; avg: number | null; longest: number | null }>(
      scope,
      `SELECT (SELECT count(*)::int FROM agent_availabilities a JOIN users u ON u.account_id = a.account_id AND u.id = a.user_id
                WHERE a.account_id = $1 AND a.agent_state = 'online' AND u.active AND u.role IN ('agent', 'admin')) AS online,
              count(*)::int AS waiting,
              avg(EXTRACT(EPOCH FROM now() - c.created_at))::float8 AS avg,
              max(EXTRACT(EPOCH FROM now() - c.created_at))::float8 AS longest
         FROM callback_requests c WHERE c.account_id = $1 AND c.status IN ('queued', 'offered')`,
    );
    return {
      agentsOnline: row.online, callbacksWaiting: row.waiting, callsWaiting: 0,
      averageWaitTime: Math.round(Number(row.avg ?? 0)), longestWaitTime: Math.round(Number(row.longest ?? 0)),
    };
  }

  /** Every active agent and admin of the account, id ascending. */
  async agentsActivity(scope: AccountScope): Promise<AgentActivity[]> {
    const rows = await this.db.query<{
      id: Int8; name: string; agent_state: string | null; call_status: string | null; available: number | null; accepted: number | null;
      missed: number | null; completed: number | null; talk: number | null;
    }>(
      scope,
      `SELECT u.id, u.name, a.agent_state::text AS agent_state, a.call_status::text AS call_status,
              (a.available_seconds + CASE WHEN a.online_since IS NULL THEN 0 ELSE GREATEST(0, EXTRACT(EPOCH FROM now() - a.online_since)) END)::float8 AS available,
              a.calls_accepted AS accepted, a.calls_missed AS missed, a.callbacks_completed AS completed, a.talk_seconds AS talk
         FROM users u LEFT JOIN agent_availabilities a ON a.account_id = u.account_id AND a.user_id = u.id
        WHERE u.account_id = $1 AND u.active AND u.role IN ('agent', 'admin')
        ORDER BY u.id`,
    );
    return rows.map((r) => ({
      agentId: BigInt(r.id), name: r.name, agentState: (r.agent_state ?? 'offline') as AgentState, callStatus: r.call_status as AgentCallStatus | null,
      availableTime: Math.round(Number(r.available ?? 0)), callsAccepted: r.accepted ?? 0, callsMissed: r.missed ?? 0, callbacksCompleted: r.completed ?? 0,
      averageTalkTime: r.completed ? Math.round(Number(r.talk ?? 0) / r.completed) : 0,
    }));
  }
}
