import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ManualClock } from '../../libs/common/index.js';
import { createAccount, type TestAccount } from '../support/factories.js';
import { bootTestApp, type TestApp } from '../support/test-app.js';
import {
  assertError,
  createEndpoint,
  createEndpointRaw,
  ENDPOINTS,
  endpointPath,
  endpointRows,
  FAILED,
  listEndpoints,
  SUCCEEDED,
} from './endpoints-helpers.js';

const GOOD = { url: 'https://example.com/hooks', events: [SUCCEEDED] };

/** [name, body, code]: each must answer 400 with that code and store nothing (production-like outbound policy). */
const CREATE_REFUSALS: Array<[string, unknown, string]> = [
  ['missing url', { events: [SUCCEEDED] }, 'webhook.invalid_field'],
  ['url not a string', { ...GOOD, url: 42 }, 'webhook.invalid_field'],
  ['url not a URL', { ...GOOD, url: 'example.com/hooks' }, 'webhook.invalid_url'],
  ['relative url', { ...GOOD, url: '/hooks' }, 'webhook.invalid_url'],
  ['url with credentials', { ...GOOD, url: 'https://me:pw@example.com/hooks' }, 'webhook.invalid_url'],
  ['url over 2,048 characters', { ...GOOD, url: `https://example.com/${'a'.repeat(2100)}` }, 'webhook.invalid_url'],
  ['http url while OUTBOUND_ALLOW_HTTP is off', { ...GOOD, url: 'http://example.com/hooks' }, 'webhook.url_scheme_not_allowed'],
  ['ftp url', { ...GOOD, url: 'ftp://example.com/hooks' }, 'webhook.url_scheme_not_allowed'],
  ['loopback address', { ...GOOD, url: 'https://127.0.0.1/hooks' }, 'webhook.url_address_not_allowed'],
  ['private address', { ...GOOD, url: 'https://10.0.0.7/hooks' }, 'webhook.url_address_not_allowed'],
  ['link-local metadata address', { ...GOOD, url: 'https://169.254.169.254/latest/meta-data' }, 'webhook.url_address_not_allowed'],
  ['IPv4-mapped IPv6 loopback', { ...GOOD, url: 'https://[::ffff:7f00:1]/hooks' }, 'webhook.url_address_not_allowed'],
  ['localhost', { ...GOOD, url: 'https://localhost/hooks' }, 'webhook.url_address_not_allowed'],
  ['port other than 443', { ...GOOD, url: 'https://example.com:8443/hooks' }, 'webhook.url_port_not_allowed'],
  ['missing events', { url: GOOD.url }, 'webhook.invalid_field'],
  ['events not an array', { ...GOOD, events: SUCCEEDED }, 'webhook.invalid_field'],
  ['events of non-strings', { ...GOOD, events: [1] }, 'webhook.invalid_field'],
  ['too many events', { ...GOOD, events: Array.from({ length: 9 }, () => SUCCEEDED) }, 'webhook.invalid_field'],
  ['empty events', { ...GOOD, events: [] }, 'webhook.events_empty'],
  ['unknown event', { ...GOOD, events: ['audio.generation.started'] }, 'webhook.unknown_event'],
  ['duplicate events', { ...GOOD, events: [FAILED, FAILED] }, 'webhook.duplicate_event'],
  ['unknown field', { ...GOOD, secret: 'whsec_mine' }, 'webhook.unknown_field'],
  ['enabled on creation', { ...GOOD, enabled: false }, 'webhook.unknown_field'],
  ['body not an object', [GOOD], 'webhook.invalid_field'],
];

/** [name, body, code] for PATCH of an existing endpoint. */
const PATCH_REFUSALS: Array<[string, unknown, string]> = [
  ['empty body', {}, 'webhook.invalid_field'],
  ['enabled not a boolean', { enabled: 'false' }, 'webhook.invalid_field'],
  ['enabled null', { enabled: null }, 'webhook.invalid_field'],
  ['url null', { url: null }, 'webhook.invalid_field'],
  ['http url', { url: 'http://example.com/x' }, 'webhook.url_scheme_not_allowed'],
  ['private address', { url: 'https://192.168.1.1/x' }, 'webhook.url_address_not_allowed'],
  ['empty events', { events: [] }, 'webhook.events_empty'],
  ['unknown event', { events: ['audio.generation.cancelled'] }, 'webhook.unknown_event'],
  ['duplicate events', { events: [SUCCEEDED, SUCCEEDED] }, 'webhook.duplicate_event'],
  ['unknown field', { enabled: true, secret: 'x' }, 'webhook.unknown_field'],
  ['a good field beside a bad one', { enabled: false, events: ['nope'] }, 'webhook.unknown_event'],
];

