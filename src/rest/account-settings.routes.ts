import { Type } from 'typebox';
import { RestShowAccountSettingsDocument, RestUpdateAccountSettingsDocument } from '../generated/graphql';
import { defineRoute, type AnyRestRoute } from './adapter';
import { getRoute } from './record-routes';
import { answer, BodyField, errorResponses, mustBe, unwrap, wrappedBody } from './schemas';

/** {"settings": {"omnichannel_routing": bool}} */
const SETTINGS_FIELDS = {
  omnichannel_routing: BodyField(Type.Boolean(), mustBe('Omnichannel routing', 'boolean'), 'true: a callback request routes to its first group only; false: to all its groups'),
};

const SettingsJson = Type.Object(
  {
    settings: Type.Object(
      { omnichannel_routing: Type.Boolean({ description: 'true: a callback request routes to its first group only; false: to all its groups' }) },
      { additionalProperties: false, title: 'AccountSettings' },
    ),
  },
  { additionalProperties: false, examples: [{ settings: { omnichannel_routing: true } }] },
);

const serializeSettings = (s: { omnichannelRouting: boolean }) => ({ settings: { omnichannel_routing: s.omnichannelRouting } });

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
      description: 'Partial: an omitted setting keeps its value; null is refused. An actual change is audited. Admins.',
      body: wrappedBody('settings', SETTINGS_FIELDS),
      response: { 200: answer(SettingsJson, 'The settings, as they are now'), ...errorResponses({ body: 'fields' }) },
    },
    variables: (req) => {
      const value = unwrap(req.body, 'settings').omnichannel_routing;
      // an absent setting stays absent (it keeps its value); null is the domain's to refuse
      return { input: value === undefined ? {} : { omnichannelRouting: value } };
    },
    respond: (data) => ({ status: 200, body: serializeSettings(data.updateAccountSettings) }),
  }),
];
