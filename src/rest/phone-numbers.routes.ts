import { Type } from 'typebox';
import {
  RestCreatePhoneNumberDocument,
  RestDeletePhoneNumberDocument,
  RestListPhoneNumbersDocument,
  RestShowPhoneNumberDocument,
  RestUpdatePhoneNumberDocument,
  type RestPhoneNumberFragment,
} from '../generated/graphql';
import type { AnyRestRoute } from './adapter';
import { isoSeconds } from './body';
import { createRoute, deleteRoute, offsetListRoute, showRoute, updateRoute } from './record-routes';
import { BodyField, Keyed, mustBe, Nullable, NullableTimestamp, Timestamp, unwrap, wrappedBody, type Fields } from './schemas';

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
const OnePhoneNumber = Keyed('phone_number', PhoneNumberJson);

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


const ONE_NUMBER = (description: string) => ({ schema: OnePhoneNumber, description });
const oneNumber = (p: RestPhoneNumberFragment) => ({ phone_number: serializePhoneNumber(p) });

export const phoneNumberRoutes: AnyRestRoute[] = [
  offsetListRoute({
    path: BASE,
    document: RestListPhoneNumbersDocument,
    schema: { operationId: 'listPhoneNumbers', summary: 'List voice phone numbers', tags: TAGS, description: "The account's numbers, id ascending, in offset pages (page, per_page). Agents and admins." },
    key: 'phone_numbers',
    what: 'phone numbers',
    record: PhoneNumberJson,
    records: (data) => data.phoneNumbers.map(serializePhoneNumber),
    count: (data) => data.phoneNumberCount,
  }),
  showRoute({
    path: `${BASE}/:id`,
    document: RestShowPhoneNumberDocument,
    schema: { operationId: 'showPhoneNumber', summary: 'Show a voice phone number', tags: TAGS, description: 'Agents and admins.' },
    answer: ONE_NUMBER('The phone number'),
    body: (data) => data.phoneNumber && oneNumber(data.phoneNumber),
  }),
  createRoute({
    path: BASE,
    document: RestCreatePhoneNumberDocument,
    schema: {
      operationId: 'createPhoneNumber', summary: 'Create a voice phone number', tags: TAGS, body: wrappedBody('phone_number', CREATE_FIELDS),
      description: 'Creating a deleted number again brings it back, with its id and the new attributes. Admins.',
    },
    answer: ONE_NUMBER('The phone number'),
    variables: (req) => {
      const fields = unwrap(req.body, 'phone_number');
      return { input: { number: fields.number, ...updateInput(fields) } };
    },
    created: (data) => data.createPhoneNumber,
    body: (data) => oneNumber(data.createPhoneNumber),
  }),
  updateRoute({
    path: `${BASE}/:id`,
    document: RestUpdatePhoneNumberDocument,
    schema: {
      operationId: 'updatePhoneNumber', summary: 'Update a voice phone number', tags: TAGS, body: wrappedBody('phone_number', UPDATE_FIELDS),
      description: 'Partial: omitted fields keep their value; a field that is present must be valid. `number` is read-only (ignored). Admins.',
    },
    answer: ONE_NUMBER('The phone number, updated_at set'),
    variables: (req) => ({ id: req.params.id, input: updateInput(unwrap(req.body, 'phone_number')) }),
    body: (data) => oneNumber(data.updatePhoneNumber),
  }),
  deleteRoute({
    path: `${BASE}/:id`,
    document: RestDeletePhoneNumberDocument,
    schema: {
      operationId: 'deletePhoneNumber', summary: 'Delete a voice phone number', tags: TAGS,
      description: 'Soft delete: the number disappears, and its queued and calling callback requests are cancelled. Admins.',
    },
    done: 'Deleted',
  }),
];
