import type { LightMyRequestResponse } from 'fastify';
import { auditOf } from './helpers/audit';
import { createTestApp, insertToken, type TestContext, type TestUser } from './helpers/test-app';

// docs/api.md, "Voice phone numbers": agents and admins read them, admins write them;
// deleting is a soft delete that cancels the number's open callback requests.

const json = { 'content-type': 'application/json' };
const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/;
const BASE = '/channels/voice/phone_numbers';

describe('voice phone numbers (docs/api.md, "Voice phone numbers")', () => {
  let ctx: TestContext;
  let account: bigint;
  let admin: TestUser;
  let agent: TestUser;
  let endUser: TestUser;
  let otherAdmin: TestUser;

  beforeAll(async () => {
    ctx = await createTestApp();
    account = await ctx.createAccount();
    admin = await ctx.createUser(account, 'admin');
    agent = await ctx.createUser(account, 'agent');
    endUser = await ctx.createUser(account, 'end_user');
    otherAdmin = await ctx.createUser(await ctx.createAccount(), 'admin');
  });
  afterAll(() => ctx.close());

  const send = (method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, authorization: string, payload?: unknown): Promise<LightMyRequestResponse> =>
    ctx.inject({ method, url: `/api/v2${url}`, headers: payload === undefined ? { authorization } : { ...json, authorization }, payload: payload as object });
  const create = async (number: string, extra: Record<string, unknown> = {}, who: TestUser = admin) => {
    const res = await send('POST', BASE, who.basic, { phone_number: { number, ...extra } });
    expect([res.statusCode, res.json()]).toEqual([201, expect.anything()]);
    return res.json().phone_number as { id: number; number: string; url: string };
  };
  const callback = (phoneNumberId: number, requester = '+14155552672') =>
    send('POST', '/channels/voice/callback_requests', agent.basic, { callback_request: { phone_number_id: phoneNumberId, requester_phone_number: requester } });

  it('POST creates a number: 201, Location, E.164 and display forms, country, capabilities, audit', async () => {
    const res = await send('POST', `${BASE}.json`, admin.basic, {
      phone_number: { number: ' +442071838750 ', nickname: 'London', callback_enabled: true, capabilities: { sms: true, fax: true }, id: 3, display_number: 'x' },
    });
    expect(res.statusCode).toBe(201);
    const phone = res.json().phone_number;
    expect(phone).toEqual({
      id: expect.any(Number), url: `http://localhost:80/api/v2${BASE}/${phone.id}.json`, number: '+442071838750', display_number: '+44 20 7183 8750',
      nickname: 'London', country_code: 'GB', capabilities: { voice: true, sms: true, mms: false }, callback_enabled: true,
      created_at: expect.stringMatching(ISO), updated_at: null,
    });
    expect(res.headers.location).toBe(phone.url);
    expect(await auditOf(ctx, 'voice_phone_number', phone.id)).toEqual([
      expect.objectContaining({ action: 'create', source_label: '+442071838750', actor_id: String(admin.id), request_id: res.headers['x-request-id'], via: 'api' }),
    ]);
    const plain = await create('+14155552671');
    expect(plain).toMatchObject({ display_number: '+1 415 555 2671', country_code: 'US', nickname: null, callback_enabled: false, capabilities: { voice: true, sms: false, mms: false } });
  });

  it.each([
    ['no number', {}, { number: [{ error: 'BlankValue', description: 'Number: cannot be blank' }] }],
    ['a number that is not E.164', { number: '4155552671' }, { number: [{ error: 'InvalidValue', description: 'Number: 4155552671 is not a valid E.164 phone number' }] }],
    ['an invalid number', { number: '+1415555' }, { number: [{ error: 'InvalidValue', description: 'Number: +1415555 is not a valid E.164 phone number' }] }],
    ['a number as a JSON number', { number: 14155552671 }, { number: [{ error: 'InvalidValue', description: 'Number: must be a string' }] }],
    ['a string for callback_enabled', { number: '+14155552680', callback_enabled: 'yes' }, { callback_enabled: [{ error: 'InvalidValue', description: 'Callback enabled: must be true or false' }] }],
    ['capabilities that are not flags', { number: '+14155552680', capabilities: { voice: 'on' } }, {
      capabilities: [{ error: 'InvalidValue', description: 'Capabilities: must be an object of true/false flags (voice, sms, mms)' }],
    }],
    ['capabilities as an array', { number: '+14155552680', capabilities: [true] }, {
      capabilities: [{ error: 'InvalidValue', description: 'Capabilities: must be an object of true/false flags (voice, sms, mms)' }],
    }],
    ['a long nickname', { number: '+14155552680', nickname: 'n'.repeat(256) }, { nickname: [{ error: 'TooLong', description: 'Nickname: is too long (maximum is 255 characters)' }] }],
  ])('refuses %s with 422 and stores nothing', async (_what, body, details) => {
    const before = await ctx.db.prisma.voicePhoneNumber.count();
    const res = await send('POST', BASE, admin.basic, { phone_number: body });
    expect([res.statusCode, res.json()]).toEqual([422, { error: 'RecordInvalid', description: 'Record validation errors', details }]);
    expect(await ctx.db.prisma.voicePhoneNumber.count()).toBe(before);
  });

  it('refuses a live duplicate with 422; another account may hold the same number', async () => {
    await create('+12518717081');
    const again = await send('POST', BASE, admin.basic, { number: '+12518717081' });
    expect([again.statusCode, again.json().details]).toEqual([422, { number: [{ error: 'InvalidValue', description: 'Number: +12518717081 already exists in this account' }] }]);
    await create('+12518717081', {}, otherAdmin);
  });

  it('agents and admins read; end users and writers without the right do not; other accounts get 404', async () => {
    const phone = await create('+12518717082');
    for (const who of [admin, agent]) {
      expect((await send('GET', `${BASE}/${phone.id}.json`, who.basic)).json().phone_number).toMatchObject({ id: phone.id, number: '+12518717082' });
      expect((await send('GET', BASE, who.basic)).json().phone_numbers.map((p: { id: number }) => p.id)).toContain(phone.id);
    }
    expect((await send('GET', BASE, endUser.basic)).statusCode).toBe(403);
    expect((await send('POST', BASE, agent.basic, { number: '+12518717083' })).statusCode).toBe(403);
    expect((await send('DELETE', `${BASE}/${phone.id}`, agent.basic)).statusCode).toBe(403);
    const readOnly = await insertToken(ctx, admin, { scopes: ['read'] });
    expect((await send('PUT', `${BASE}/${phone.id}`, `Bearer ${readOnly.token}`, { nickname: 'x' })).statusCode).toBe(403);
    for (const method of ['GET', 'PUT', 'DELETE'] as const) {
      const res = await send(method, `${BASE}/${phone.id}`, otherAdmin.basic, method === 'PUT' ? { nickname: 'x' } : undefined);
      expect([method, res.statusCode]).toEqual([method, 404]);
    }
    for (const id of ['0', 'x', '-1']) expect((await send('GET', `${BASE}/${id}`, admin.basic)).statusCode).toBe(404);
  });

  it('PUT changes nickname, callback_enabled and capabilities; number is read-only and ignored', async () => {
    const phone = await create('+12518717084');
    const res = await send('PUT', `${BASE}/${phone.id}`, admin.basic, { phone_number: { number: '+14155550000', nickname: 'Main', capabilities: { mms: true } } });
    expect(res.statusCode).toBe(200);
    expect(res.json().phone_number).toMatchObject({ number: '+12518717084', nickname: 'Main', capabilities: { voice: true, sms: false, mms: true }, updated_at: expect.stringMatching(ISO) });
    const off = await send('PUT', `${BASE}/${phone.id}.json`, admin.basic, { callback_enabled: true, nickname: null, capabilities: { voice: false } });
    expect(off.json().phone_number).toMatchObject({ nickname: null, callback_enabled: true, capabilities: { voice: false, sms: false, mms: true } });
    expect((await auditOf(ctx, 'voice_phone_number', phone.id)).slice(1).map((a) => a.changed_fields)).toEqual([
      ['nickname', 'capabilities.mms'],
      ['nickname', 'callback_enabled', 'capabilities.voice'],
    ]);
    const bad = await send('PUT', `${BASE}/${phone.id}`, admin.basic, { callback_enabled: null });
    expect([bad.statusCode, Object.keys(bad.json().details)]).toEqual([422, ['callback_enabled']]);
  });

  it('DELETE is a soft delete: gone from list and show, open callback requests cancelled in the same change, new ones refused', async () => {
    const phone = await create('+12518717085', { nickname: 'Doomed' });
    const kept = await create('+12518717086');
    expect((await callback(phone.id)).statusCode).toBe(201);
    expect((await callback(phone.id, '+14155552673')).statusCode).toBe(201);
    expect((await callback(kept.id)).statusCode).toBe(201);
    const [done] = await ctx.db.prisma.callbackRequest.findMany({ where: { phoneNumberId: BigInt(phone.id) }, orderBy: { id: 'asc' } });
    await ctx.db.prisma.callbackRequest.update({ where: { id: done.id }, data: { status: 'completed' } });
    const calling = await ctx.db.prisma.callbackRequest.create({
      data: { accountId: account, phoneNumberId: BigInt(phone.id), requesterPhoneNumber: '+14155552674', requestedGroupIds: [], routedGroupIds: [], status: 'dialing' },
    });

    const res = await send('DELETE', `${BASE}/${phone.id}`, admin.basic);
    expect([res.statusCode, res.body]).toEqual([204, '']);
    expect((await send('GET', `${BASE}/${phone.id}`, admin.basic)).statusCode).toBe(404);
    expect((await send('GET', BASE, admin.basic)).json().phone_numbers.map((p: { id: number }) => p.id)).not.toContain(phone.id);
    expect((await send('PUT', `${BASE}/${phone.id}`, admin.basic, { nickname: 'x' })).statusCode).toBe(404);
    expect((await send('DELETE', `${BASE}/${phone.id}`, admin.basic)).statusCode).toBe(404);

    const statuses = await ctx.db.prisma.callbackRequest.findMany({ where: { phoneNumberId: BigInt(phone.id) }, orderBy: { id: 'asc' }, select: { id: true, status: true } });
    expect(statuses.map((s) => s.status)).toEqual(['completed', 'cancelled', 'cancelled']);
    expect(statuses.at(-1)!.id).toBe(calling.id);
    expect((await ctx.db.prisma.callbackRequest.findFirstOrThrow({ where: { phoneNumberId: BigInt(kept.id) } })).status).toBe('queued');

    const refused = await callback(phone.id);
    expect(refused.statusCode).toBe(422);
    expect(refused.json().details.phone_number_id[0].error).toBe('NotFound');
    const [, audit] = await auditOf(ctx, 'voice_phone_number', phone.id);
    expect(audit).toMatchObject({ action: 'destroy', source_label: '+12518717085', change_description: 'Deleted; 2 open callback requests cancelled', request_id: res.headers['x-request-id'] });
  });

  it('POSTing a deleted number again brings the row back (201, same id, new attributes)', async () => {
    const phone = await create('+12518717087', { nickname: 'First life', callback_enabled: true });
    expect((await send('DELETE', `${BASE}/${phone.id}`, admin.basic)).statusCode).toBe(204);
    const res = await send('POST', BASE, admin.basic, { phone_number: { number: '+12518717087', nickname: 'Second life' } });
    expect(res.statusCode).toBe(201);
    expect(res.json().phone_number).toMatchObject({ id: phone.id, nickname: 'Second life', callback_enabled: false });
    expect((await send('GET', `${BASE}/${phone.id}`, admin.basic)).statusCode).toBe(200);
    expect((await callback(phone.id)).statusCode).toBe(201);
    expect((await auditOf(ctx, 'voice_phone_number', phone.id)).map((a) => a.action)).toEqual(['create', 'destroy', 'create']);
  });

  it('lists with offset pagination', async () => {
    const own = await ctx.createAccount();
    const owner = await ctx.createUser(own, 'admin');
    for (const n of ['+12518717091', '+12518717092', '+12518717093']) await create(n, {}, owner);
    const page = (await send('GET', `${BASE}?page=1&per_page=2`, owner.basic)).json();
    expect(page.phone_numbers.map((p: { number: string }) => p.number)).toEqual(['+12518717091', '+12518717092']);
    expect(page).toMatchObject({ count: 3, previous_page: null, next_page: `http://localhost/api/v2${BASE}?page=2&per_page=2` });
    expect((await send('GET', `${BASE}?per_page=abc`, owner.basic)).statusCode).toBe(400);
  });

  describe('GraphQL', () => {
    const gql = (who: TestUser, query: string, variables?: Record<string, unknown>) => ctx.graphql(query, variables, { authorization: who.basic });

    it('phoneNumbers keeps its shape with the new fields; phoneNumber(id); the mutations', async () => {
      const created = await gql(admin, 'mutation { createPhoneNumber(input: { number: "+12518717094", capabilities: { sms: true } }) { id number displayNumber countryCode capabilities { voice sms mms } } }');
      const phone = created.json().data.createPhoneNumber;
      expect(phone).toMatchObject({ number: '+12518717094', displayNumber: '+1 251 871 7094', countryCode: 'US', capabilities: { voice: true, sms: true, mms: false } });
      expect((await gql(agent, 'query($id: ID!) { phoneNumber(id: $id) { number } }', { id: phone.id })).json().data.phoneNumber).toEqual({ number: '+12518717094' });
      expect((await gql(otherAdmin, 'query($id: ID!) { phoneNumber(id: $id) { number } }', { id: phone.id })).json().data.phoneNumber).toBeNull();
      const list = await gql(agent, '{ phoneNumbers { id number callbackEnabled nickname } phoneNumberCount }');
      expect(list.json().data.phoneNumbers.map((p: { id: string }) => p.id)).toContain(phone.id);
      expect(list.json().data.phoneNumberCount).toBe(list.json().data.phoneNumbers.length);
      const updated = await gql(admin, 'mutation($id: ID!) { updatePhoneNumber(id: $id, input: { nickname: "Gql" }) { number nickname } }', { id: phone.id });
      expect(updated.json().data.updatePhoneNumber).toEqual({ number: '+12518717094', nickname: 'Gql' });
      expect((await gql(admin, 'mutation($id: ID!) { deletePhoneNumber(id: $id) }', { id: phone.id })).json().data.deletePhoneNumber).toBe(true);
      const again = await gql(admin, 'mutation($id: ID!) { deletePhoneNumber(id: $id) }', { id: phone.id });
      expect(again.json().errors[0].extensions.code).toBe('NOT_FOUND');
    });
  });
});

