import { Type } from 'typebox';
import { RestShowAccountSettingsDocument, RestUpdateAccountSettingsDocument, type RestAccountSettingsFragment } from '../generated/graphql';
import { defineRoute, type AnyRestRoute } from './adapter';
import { getRoute } from './record-routes';
import { answer, BodyField, errorResponses, mustBe, unwrap, wrappedBody } from './schemas';

const SECONDS = {
  callback_offer_timeout: 'Seconds an agent has to accept an offered callback (1–600; 30 by default)',
  callback_retry_delay: 'Seconds before a callback not answered (no answer, busy) is offered again (0–86,400; 120 by default)',
  callback_max_attempts: 'Dial attempts before a callback fails (1–10; 3 by default)',
  wrap_up_time: 'Seconds of wrap-up after a callback before the next offer (0–3,600; 0 by default)',
};
const LABELS = { callback_offer_timeout: 'Callback offer timeout', callback_retry_delay: 'Callback retry delay', callback_max_attempts: 'Callback max attempts', wrap_up_time: 'Wrap-up time' };
const API_TOKEN_ACCESS = 'true (default): API tokens sign in with Basic {email}/token:{api_token}; false: such sign-ins are refused (401), the tokens themselves stay';
const integerField = (key: keyof typeof SECONDS) => BodyField(Type.Integer(), mustBe(LABELS[key], 'integer'), SECONDS[key]);

/** {"settings": {"omnichannel_routing": bool, "callback_offer_timeout": int, …}} */
const SETTINGS_FIELDS = {
  omnichannel_routing: BodyField(Type.Boolean(), mustBe('Omnichannel routing', 'boolean'), 'true: a callback request routes to its first group only; false: to all its groups'),
  callback_offer_timeout: integerField('callback_offer_timeout'),
  callback_retry_delay: integerField('callback_retry_delay'),
  callback_max_attempts: integerField('callback_max_attempts'),
  wrap_up_time: integerField('wrap_up_time'),
  api_token_access: BodyField(Type.Boolean(), mustBe('Api token access', 'boolean'), API_TOKEN_ACCESS),
};

const SettingsJson = Type.Object(
  {
    settings: Type.Object(
      {
        omnichannel_routing: Type.Boolean({ description: 'true: a callback request routes to its first group only; false: to all its groups' }),
        callback_offer_timeout: Type.Integer({ description: SECONDS.callback_offer_timeout }),
        callback_retry_delay: Type.Integer({ description: SECONDS.callback_retry_delay }),
        callback_max_attempts: Type.Integer({ description: SECONDS.callback_max_attempts }),
        wrap_up_time: Type.Integer({ description: SECONDS.wrap_up_time }),
        api_token_access: Type.Boolean({ description: API_TOKEN_ACCESS }),
      },
      { additionalProperties: false, title: 'AccountSettings' },
    ),
  },
  { additionalProperties: false, examples: [{ settings: { omnichannel_routing: true, callback_offer_timeout: 30, callback_retry_delay: 120, callback_max_attempts: 3, wrap_up_time: 0, api_token_access: true } }] },
);

const serializeSettings = (s: RestAccountSettingsFragment) => ({
  settings: {
    omnichannel_routing: s.omnichannelRouting, callback_offer_timeout: s.callbackOfferTimeout, callback_retry_delay: s.callbackRetryDelay,
    callback_max_attempts: s.callbackMaxAttempts, wrap_up_time: s.wrapUpTime, api_token_access: s.apiTokenAccess,
  },
});

const TAGS = ['Account settings'];

/** The account's settings (admins), in the shape they are written. */
export const accountSettingsRoutes: AnyRestRoute[] = [
  getRoute({
    path: '/account/settings',
    document: RestShowAccountSettingsDocument,
    schema: { operationId: 'showAccountSettings', summary: "Show the account's settings", tags: TAGS, description: 'Admins (a read scope suffices).' },
    answer: { schema: SettingsJson, description: 'The settings' },
    body: (data) => serializeSettings(data.accountSettings),
  }),
  defineRoute({
    method: 'PUT',
    paths: ['/account/settings'],
    document: RestUpdateAccountSettingsDocument,
    schema: {
      operationId: 'updateAccountSettings', summary: "Update the account's settings", tags: TAGS,
      description: 'Partial: an omitted setting keeps its value; null and values out of range are refused (422). An actual change is audited. Admins.',
      body: wrappedBody('settings', SETTINGS_FIELDS),
      response: { 200: answer(SettingsJson, 'The settings, as they are now'), ...errorResponses({ body: 'fields' }) },
    },
    variables: (req) => {
      const body = unwrap(req.body, 'settings');
      // an absent setting stays absent (it keeps its value); null is the domain's to refuse
      const input = {
        omnichannelRouting: body.omnichannel_routing, callbackOfferTimeout: body.callback_offer_timeout, callbackRetryDelay: body.callback_retry_delay,
        callbackMaxAttempts: body.callback_max_attempts, wrapUpTime: body.wrap_up_time, apiTokenAccess: body.api_token_access,
      };
      return { input: Object.fromEntries(Object.entries(input).filter(([, value]) => value !== undefined)) };
    },
    respond: (data) => ({ status: 200, body: serializeSettings(data.updateAccountSettings) }),
  }),
];
