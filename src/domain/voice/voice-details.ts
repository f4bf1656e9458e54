import type { AvailabilityRow, LifecycleRow } from './callback-lifecycle.repository';
import { isoSeconds } from '../events/event-details';

// Events' `detail` of the voice resources: as the REST API shows them (docs/api.md,
// "Events"), without what needs a query of its own (queue position, history).

export function callbackDetail(r: LifecycleRow): Record<string, unknown> {
  return {
    id: Number(r.id), status: r.status, phone_number_id: Number(r.phoneNumberId), requester_phone_number: r.requesterPhoneNumber,
    group_ids: r.requestedGroupIds.map(Number), agent_id: r.agentId === null ? null : Number(r.agentId), attempts: r.attempts,
    created_at: isoSeconds(r.createdAt), updated_at: isoSeconds(r.updatedAt), completed_at: isoSeconds(r.completedAt),
  };
}

/** Zendesk Talk's availability object, with the agent's id. */
export function availabilityDetail(a: AvailabilityRow): Record<string, unknown> {
  return { agent_id: Number(a.userId), agent_state: a.agentState, call_status: a.callStatus, via: a.via };
}
