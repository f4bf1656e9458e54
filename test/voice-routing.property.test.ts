import fc from 'fast-check';
import { eligible, route, type QueuedRequest, type RoutableAgent } from '../src/domain/voice/routing';
import { CALL_OUTCOMES, outcomeAction, transition, TRANSITIONS, type CallbackAction, type CallbackStatus } from '../src/domain/voice/callback-transitions';
import { ConflictError } from '../src/domain/errors';

// Routing is a pure function over the queue and the agents (docs/api.md, "The callback
// lifecycle"): these properties hold for any queue and any agents, and the transition
// table answers every (status, action) pair, legal or not.

const GROUPS = [1n, 2n, 3n];
const agentArb = (id: bigint) =>
  fc.record({
    id: fc.constant(id),
    groupIds: fc.subarray(GROUPS),
    free: fc.boolean(),
    idleSince: fc.option(fc.integer({ min: 0, max: 1_000 }).map((s) => new Date(1_700_000_000_000 + s * 1000)), { nil: null }),
  });
const agentsArb = fc.integer({ min: 0, max: 8 }).chain((n) => fc.tuple(...Array.from({ length: n }, (_, i) => agentArb(BigInt(i + 1)))));
const requestArb = (id: bigint) =>
  fc.record({ id: fc.constant(id), routedGroupIds: fc.subarray(GROUPS, { maxLength: 2 }), offeredAgentIds: fc.subarray(Array.from({ length: 8 }, (_, i) => BigInt(i + 1))) });
const queueArb = fc.integer({ min: 0, max: 10 }).chain((n) => fc.tuple(...Array.from({ length: n }, (_, i) => requestArb(BigInt(100 + i)))));

const idle = (a: RoutableAgent) => a.idleSince?.getTime() ?? Number.MAX_SAFE_INTEGER;

describe('routing (docs/api.md, "The callback lifecycle")', () => {
  it('one offer per agent and per request, only to free eligible agents, a new round only when every eligible agent had it', () => {
    fc.assert(
      fc.property(queueArb, agentsArb, (queue: QueuedRequest[], agents: RoutableAgent[]) => {
        const offers = route(queue, agents);
        expect(new Set(offers.map((o) => o.agentId)).size).toBe(offers.length);
        expect(new Set(offers.map((o) => o.requestId)).size).toBe(offers.length);
        for (const o of offers) {
          const agent = agents.find((a) => a.id === o.agentId)!;
          const request = queue.find((r) => r.id === o.requestId)!;
          expect(agent.free && eligible(agent, request)).toBe(true);
          const offeredBefore = request.offeredAgentIds.includes(agent.id);
          // an agent offered it in this round gets it again only in a new round, which starts once every eligible agent had it
          expect(offeredBefore).toBe(o.newRound);
          if (o.newRound) expect(agents.filter((a) => eligible(a, request)).every((a) => request.offeredAgentIds.includes(a.id))).toBe(true);
        }
      }),
      { numRuns: 500 },
    );
  });

  it('leaves no request waiting that a free, eligible, untaken agent not yet offered it could take', () => {
    fc.assert(
      fc.property(queueArb, agentsArb, (queue: QueuedRequest[], agents: RoutableAgent[]) => {
        const offers = route(queue, agents);
        const taken = new Set(offers.map((o) => o.agentId));
        const served = new Set(offers.map((o) => o.requestId));
        for (const r of queue.filter((q) => !served.has(q.id))) {
          const couldTake = agents.filter((a) => a.free && !taken.has(a.id) && eligible(a, r) && !r.offeredAgentIds.includes(a.id));
          expect(couldTake.map((a) => a.id)).toEqual([]);
        }
      }),
      { numRuns: 500 },
    );
  });

  it('gives the first request in queue order to the eligible agent idle longest', () => {
    fc.assert(
      fc.property(queueArb, agentsArb, (queue: QueuedRequest[], agents: RoutableAgent[]) => {
        const offers = route(queue, agents);
        if (queue.length === 0 || offers.length === 0) return;
        const first = queue[0];
        const fresh = agents.filter((a) => a.free && eligible(a, first) && !first.offeredAgentIds.includes(a.id));
        if (fresh.length === 0) return;
        const offer = offers.find((o) => o.requestId === first.id)!;
        expect(offer).toBeDefined();
        const best = Math.min(...fresh.map(idle));
        expect(idle(agents.find((a) => a.id === offer.agentId)!)).toBe(best);
      }),
      { numRuns: 500 },
    );
  });

  it('never hands a request back, in the same decision, to the agent who has just declined or missed it', () => {
    fc.assert(
      fc.property(queueArb, agentsArb, fc.nat(), fc.nat(), (queue: QueuedRequest[], agents: RoutableAgent[], r, a) => {
        if (queue.length === 0 || agents.length === 0) return;
        const held = { requestId: queue[r % queue.length].id, agentId: agents[a % agents.length].id };
        const offers = route(queue, agents, held);
        expect(offers.some((o) => o.requestId === held.requestId && o.agentId === held.agentId)).toBe(false);
      }),
      { numRuns: 500 },
    );
    // the only eligible agent declined: nobody gets it now
    const only: RoutableAgent = { id: 7n, groupIds: [], free: true, idleSince: null };
    expect(route([{ id: 1n, routedGroupIds: [], offeredAgentIds: [7n] }], [only], { requestId: 1n, agentId: 7n })).toEqual([]);
  });

  it('routes a request without groups to any agent, and one with groups to members of one of them', () => {
    const agent = (id: bigint, groupIds: bigint[]): RoutableAgent => ({ id, groupIds, free: true, idleSince: new Date(Number(id)) });
    expect(route([{ id: 1n, routedGroupIds: [], offeredAgentIds: [] }], [agent(5n, [])])).toEqual([{ requestId: 1n, agentId: 5n, newRound: false }]);
    expect(route([{ id: 1n, routedGroupIds: [2n], offeredAgentIds: [] }], [agent(5n, [1n]), agent(6n, [2n, 3n])])).toEqual([{ requestId: 1n, agentId: 6n, newRound: false }]);
    expect(route([{ id: 1n, routedGroupIds: [2n], offeredAgentIds: [] }], [agent(5n, [1n])])).toEqual([]);
  });
});

describe('the transition table', () => {
  const STATUSES: CallbackStatus[] = ['queued', 'offered', 'accepted', 'dialing', 'completed', 'failed', 'cancelled'];
  it('answers every status and action: the move of the table, or a 409 that names the status', () => {
    for (const status of STATUSES) {
      for (const action of Object.keys(TRANSITIONS) as CallbackAction[]) {
        const t = TRANSITIONS[action];
        if (t.from.includes(status)) expect(transition(status, action).to).toBe(t.to);
        else expect(() => transition(status, action)).toThrow(ConflictError);
      }
    }
    expect(() => transition('completed', 'cancel')).toThrow(/completed: it cannot be cancelled/);
  });

  it('ends requests only in completed, failed or cancelled, and never moves them again', () => {
    for (const final of ['completed', 'failed', 'cancelled'] as const) {
      expect(Object.values(TRANSITIONS).filter((t) => t.from.includes(final))).toEqual([]);
    }
  });

  it('maps outcomes: answered completes; no_answer and busy retry until the attempts are used; failed fails at once', () => {
    expect(CALL_OUTCOMES.map((o) => outcomeAction(o, 1, 3))).toEqual(['answer', 'requeue', 'requeue', 'fail']);
    expect(CALL_OUTCOMES.map((o) => outcomeAction(o, 3, 3))).toEqual(['answer', 'fail', 'fail', 'fail']);
  });
});
