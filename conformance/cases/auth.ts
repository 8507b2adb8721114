import { jwtVerify } from 'jose';
import { flow, request, type Case, type Expectation, type Operation, type RequestCase } from '../case-model.ts';
import { decodeClaims, decodeHeader } from '../runner/tokens.ts';
import { answers, MSG, OK, unauthenticated } from './messages.ts';

/** Spec 5 and the login row of 4.1: tokens, the Authorization header, the gRPC metadata. */

const LOGIN = { username: '{user}', password: '{password}' };

const loginCases: Case[] = [
  request(
    'login-valid-credentials',
    [
      'LOGIN-200',
      'SVC-login-token',
      'SHAPE-login-request',
      'SHAPE-login-response',
      'AUTH-2-login-only',
      'GRPC-methods',
      'GRPC-auth-exempt',
    ],
    { op: 'login', input: LOGIN },
    answers({ shape: 'LoginResponse' }),
  ),
  request(
    'login-wrong-password',
    ['LOGIN-401', 'ERR-invalid-credentials', 'AUTH-10-credentials', 'GRPC-message-text'],
    { op: 'login', input: { username: '{user}', password: 'not-the-password' } },
    unauthenticated(MSG.invalidCredentials),
  ),
  request(
    'login-unknown-user',
    ['LOGIN-401', 'ERR-invalid-credentials', 'AUTH-10-credentials'],
    { op: 'login', input: { username: 'nobody-{uuid}', password: 'whatever' } },
    unauthenticated(MSG.invalidCredentials),
  ),
  request(
    'login-password-of-another-user',
    ['LOGIN-401', 'AUTH-10-credentials'],
    { setup: { users: ['me', 'other'] }, op: 'login', input: { username: '{user}', password: '{password:other}' } },
    unauthenticated(MSG.invalidCredentials),
  ),
  ...(
    [
      ['login-empty-username', { username: '', password: '{password}' }],
      ['login-empty-password', { username: '{user}', password: '' }],
      ['login-fields-absent', {}],
    ] as const
  ).map(
    // The standard-library router hands empty fields to the service; a router framework rejects
    // them before the handler (spec 2.1, 4.1 rule 9). gRPC has no such step.
    ([name, input]): RequestCase =>
      request(
        name,
        ['SHAPE-login-empty-router-framework', 'LOGIN-required-fields-variant', 'SHAPE-login-request'],
        { op: 'login', input: input as { username: unknown; password: unknown } },
        {
          ...unauthenticated(MSG.invalidCredentials),
          variants: { 'router-framework': { http: { status: 400, error: MSG.loginFieldsRequired } } },
        },
      ),
  ),
];

/** Every protected operation, for the header rules (spec 5 rules 3-5, 4.1 rule 1). */
const PROTECTED: readonly { readonly tag: string; readonly rule: string; readonly op: Operation }[] = [
  { tag: 'create', rule: 'CREATE-401', op: { op: 'createOrder', input: { item: 'widget', quantity: 1 } } },
  { tag: 'get', rule: 'GET-401', op: { op: 'getOrder', input: { id: '{uuid}' } } },
  { tag: 'list', rule: 'LIST-401', op: { op: 'listOrders', input: {} } },
  { tag: 'recent', rule: 'RECENT-401', op: { op: 'recent' } },
];

interface HeaderVariant {
  readonly tag: string;
  readonly auth: string | null;
  readonly rules: readonly string[];
  readonly expect: Expectation;
  readonly needs?: RequestCase['needs'];
}

const MISSING_RULES = ['AUTH-4-missing', 'ERR-401-missing', 'AUTH-8-grpc'];
const INVALID_RULES = ['AUTH-5-invalid', 'ERR-401-invalid', 'AUTH-8-grpc'];

const HEADER_VARIANTS: readonly HeaderVariant[] = [
  {
    tag: 'absent',
    auth: null,
    rules: [...MISSING_RULES, 'ROUTE-auth-by-registration', 'GRPC-auth-exempt', 'GRPC-methods'],
    expect: unauthenticated(MSG.missingAuth),
  },
  {
    tag: 'basic-scheme',
    auth: 'Basic {token}',
    rules: [...MISSING_RULES, 'AUTH-3-exact-bearer'],
    expect: unauthenticated(MSG.missingAuth),
  },
  {
    tag: 'lowercase-bearer',
    auth: 'bearer {token}',
    rules: [...MISSING_RULES, 'AUTH-3-exact-bearer', 'GRPC-auth-metadata-form'],
    expect: unauthenticated(MSG.missingAuth),
  },
  {
    tag: 'uppercase-bearer',
    auth: 'BEARER {token}',
    rules: [...MISSING_RULES, 'AUTH-3-exact-bearer'],
    expect: unauthenticated(MSG.missingAuth),
  },
  {
    tag: 'token-without-scheme',
    auth: '{token}',
    rules: [...MISSING_RULES, 'AUTH-3-exact-bearer', 'GRPC-auth-metadata-form'],
    expect: unauthenticated(MSG.missingAuth),
  },
  { tag: 'empty-token', auth: 'Bearer ', rules: [...MISSING_RULES], expect: unauthenticated(MSG.missingAuth) },
  { tag: 'scheme-only', auth: 'Bearer', rules: [...MISSING_RULES], expect: unauthenticated(MSG.missingAuth) },
  {
    tag: 'two-spaces',
    auth: 'Bearer  {token}',
    rules: [...INVALID_RULES, 'AUTH-3-exact-bearer'],
    expect: unauthenticated(MSG.invalidToken),
  },
  { tag: 'garbage-token', auth: 'Bearer not-a-token', rules: [...INVALID_RULES], expect: unauthenticated(MSG.invalidToken) },
  {
    tag: 'foreign-secret',
    auth: 'Bearer {foreignToken}',
    rules: [...INVALID_RULES, 'AUTH-1-hs256', 'AUTH-7-independent'],
    expect: unauthenticated(MSG.invalidToken),
  },
  { tag: 'alg-none', auth: 'Bearer {noneToken}', rules: [...INVALID_RULES, 'AUTH-1-hs256'], expect: unauthenticated(MSG.invalidToken) },
  {
    tag: 'tampered-payload',
    auth: 'Bearer {tamperedToken}',
    rules: [...INVALID_RULES, 'AUTH-1-hs256'],
    expect: unauthenticated(MSG.invalidToken),
  },
  {
    tag: 'expired',
    auth: 'Bearer {expiredToken}',
    rules: [...INVALID_RULES, 'AUTH-1-hs256'],
    expect: unauthenticated(MSG.invalidToken),
    needs: ['secret'],
  },
];