// A callback request racing its number's deletion: on PostgreSQL both run at once
// (on PGlite one after the other). Whichever order the database picks, no request
// may stay queued on a deleted number, and none is stored after the deletion.
describe('deleting a number while callback requests for it arrive', () => {
  let ctx: TestContext;
  let admin: TestUser;
  let agent: TestUser;

  beforeAll(async () => {
    ctx = await createTestApp({ limits: { callbackRequests: 100_000 } });
    const account = await ctx.createAccount();
    admin = await ctx.createUser(account, 'admin');
    agent = await ctx.createUser(account, 'agent');
  });
  afterAll(() => ctx.close());

  it('leaves no queued request on a deleted number: each is refused (422) or cancelled with it', async () => {
    for (let round = 0; round < 15; round++) {
      const created = await ctx.inject({ method: 'POST', url: `/api/v2${BASE}`, headers: { ...json, authorization: admin.basic }, payload: { phone_number: { number: `+1415555${3000 + round}` } } });
      expect(created.statusCode).toBe(201);
      const id = created.json().phone_number.id as number;
      const callback = () =>
        ctx.inject({ method: 'POST', url: '/api/v2/channels/voice/callback_requests', headers: { ...json, authorization: agent.basic }, payload: { callback_request: { phone_number_id: id, requester_phone_number: '+14155552672' } } });
      const answers = await Promise.all([callback(), callback(), ctx.inject({ method: 'DELETE', url: `/api/v2${BASE}/${id}`, headers: { authorization: admin.basic } }), callback(), callback()]);
      expect(answers[2].statusCode).toBe(204);
      for (const a of [answers[0], answers[1], answers[3], answers[4]]) expect([201, 422]).toContain(a.statusCode);
      const stored = await ctx.db.sql<{ status: string }>('SELECT status::text FROM callback_requests WHERE phone_number_id = $1', [String(id)]);
      expect(stored.filter((r) => r.status === 'queued')).toEqual([]);
      // every 201 is a stored (and now cancelled) request; every 422 stored nothing
      expect(stored.length).toBe([answers[0], answers[1], answers[3], answers[4]].filter((a) => a.statusCode === 201).length);
    }
  });
});
