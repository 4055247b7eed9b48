// The OpenID provider of the authorization end-to-end test
// (crates/mcp-server/tests/oidc/main.rs): panva's `oidc-provider`, pinned in package.json,
// configured the way a real deployment protecting an MCP server would be.
//
//   node provider.mjs --port PORT --resource URI [--resource URI …]
//
// - The issuer is http://127.0.0.1:PORT (loopback: the test's client runs in development
//   mode), listening on 127.0.0.1 only.
// - Resource indicators (RFC 8707): only the `--resource` URIs are accepted; an access
//   token for one of them is a JWT (RFC 9068, `typ: at+jwt`, ES256) whose `aud` is that
//   URI, with the scopes `mcp:tools` and `mcp:admin` available, valid for 10 minutes.
// - PKCE is required of every authorization request (S256 is the only method).
// - Dynamic client registration is open; `e2e-machine` / `machine-secret` is a
//   pre-registered client-credentials client. A client registered for the refresh_token
//   grant gets refresh tokens.
// - The user interaction is this script's own: GET /interaction/:uid describes the prompt
//   as JSON ({"prompt": "login" | "consent", "action": …}); the user agent POSTs
//   `login=…&password=…` (user `alice`, password `wonderland`) or nothing (consent) to the
//   action. Both answer with the provider's 303 back to the authorization endpoint.
//
// It prints `listening <issuer>` once it accepts connections, and exits on SIGTERM or when
// its stdin closes (so that a test that dies does not leave it behind).

import { generateKeyPairSync } from 'node:crypto';
import { createServer } from 'node:http';
import Provider, { errors } from 'oidc-provider';

function parseArgs(argv) {
  const args = { resources: [] };
  for (let i = 0; i < argv.length; i += 1) {
    const value = argv[i + 1];
    switch (argv[i]) {
      case '--port': args.port = Number(value); i += 1; break;
      case '--resource': args.resources.push(value); i += 1; break;
      default: throw new Error(`unknown argument ${argv[i]}`);
    }
  }
  if (!args.port || args.resources.length === 0) {
    throw new Error('usage: provider.mjs --port PORT --resource URI [--resource URI …]');
  }
  return args;
}

const args = parseArgs(process.argv.slice(2));
const issuer = `http://127.0.0.1:${args.port}`;

// Fresh signing keys for every run: RS256 (ID tokens, the provider's default) and ES256
// (access tokens).
const jwk = (type, options, kid, alg) => ({
  ...generateKeyPairSync(type, options).privateKey.export({ format: 'jwk' }),
  kid,
  alg,
  use: 'sig',
});
const jwks = {
  keys: [
    jwk('rsa', { modulusLength: 2048 }, 'e2e-rs256', 'RS256'),
    jwk('ec', { namedCurve: 'P-256' }, 'e2e-es256', 'ES256'),
  ],
};

const USERS = { alice: 'wonderland' };

const provider = new Provider(issuer, {
  jwks,
  cookies: { keys: ['mcp-e2e-cookie-key'] },
  clients: [
    {
      client_id: 'e2e-machine',
      client_secret: 'machine-secret',
      grant_types: ['client_credentials'],
      redirect_uris: [],
      response_types: [],
      token_endpoint_auth_method: 'client_secret_basic',
    },
  ],
  async findAccount(_ctx, sub) {
    if (!(sub in USERS)) return undefined;
    return { accountId: sub, async claims() { return { sub }; } };
  },
  pkce: { required: () => true },
  // A refresh token for every client registered for the refresh_token grant (the default
  // asks for `offline_access` with `prompt=consent`, which OpenID Connect needs and plain
  // OAuth clients do not send).
  async issueRefreshToken(_ctx, client) {
    return client.grantTypeAllowed('refresh_token');
  },
  interactions: { url: (_ctx, interaction) => `/interaction/${interaction.uid}` },
  features: {
    devInteractions: { enabled: false },
    registration: { enabled: true },
    clientCredentials: { enabled: true },
    resourceIndicators: {
      enabled: true,
      // A client that names no resource gets no access token for any.
      defaultResource: () => undefined,
      useGrantedResource: () => true,
      getResourceServerInfo(_ctx, resourceIndicator) {
        if (!args.resources.includes(resourceIndicator)) {
          throw new errors.InvalidTarget(`unknown resource ${resourceIndicator}`);
        }
        return {
          scope: 'mcp:tools mcp:admin',
          audience: resourceIndicator,
          accessTokenTTL: 600,
          accessTokenFormat: 'jwt',
          jwt: { sign: { alg: 'ES256' } },
        };
      },
    },
  },
});