describe('webhook endpoints: CRUD and validation (https only, public addresses only)', () => {
  let t: TestApp;
  let account: TestAccount;
  const clock = new ManualClock(new Date('2026-05-01T12:00:00Z'));

  before(async () => {
    t = await bootTestApp({ label: 'wh-crud', clock, env: { OUTBOUND_ALLOW_HTTP: 'false', OUTBOUND_ALLOW_PRIVATE: 'false' } });
    account = await createAccount(t);
  });
  after(async () => {
    await t.close();
  });

  it('creates: 201 {id, secret}, one enabled row with the normalized URL, listed without a secret', async () => {
    const fresh = await createAccount(t);
    const created = await createEndpoint(t, fresh, { url: 'https://Example.COM:443/hooks?x=1', events: [FAILED, SUCCEEDED] });
    const rows = await endpointRows(t, fresh.keyId);
    assert.equal(rows.length, 1);
    assert.deepEqual(
      { id: rows[0]!.id, url: rows[0]!.url, events: rows[0]!.events, enabled: rows[0]!.enabled, createdAt: rows[0]!.created_at.toISOString() },
      { id: created.id, url: 'https://example.com/hooks?x=1', events: [FAILED, SUCCEEDED], enabled: true, createdAt: clock.now().toISOString() },
    );
    const listed = await listEndpoints(t, fresh);
    assert.deepEqual(listed, [{ id: created.id, url: 'https://example.com/hooks?x=1', events: [FAILED, SUCCEEDED], enabled: true, createdAt: clock.now().toISOString() }]);
    assert.ok(!JSON.stringify(listed).includes(created.secret));
  });

  it('lists only the key\'s own endpoints, newest first, disabled ones included', async () => {
    const fresh = await createAccount(t);
    const other = await createAccount(t);
    await createEndpoint(t, other);
    const first = await createEndpoint(t, fresh);
    clock.advance(1000);
    const second = await createEndpoint(t, fresh, { url: 'https://example.org/b', events: [FAILED] });
    assert.equal((await t.request(endpointPath(first.id), { method: 'DELETE', key: fresh.key })).status, 200);
    const listed = await listEndpoints(t, fresh);
    assert.deepEqual(listed.map((e) => [e.id, e.enabled]), [[second.id, true], [first.id, false]]);
  });

  it('GET one endpoint answers it as listed (never a secret); another key\'s, an unknown or a malformed id is 404', async () => {
    const fresh = await createAccount(t);
    const other = await createAccount(t);
    const created = await createEndpoint(t, fresh, { url: 'https://example.com/one', events: [SUCCEEDED] });
    const answer = await t.request(endpointPath(created.id), { key: fresh.key });
    assert.equal(answer.status, 200);
    const body = await answer.json();
    assert.deepEqual(body, (await listEndpoints(t, fresh))[0]);
    assert.ok(!JSON.stringify(body).includes(created.secret));
    for (const [caller, id] of [
      [other, created.id],
      [fresh, 'webhook:00000000-0000-4000-8000-000000000000'],
      [fresh, 'not-an-id'],
    ] as const) {
      await assertError(await t.request(endpointPath(id), { key: caller.key }), 404, 'webhook.not_found');
    }
  });

  it('PATCH changes any of url, events, enabled and answers the updated endpoint', async () => {
    const fresh = await createAccount(t);
    const { id } = await createEndpoint(t, fresh);
    const createdAt = clock.now().toISOString();
    clock.advance(5000);
    const cases: Array<[unknown, Partial<{ url: string; events: string[]; enabled: boolean }>]> = [
      [{ url: 'https://hooks.example.net/v2' }, { url: 'https://hooks.example.net/v2' }],
      [{ events: [FAILED] }, { events: [FAILED] }],
      [{ enabled: false }, { enabled: false }],
      [{ enabled: true, events: [SUCCEEDED, FAILED] }, { enabled: true, events: [SUCCEEDED, FAILED] }],
    ];
    let expected = { id, url: 'https://example.com/hooks', events: [SUCCEEDED], enabled: true, createdAt };
    for (const [json, change] of cases) {
      const answer = await t.request(endpointPath(id), { method: 'PATCH', key: fresh.key, json });
      expected = { ...expected, ...change };
      assert.equal(answer.status, 200);
      assert.deepEqual(await answer.json(), expected);
      const [row] = await endpointRows(t, fresh.keyId);
      assert.deepEqual({ url: row!.url, events: row!.events, enabled: row!.enabled }, { url: expected.url, events: expected.events, enabled: expected.enabled });
      assert.equal(row!.updated_at.toISOString(), clock.now().toISOString());
    }
    assert.deepEqual(await listEndpoints(t, fresh), [expected]);
  });

  it('DELETE disables: 200 with the endpoint, the row is kept, a repeat answers the same', async () => {
    const fresh = await createAccount(t);
    const { id } = await createEndpoint(t, fresh);
    for (let i = 0; i < 2; i += 1) {
      // The repeat as SDKs send it: a JSON content type and no body.
      const headers: Record<string, string> = i === 1 ? { 'content-type': 'application/json' } : {};
      const answer = await t.request(endpointPath(id), { method: 'DELETE', key: fresh.key, headers });
      assert.equal(answer.status, 200);
      assert.deepEqual(await answer.json(), { id, url: 'https://example.com/hooks', events: [SUCCEEDED], enabled: false, createdAt: clock.now().toISOString() });
    }
    const rows = await endpointRows(t, fresh.keyId);
    assert.deepEqual(rows.map((r) => [r.id, r.enabled]), [[id, false]]);
  });

  it('rotate-secret: 200 {id, secret} with a new secret, and a new sealed value on the row', async () => {
    const fresh = await createAccount(t);
    const created = await createEndpoint(t, fresh);
    const [before] = await endpointRows(t, fresh.keyId);
    const answer = await t.request(endpointPath(created.id, '/rotate-secret'), { method: 'POST', key: fresh.key });
    const body = (await answer.json()) as { id: string; secret: string };
    assert.equal(answer.status, 200);
    assert.deepEqual(Object.keys(body).sort(), ['id', 'secret']);
    assert.equal(body.id, created.id);
    assert.match(body.secret, /^whsec_[A-Za-z0-9_-]{43}$/);
    assert.notEqual(body.secret, created.secret);
    const [after] = await endpointRows(t, fresh.keyId);
    assert.notEqual(after!.secret_sealed, before!.secret_sealed);
    assert.deepEqual({ url: after!.url, events: after!.events, enabled: after!.enabled }, { url: before!.url, events: before!.events, enabled: before!.enabled });
  });

  for (const [name, json, code] of CREATE_REFUSALS) {
    it(`POST refuses ${name}: 400 ${code}, nothing stored`, async () => {
      const before = await endpointRows(t);
      await assertError(await createEndpointRaw(t, account, json), 400, code);
      assert.deepEqual(await endpointRows(t), before);
    });
  }

  for (const [name, json, code] of PATCH_REFUSALS) {
    it(`PATCH refuses ${name}: 400 ${code}, nothing changed`, async () => {
      const fresh = await createAccount(t);
      const { id } = await createEndpoint(t, fresh);
      const before = await endpointRows(t, fresh.keyId);
      clock.advance(1000);
      await assertError(await t.request(endpointPath(id), { method: 'PATCH', key: fresh.key, json }), 400, code);
      assert.deepEqual(await endpointRows(t, fresh.keyId), before);
    });
  }

  it('malformed JSON answers request.invalid_json and stores nothing', async () => {
    const before = await endpointRows(t);
    const answer = await t.request(ENDPOINTS, { method: 'POST', key: account.key, headers: { 'content-type': 'application/json' }, body: '{"url":' });
    await assertError(answer, 400, 'request.invalid_json');
    assert.deepEqual(await endpointRows(t), before);
  });

  it('/docs/json documents every webhook route with its error answers and codes', async () => {
    const doc = (await (await t.request('/docs/json')).json()) as {
      paths: Record<string, Record<string, { responses: Record<string, { description?: string }> }>>;
    };
    const expected: Array<[string, string, Record<string, string[]>]> = [
      ['post', ENDPOINTS, { '400': ['webhook.invalid_url', 'webhook.unknown_event', 'webhook.invalid_field', 'webhook.unknown_field'], '409': ['webhook.endpoint_limit'] }],
      ['get', ENDPOINTS, {}],
      ['get', `${ENDPOINTS}/{id}`, { '404': ['webhook.not_found'] }],
      ['patch', `${ENDPOINTS}/{id}`, { '400': ['webhook.invalid_url', 'webhook.events_empty', 'webhook.unknown_field'], '404': ['webhook.not_found'] }],
      ['delete', `${ENDPOINTS}/{id}`, { '404': ['webhook.not_found'] }],
      ['post', `${ENDPOINTS}/{id}/rotate-secret`, { '404': ['webhook.not_found'] }],
      ['get', `${ENDPOINTS}/{id}/deliveries`, { '400': ['webhook.invalid_field'], '404': ['webhook.not_found'] }],
      ['post', `${ENDPOINTS}/{id}/deliveries/{deliveryId}/retry`, { '404': ['webhook.not_found'], '409': ['webhook.delivery_not_retryable'] }],
    ];
    for (const [method, path, errors] of expected) {
      const responses = doc.paths[path]?.[method]?.responses;
      assert.ok(responses, `${method.toUpperCase()} ${path} is documented`);
      for (const [status, codes] of Object.entries({ ...errors, '401': ['webhook.unauthorized'] })) {
        const description = responses[status]?.description ?? '';
        for (const code of codes) assert.ok(description.includes(code), `${method.toUpperCase()} ${path} documents ${status} ${code}`);
      }
    }
  });

  it('no key or a bad key: 401 webhook.unauthorized on every route', async () => {
    const { id } = await createEndpoint(t, account);
    const routes: Array<[string, string, unknown]> = [
      ['POST', ENDPOINTS, GOOD],
      ['GET', ENDPOINTS, undefined],
      ['GET', endpointPath(id), undefined],
      ['PATCH', endpointPath(id), { enabled: false }],
      ['DELETE', endpointPath(id), undefined],
      ['POST', endpointPath(id, '/rotate-secret'), undefined],
    ];
    const before = await endpointRows(t);
    for (const [method, path, json] of routes) {
      await assertError(await t.request(path, { method, json }), 401, 'webhook.unauthorized');
      await assertError(await t.request(path, { method, json, key: 'svc_live_notakey' }), 401, 'webhook.unauthorized');
    }
    assert.deepEqual(await endpointRows(t), before);
  });
});

describe('webhook endpoints where local receivers are allowed (OUTBOUND_ALLOW_HTTP and _PRIVATE on)', () => {
  let t: TestApp;
  let account: TestAccount;

  before(async () => {
    t = await bootTestApp({ label: 'wh-crud-local' });
    account = await createAccount(t);
  });
  after(async () => {
    await t.close();
  });

  it('accepts a plain-http loopback receiver on any port', async () => {
    const { id } = await createEndpoint(t, account, { url: 'http://127.0.0.1:4567/hooks', events: [SUCCEEDED] });
    assert.deepEqual((await listEndpoints(t, account)).map((e) => [e.id, e.url]), [[id, 'http://127.0.0.1:4567/hooks']]);
  });

  it('still refuses credentials and other schemes', async () => {
    await assertError(await createEndpointRaw(t, account, { url: 'http://a:b@127.0.0.1:4567/', events: [SUCCEEDED] }), 400, 'webhook.invalid_url');
    await assertError(await createEndpointRaw(t, account, { url: 'file:///etc/passwd', events: [SUCCEEDED] }), 400, 'webhook.url_scheme_not_allowed');
    assert.equal((await endpointRows(t, account.keyId)).length, 1);
  });
});
