import { createTestApp, type TestContext, type TestUser } from './helpers/test-app';

// Redirect URI rules (docs/api.md "Redirect URIs"; RFC 6749 §3.1.2, RFC 8252 §7):
// https://host[:port]/… with the host as written, http:// only on localhost,
// 127.0.0.1 or [::1] written exactly so, or a reverse-domain private-use scheme.
// Every case runs through REST (POST /api/v2/oauth/clients) and GraphQL
// (createOAuthClient); a refused request stores nothing.

const ACCEPTED: string[] = [
  'https://app.example.com/cb',
  'https://app.example.com:8443/cb?x=1',
  'https://APP.Example.com/cb', // letter case only
  'http://localhost:8080/cb',
  'http://127.0.0.1/cb',
  'http://[::1]:9000/cb',
  'com.example.app:/cb',
  'com.example.app:/oauth2redirect/example-provider',
];

const cp = (code: number) => String.fromCodePoint(code);
const BIDI = [0x061c, 0x200e, 0x200f, 0x202a, 0x202b, 0x202c, 0x202d, 0x202e, 0x2066, 0x2067, 0x2068, 0x2069];
const INVISIBLE = [0x200b, 0x200c, 0x200d, 0x2060, 0xfeff, 0x00ad, 0x180e, 0x034f];
const C1 = [0x0080, 0x0085, 0x009b, 0x009f];

/** [why, uri] */
const REFUSED: [string, string][] = [
  // schemes
  ['view-source', 'view-source:https://app.example.com/cb'],
  ['jar', 'jar:https://app.example.com/app.jar!/cb'],
  ['mailto', 'mailto:admin@example.com'],
  ['chrome-extension', 'chrome-extension://abcdefghijklmnopabcdefghijklmnop/cb'],
  ['ws', 'ws://localhost:8080/cb'],
  ['wss', 'wss://app.example.com/cb'],
  ['javascript', 'javascript:alert(1)'],
  ['data', 'data:text/html,hi'],
  ['file', 'file:///etc/passwd'],
  ['private-use scheme without a dot', 'myapp:/cb'],
  ['private-use scheme in upper case', 'Com.Example.App:/cb'],
  ['private-use scheme starting with a digit', '1com.example:/cb'],
  ['private-use scheme with an authority', 'com.example.app://host/cb'],
  ['private-use scheme without a slash', 'com.example.app:cb'],
  // userinfo
  ['userinfo user:pass', 'https://user:pass@app.example.com/cb'],
  ['userinfo user', 'https://user@app.example.com/cb'],
  ['userinfo on loopback', 'http://user@localhost/cb'],
  // ambiguous or non-canonical forms
  ['https: without //', 'https:a.b'],
  ['https:/ with one slash', 'https:/a.b/cb'],
  ['https:/// with no host', 'https:///nohost'],
  ['upper-case scheme', 'HTTPS://app.example.com/cb'],
  ['backslash', 'https://evil.example\\@app.example.com/cb'],
  ['percent-encoded host', 'https://%61pp.example.com/cb'],
  ['decimal IPv4 (https)', 'https://2130706433/'],
  ['decimal IPv4 (http)', 'http://2130706433/'],
  ['hex IPv4', 'http://0x7f.1/'],
  ['short IPv4', 'http://127.1/'],
  ['octal IPv4', 'https://0177.0.0.1/cb'],
  ['short IPv4 (https)', 'https://127.1/cb'],
  ['long IPv6 loopback', 'http://[0:0:0:0:0:0:0:1]/cb'],
  ['LOCALHOST', 'http://LOCALHOST/cb'],
  ['localhost.', 'http://localhost./cb'],
  ['http off loopback', 'http://example.com/cb'],
  ['http on localhost.evil.com', 'http://localhost.evil.com/cb'],
  ['port 0', 'https://app.example.com:0/cb'],
  ['port 99999', 'https://app.example.com:99999/cb'],
  // existing rules
  ['fragment', 'https://app.example.com/cb#x'],
  ['wildcard', 'https://*.example.com/cb'],
  ['relative', '/cb'],
  ['too long (2001)', 'https://app.example.com/' + 'a'.repeat(2001 - 24)],
  // characters
  ...C1.map((c): [string, string] => [`C1 control U+${c.toString(16).padStart(4, '0')}`, `https://app.example.com/c${cp(c)}b`]),
  ['DEL', 'https://app.example.com/c\u007fb'],
  ...BIDI.map((c): [string, string] => [`bidi control U+${c.toString(16)}`, `https://app.example.com/c${cp(c)}b`]),
  ['bidi control in the host', `https://app.example${cp(0x202e)}moc.evil/cb`],
  ['bidi control in a private-use URI', `com.example.app:/c${cp(0x202e)}b`],
  ...INVISIBLE.map((c): [string, string] => [`invisible U+${c.toString(16)}`, `https://app.example.com/c${cp(c)}b`]),
];

