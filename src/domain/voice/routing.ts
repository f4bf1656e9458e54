// Routing (docs/api.md, "The callback lifecycle"), as a pure function over the queue
// and the agents: which agent gets an offer of which request now. The lifecycle service
// reads both under the account's lock, asks route(), and writes its offers in the same
// transaction, so that a decision is never made on a stale picture.

/** A queued request, as routing sees it. */
export interface QueuedRequest {
  id: bigint;
  /** the groups it routes to (all it asked for, or the first with omnichannel routing); empty: any agent */
  routedGroupIds: readonly bigint[];
  /** agents offered it in the current round */
  offeredAgentIds: readonly bigint[];
}

/** An online agent of the account. */
export interface RoutableAgent {
  id: bigint;
  groupIds: readonly bigint[];
  /** no call (on_call, wrap_up) and no pending offer */
  free: boolean;
  /** free since; the agent idle longest gets the next offer */
  idleSince: Date | null;
}

export interface Offer {
  requestId: bigint;
  agentId: bigint;
  /** every eligible agent had been offered the request: a new round starts with this offer */
  newRound: boolean;
}

/** An agent may take a request routed to these groups: a member of one of them, or any agent when there are none. */
export function eligible(agent: RoutableAgent, request: QueuedRequest): boolean {
  return request.routedGroupIds.length === 0 || request.routedGroupIds.some((g) => agent.groupIds.includes(g));
}

function idleLongest(agents: RoutableAgent[]): RoutableAgent {
  return agents.reduce((best, a) => {
    const t = a.idleSince?.getTime() ?? Number.MAX_SAFE_INTEGER;
    const b = best.idleSince?.getTime() ?? Number.MAX_SAFE_INTEGER;
    return t < b || (t === b && a.id < best.id) ? a : best;
  });
}

/**
 * The offers to make now. Requests in queue order (the caller's order: creation); each
 * goes to the eligible free agent idle longest among those not offered it in this round.
 * When every eligible online agent (free or not) was offered it, a new round begins; while
 * some eligible agent has not been offered it yet but is busy, the request waits for them.
 * At most one offer per agent and one per request. `held`: a request and the agent who has
 * just declined or missed it, who does not get it back in this decision (a later one may,
 * in a new round).
 */
export function route(queue: readonly QueuedRequest[], agents: readonly RoutableAgent[], held?: { requestId: bigint; agentId: bigint }): Offer[] {
  const taken = new Set<bigint>();
  const offers: Offer[] = [];
  let freeLeft = agents.filter((a) => a.free).length;
  for (const request of queue) {
    if (freeLeft === 0) break;
    const candidates = agents.filter((a) => eligible(a, request));
    // an agent who has just declined or missed the request is not handed it back in the same decision
    const heldBack = (a: RoutableAgent) => held !== undefined && held.requestId === request.id && held.agentId === a.id;
    const free = candidates.filter((a) => a.free && !taken.has(a.id) && !heldBack(a));
    if (free.length === 0) continue;
    const offered = new Set(request.offeredAgentIds);
    const fresh = free.filter((a) => !offered.has(a.id));
    let pick: RoutableAgent;
    let newRound = false;
    if (fresh.length > 0) pick = idleLongest(fresh);
    else if (candidates.every((a) => offered.has(a.id))) {
      pick = idleLongest(free);
      newRound = true;
    } else continue;
    taken.add(pick.id);
    freeLeft--;
    offers.push({ requestId: request.id, agentId: pick.id, newRound });
  }
  return offers;
}