const headerCases: Case[] = HEADER_VARIANTS.flatMap((variant) =>
  PROTECTED.map((p): RequestCase =>
    request(
      `auth-${variant.tag}-${p.tag}`,
      [...variant.rules, p.rule],
      { ...(variant.needs === undefined ? {} : { needs: variant.needs }), ...p.op, auth: variant.auth },
      variant.expect,
    ),
  ),
);

const tokenCases: Case[] = [
  flow('token-claims-and-lifetime', ['TOKEN-claims', 'AUTH-1-hs256', 'LIMIT-token-lifetime'], {}, async (t) => {
    const before = Date.now();
    const me = await t.user();
    const after = Date.now();
    const header = decodeHeader(me.token);
    t.assert(
      header['alg'] === 'HS256' && header['typ'] === 'JWT',
      `token header is ${JSON.stringify(header)}, expected alg HS256, typ JWT`,
    );
    const claims = decodeClaims(me.token);
    t.assert(
      JSON.stringify(Object.keys(claims).sort()) === '["exp","iat","iss","name","sub"]',
      `claims are ${Object.keys(claims).join(', ')}, expected exp, iat, iss, name, sub`,
    );
    t.assert(claims['iss'] === 'orders', `iss is ${String(claims['iss'])}, expected orders`);
    t.assert(claims['name'] === me.username, `name claim is ${String(claims['name'])}, expected the username`);
    t.assert(
      typeof claims['sub'] === 'string' && claims['sub'] !== '' && claims['sub'] !== me.username,
      'sub must be the user id, not the username',
    );
    const lifetime = Number(claims['exp']) - Number(claims['iat']);
    t.assert(lifetime === 3600, `token lifetime is ${lifetime} s, expected the JWT_EXPIRY default of 1h (3600 s)`);
    // Issued during the login (a minute either side for a target on another machine's clock), however long it took.
    const iat = Number(claims['iat']);
    t.assert(iat >= Math.floor(before / 1000) - 60 && iat <= Math.ceil(after / 1000) + 60, 'iat is not the issue time');
  }),
  flow('token-signed-with-jwt-secret', ['AUTH-1-hs256'], { needs: ['secret'] }, async (t) => {
    const me = await t.user();
    const secret = new TextEncoder().encode(t.target.jwtSecret!);
    try {
      await jwtVerify(me.token, secret, { algorithms: ['HS256'], issuer: 'orders' });
    } catch (error) {
      t.assert(false, `token does not verify with JWT_SECRET as HS256: ${error instanceof Error ? error.message : String(error)}`);
    }
  }),
  flow('token-lifetime-from-jwt-expiry', ['LIMIT-token-lifetime', 'AUTH-1-hs256'], { target: { env: { JWT_EXPIRY: '2m' } } }, async (t) => {
    const claims = decodeClaims((await t.user()).token);
    const lifetime = Number(claims['exp']) - Number(claims['iat']);
    t.assert(lifetime === 120, `with JWT_EXPIRY=2m the lifetime is ${lifetime} s, expected 120`);
  }),
  // 2s: a token issued late in a second still has a whole second to be used while fresh.
  flow('token-works-until-expiry', ['AUTH-5-invalid', 'LIMIT-token-lifetime'], { target: { env: { JWT_EXPIRY: '2s' } } }, async (t) => {
    const me = await t.user();
    t.check(await t.driver.listOrders(me.auth, {}), OK, 'fresh token');
    // exp has whole-second resolution: a token is expired from the start of its exp second. On the
    // service's clock: advanced on the simulator (fakes), waited out on real backends.
    const claims = decodeClaims(me.token);
    await t.elapse((Number(claims['exp']) - Number(claims['iat']) + 1) * 1000);
    t.check(await t.driver.listOrders(me.auth, {}), unauthenticated(MSG.invalidToken), 'after JWT_EXPIRY');
  }),
  flow('two-tokens-one-session', ['AUTH-6-context', 'SVC-session-per-user', 'SESSION-identity'], { needs: ['users'] }, async (t) => {
    const { me, id: order } = await t.userWithOrder();
    const again = await t.driver.login({ username: me.username, password: me.password });
    const second = (again.body as { token: string }).token;
    t.check(await t.driver.getOrder(me.auth, order), OK, 'view with the first token');
    t.check(await t.driver.recent(`Bearer ${second}`), answers({ recent: [order] }), 'recent with the second token');
  }),
];

export const AUTH_CASES: Case[] = [...loginCases, ...headerCases, ...tokenCases];
