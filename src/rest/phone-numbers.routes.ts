import { Type } from 'typebox';
import {
  RestCreatePhoneNumberDocument,
  RestDeletePhoneNumberDocument,
  RestListPhoneNumbersDocument,
  RestShowPhoneNumberDocument,
  RestUpdatePhoneNumberDocument,
  type RestPhoneNumberFragment,
} from '../generated/graphql';
import { NotFoundError } from '../domain/errors';
import { defineRoute, type AnyRestRoute } from './adapter';
import { isoSeconds } from './body';
import { offsetListPage, offsetListVariables } from './query';
import {
  answer,
  BodyField,
  errorResponses,
  HEADERS,
  IdParams,
  IgnoredBody,
  mustBe,
  NoContent,
  Nullable,
  NullableTimestamp,
  OffsetPageQuery,
  offsetListFields,
  Timestamp,
  unwrap,
  wrappedBody,
  type Fields,
} from './schemas';

const Capabilities = Type.Object(
  { voice: Type.Boolean(), sms: Type.Boolean(), mms: Type.Boolean() },
  { additionalProperties: false },
);

/** Zendesk's voice phone number JSON (docs/api.md, "Voice phone numbers"). */
const PhoneNumberJson = Type.Object(
  {
    id: Type.Integer(),
    url: Type.String({ format: 'uri' }),
    number: Type.String({ description: 'E.164; read-only after creation' }),
    display_number: Type.String({ description: 'The number formatted for its country' }),
    nickname: Nullable(Type.String()),
    country_code: Nullable(Type.String(), { description: 'ISO 3166-1 alpha-2 country of the number, when known' }),
    capabilities: Capabilities,
    callback_enabled: Type.Boolean(),
    created_at: Timestamp,
    updated_at: NullableTimestamp,
  },
  {
    additionalProperties: false,
    title: 'VoicePhoneNumber',
    examples: [{
      id: 5, url: 'https://help.example.com/api/v2/channels/voice/phone_numbers/5.json', number: '+14155552671', display_number: '+1 (415) 555-2671',
      nickname: 'Sales', country_code: 'US', capabilities: { voice: true, sms: false, mms: false }, callback_enabled: true, created_at: '2026-11-21T10:29:59Z', updated_at: null,
    }],
  },
);
const OnePhoneNumber = Type.Object({ phone_number: PhoneNumberJson }, { additionalProperties: false });

/** Zendesk's voice phone number JSON (docs/api.md, "Voice phone numbers"). */
function serializePhoneNumber(p: RestPhoneNumberFragment) {
  return {
    id: Number(p.id),
    url: p.url,
    number: p.number,
    display_number: p.displayNumber,
    nickname: p.nickname ?? null,
    country_code: p.countryCode ?? null,
    capabilities: { voice: p.capabilities.voice, sms: p.capabilities.sms, mms: p.capabilities.mms },
    callback_enabled: p.callbackEnabled,
    created_at: isoSeconds(p.createdAt)!,
    updated_at: isoSeconds(p.updatedAt),
  };
}

const FLAGS = ['voice', 'sms', 'mms'] as const;

/** {"phone_number": {...}} (or flat); `number` is read by create only (update ignores it: read-only). */
const UPDATE_FIELDS = {
  nickname: BodyField(Type.String(), mustBe('Nickname', 'string'), 'At most 255 characters; null or "" removes it'),
  callback_enabled: BodyField(Type.Boolean(), mustBe('Callback enabled', 'boolean'), 'false by default'),
  capabilities: BodyField(
    Type.Object({ voice: Type.Optional(Type.Boolean()), sms: Type.Optional(Type.Boolean()), mms: Type.Optional(Type.Boolean()) }),
    `${mustBe('Capabilities', 'flags')} (${FLAGS.join(', ')})`,
    'The given flags are set, the others keep their value (false on create); unknown keys are ignored',
  ),
};
const CREATE_FIELDS = {
  number: BodyField(Type.String(), mustBe('Number', 'string'), 'Required: E.164 (+ and 8–15 digits), valid for its country; read-only afterwards'),
  ...UPDATE_FIELDS,
};

/**
 * The GraphQL input of a body: the known capabilities only (unknown keys are ignored).
 * An absent field is undefined, which the executor leaves out (a partial update keeps it).
 */
function updateInput({ nickname, callback_enabled: callbackEnabled, capabilities }: Fields<typeof UPDATE_FIELDS>) {
  const flags = capabilities && { voice: capabilities.voice, sms: capabilities.sms, mms: capabilities.mms };
  return { nickname, callbackEnabled, capabilities: flags };
}