// What the user agent sees of an interaction, and what it submits.
async function interaction(req, res, uid, step) {
  const reply = (status, body) => {
    const text = JSON.stringify(body);
    res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
    res.end(text);
  };
  let details;
  try {
    details = await provider.interactionDetails(req, res);
  } catch (e) {
    return reply(400, { error: 'no such interaction', detail: String(e) });
  }
  if (details.uid !== uid) return reply(400, { error: 'interaction mismatch' });
  const { prompt, params, session, grantId } = details;
  if (req.method === 'GET' && step === undefined) {
    return reply(200, {
      prompt: prompt.name,
      action: `/interaction/${uid}/${prompt.name}`,
      client_id: params.client_id,
      scope: params.scope,
      resource: params.resource,
    });
  }
  if (req.method !== 'POST' || step !== prompt.name) {
    return reply(400, { error: `expected a POST to /interaction/${uid}/${prompt.name}` });
  }
  let body = '';
  for await (const chunk of req) body += chunk;
  const form = new URLSearchParams(body);
  let result;
  if (prompt.name === 'login') {
    const login = form.get('login');
    if (!(login in USERS) || USERS[login] !== form.get('password')) {
      return reply(403, { error: 'wrong user name or password' });
    }
    result = { login: { accountId: login } };
  } else if (prompt.name === 'consent') {
    const grant = grantId
      ? await provider.Grant.find(grantId)
      : new provider.Grant({ accountId: session.accountId, clientId: params.client_id });
    const missing = prompt.details;
    if (missing.missingOIDCScope) grant.addOIDCScope(missing.missingOIDCScope.join(' '));
    if (missing.missingOIDCClaims) grant.addOIDCClaims(missing.missingOIDCClaims);
    for (const [indicator, scopes] of Object.entries(missing.missingResourceScopes ?? {})) {
      grant.addResourceScope(indicator, scopes.join(' '));
    }
    result = { consent: { grantId: await grant.save() } };
  } else {
    return reply(501, { error: `prompt ${prompt.name} is not supported` });
  }
  const mergeWithLastSubmission = prompt.name !== 'login';
  return provider.interactionFinished(req, res, result, { mergeWithLastSubmission });
}

const callback = provider.callback();
const server = createServer((req, res) => {
  const match = /^\/interaction\/([^/?]+)(?:\/([a-z]+))?(?:\?.*)?$/.exec(req.url);
  if (match) {
    interaction(req, res, match[1], match[2]).catch((e) => {
      console.error(e);
      if (!res.headersSent) res.writeHead(500);
      res.end();
    });
    return;
  }
  callback(req, res);
});

provider.on('server_error', (_ctx, e) => console.error('server_error', e));
provider.on('grant.error', (_ctx, e) => console.error('grant.error', e.message, e.error_description ?? ''));
provider.on('authorization.error', (_ctx, e) => console.error('authorization.error', e.message, e.error_description ?? ''));
provider.on('registration_create.error', (_ctx, e) => console.error('registration_create.error', e.message, e.error_description ?? ''));

server.listen(args.port, '127.0.0.1', () => console.log(`listening ${issuer}`));

const stop = () => process.exit(0);
process.on('SIGTERM', stop);
process.stdin.on('end', stop);
process.stdin.resume();
