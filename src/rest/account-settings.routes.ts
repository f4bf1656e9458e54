import { RestShowAccountSettingsDocument, RestUpdateAccountSettingsDocument } from '../generated/graphql';
import { defineRoute, type AnyRestRoute } from './adapter';
import { pickFields, unwrap } from './body';

/** {"settings": {"omnichannel_routing": bool}} */
const SETTINGS_FIELDS = {
  omnichannel_routing: { kind: 'boolean', label: 'Omnichannel routing', to: 'omnichannelRouting' },
} as const;

const serializeSettings = (s: { omnichannelRouting: boolean }) => ({ settings: { omnichannel_routing: s.omnichannelRouting } });

/** The account's settings (admins), in the shape they are written. */
export const accountSettingsRoutes: AnyRestRoute[] = [
  defineRoute({
    method: 'GET',
    paths: ['/account/settings'],
    document: RestShowAccountSettingsDocument,
    variables: () => ({}),
    respond: (data) => ({ status: 200, body: serializeSettings(data.accountSettings) }),
  }),
  defineRoute({
    method: 'PUT',
    paths: ['/account/settings'],
    document: RestUpdateAccountSettingsDocument,
    variables: (req) => ({ input: pickFields(unwrap(req.body, 'settings'), SETTINGS_FIELDS) }),
    respond: (data) => ({ status: 200, body: serializeSettings(data.updateAccountSettings) }),
  }),
];