const BASE = '/channels/voice/phone_numbers';
const TAGS = ['Voice phone numbers'];

const LIST_SCHEMA = {
  operationId: 'listPhoneNumbers', summary: 'List voice phone numbers', tags: TAGS,
  description: "The account's numbers, id ascending, in offset pages (page, per_page). Agents and admins.",
  querystring: OffsetPageQuery,
  response: {
    200: answer(
      Type.Object({
        phone_numbers: Type.Array(PhoneNumberJson),
        ...offsetListFields('phone numbers'),
      }, { additionalProperties: false }),
      'A page of phone numbers',
    ),
    ...errorResponses(),
  },
};

export const phoneNumberRoutes: AnyRestRoute[] = [
  defineRoute({
    method: 'GET',
    paths: [BASE],
    document: RestListPhoneNumbersDocument,
    schema: LIST_SCHEMA,
    variables: (req) => offsetListVariables(req.query),
    respond: (data, req) => ({
      status: 200,
      body: { phone_numbers: data.phoneNumbers.map(serializePhoneNumber), ...offsetListPage(req.query, data.phoneNumberCount, req.baseUrl, req.url) },
    }),
  }),
  defineRoute({
    method: 'GET',
    paths: [`${BASE}/:id`],
    document: RestShowPhoneNumberDocument,
    schema: {
      operationId: 'showPhoneNumber', summary: 'Show a voice phone number', tags: TAGS,
      description: 'Agents and admins.',
      params: IdParams,
      response: { 200: answer(OnePhoneNumber, 'The phone number'), ...errorResponses({ id: true }) },
    },
    variables: (req) => ({ id: req.params.id }),
    respond: (data) => {
      if (!data.phoneNumber) throw new NotFoundError();
      return { status: 200, body: { phone_number: serializePhoneNumber(data.phoneNumber) } };
    },
  }),
  defineRoute({
    method: 'POST',
    paths: [BASE],
    document: RestCreatePhoneNumberDocument,
    schema: {
      operationId: 'createPhoneNumber', summary: 'Create a voice phone number', tags: TAGS,
      description: 'Creating a deleted number again brings it back, with its id and the new attributes. Admins.',
      body: wrappedBody('phone_number', CREATE_FIELDS),
      response: { 201: answer(OnePhoneNumber, 'The phone number', HEADERS.location), ...errorResponses({ body: 'fields' }) },
    },
    variables: (req) => {
      const fields = unwrap(req.body, 'phone_number');
      return { input: { number: fields.number, ...updateInput(fields) } };
    },
    respond: (data, req) => ({
      status: 201,
      body: { phone_number: serializePhoneNumber(data.createPhoneNumber) },
      headers: { location: `${req.baseUrl}/api/v2${BASE}/${data.createPhoneNumber.id}.json` },
    }),
  }),
  defineRoute({
    method: 'PUT',
    paths: [`${BASE}/:id`],
    document: RestUpdatePhoneNumberDocument,
    schema: {
      operationId: 'updatePhoneNumber', summary: 'Update a voice phone number', tags: TAGS,
      description: 'Partial: omitted fields keep their value; a field that is present must be valid. `number` is read-only (ignored). Admins.',
      params: IdParams,
      body: wrappedBody('phone_number', UPDATE_FIELDS),
      response: { 200: answer(OnePhoneNumber, 'The phone number, updated_at set'), ...errorResponses({ id: true, body: 'fields' }) },
    },
    variables: (req) => ({ id: req.params.id, input: updateInput(unwrap(req.body, 'phone_number')) }),
    respond: (data) => ({ status: 200, body: { phone_number: serializePhoneNumber(data.updatePhoneNumber) } }),
  }),
  defineRoute({
    method: 'DELETE',
    paths: [`${BASE}/:id`],
    document: RestDeletePhoneNumberDocument,
    schema: {
      operationId: 'deletePhoneNumber', summary: 'Delete a voice phone number', tags: TAGS,
      description: 'Soft delete: the number disappears, and its queued and calling callback requests are cancelled. Admins.',
      params: IdParams,
      body: IgnoredBody,
      response: { 204: NoContent('Deleted'), ...errorResponses({ id: true, body: 'ignored' }) },
    },
    variables: (req) => ({ id: req.params.id }),
    respond: () => ({ status: 204 }),
  }),
];