interface RestError {
  error: string;
  details?: Record<string, { error: string; description: string }[]>;
}
interface GqlBody {
  data?: { createOAuthClient: { redirectUris: string[] } | null } | null;
  errors?: { extensions?: { code?: string; details?: Record<string, { error: string; description: string }[]> } }[];
}

describe('redirect URIs', () => {
  let ctx: TestContext;
  let admin: TestUser;
  const count = () => ctx.db.prisma.oAuthClient.count();
  const rest = (redirect_uris: unknown) =>
    ctx.inject({
      method: 'POST',
      url: '/api/v2/oauth/clients',
      headers: { authorization: admin.basic, 'content-type': 'application/json' },
      payload: { name: 'app', scopes: 'read', redirect_uris },
    });
  const graphql = async (redirectUris: string[]) => {
    const res = await ctx.graphql('mutation($i: OAuthClientInput!) { createOAuthClient(input: $i) { redirectUris } }', { i: { name: 'app', scopes: 'read', redirectUris } }, { authorization: admin.basic });
    return res.json() as GqlBody;
  };

  beforeAll(async () => {
    ctx = await createTestApp();
    admin = await ctx.createUser(await ctx.createAccount(), 'admin');
  });
  afterAll(() => ctx.close());

  describe.each(ACCEPTED)('accepts %j', (uri) => {
    it('over REST: 201, stored as written', async () => {
      const res = await rest(uri);
      expect(res.statusCode).toBe(201);
      const id = BigInt(res.json<{ id: number }>().id);
      expect(res.json<{ redirect_uris: string }>().redirect_uris).toBe(uri);
      expect((await ctx.db.prisma.oAuthClient.findUnique({ where: { id } }))?.redirectUris).toEqual([uri]);
    });
    it('over GraphQL', async () => {
      const body = await graphql([uri]);
      expect(body.errors).toBeUndefined();
      expect(body.data?.createOAuthClient?.redirectUris).toEqual([uri]);
    });
  });

  describe.each(REFUSED)('refuses %s', (_why, uri) => {
    it('over REST: 422 InvalidValue, nothing stored', async () => {
      const before = await count();
      const res = await rest(uri);
      expect(res.statusCode).toBe(422);
      const body = res.json<RestError>();
      expect(body.error).toBe('RecordInvalid');
      expect(Object.keys(body.details ?? {})).toEqual(['redirect_uris']);
      expect(body.details!.redirect_uris[0].error).toBe('InvalidValue');
      expect(body.details!.redirect_uris[0].description).toMatch(/^Redirect uris: .+ (must|may|is) /);
      expect(await count()).toBe(before);
    });
    it('over GraphQL: BAD_USER_INPUT, nothing stored', async () => {
      const before = await count();
      const body = await graphql([uri]);
      expect(body.data?.createOAuthClient ?? null).toBeNull();
      expect(body.errors?.[0].extensions?.code).toBe('BAD_USER_INPUT');
      expect(body.errors?.[0].extensions?.details?.redirect_uris[0].error).toBe('InvalidValue');
      expect(await count()).toBe(before);
    });
  });

  it('refuses the whole list when one URI of several is bad, and stores nothing', async () => {
    const before = await count();
    const res = await rest(['https://app.example.com/cb', 'http://0x7f.1/', 'com.example.app:/cb']);
    expect(res.statusCode).toBe(422);
    expect(res.json<RestError>().details!.redirect_uris).toHaveLength(1);
    expect(await count()).toBe(before);
  });

  it('says why, and never echoes an invisible character', async () => {
    const why = async (uri: string) => (await rest(uri)).json<RestError>().details!.redirect_uris[0].description;
    expect(await why('https://user:pass@app.example.com/cb')).toContain('must not contain user information');
    expect(await why('http://127.1/')).toContain('may use http only for localhost, 127.0.0.1 or [::1]');
    expect(await why('https://2130706433/')).toContain('canonical');
    expect(await why('https:///nohost')).toContain('must name a host');
    expect(await why('ws://localhost/cb')).toContain('private-use scheme');
    const bidi = await why(`https://app.example.com/c${cp(0x202e)}b`);
    expect(bidi).toContain('bidirectional');
    expect(bidi).toContain('\\u{202E}');
    expect(bidi).not.toMatch(/[\u202a-\u202e]/);
    expect(await why(`https://app.example.com/c${cp(0x85)}b`)).toContain('control characters');
  });

  it('applies the same rules on update (PUT)', async () => {
    const created = await rest('https://app.example.com/cb');
    const id = created.json<{ id: number }>().id;
    const put = (redirect_uris: string) =>
      ctx.inject({ method: 'PUT', url: `/api/v2/oauth/clients/${id}`, headers: { authorization: admin.basic, 'content-type': 'application/json' }, payload: { redirect_uris } });
    expect((await put('https://user@app.example.com/cb')).statusCode).toBe(422);
    expect((await ctx.db.prisma.oAuthClient.findUnique({ where: { id: BigInt(id) } }))?.redirectUris).toEqual(['https://app.example.com/cb']);
    expect((await put('com.example.app:/cb')).statusCode).toBe(200);
  });
});
