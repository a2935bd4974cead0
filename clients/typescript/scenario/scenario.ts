/**
 * A small real scenario with the generated client, run by the platform's tests against a running platform:
 *   RECORDS_URL=http://127.0.0.1:3000/api RECORDS_TOKEN=<API token> node build/scenario/scenario.js
 * Prints one JSON line: what it created, listed and read, and what an OAuth access token could read.
 */
import {
  Configuration,
  FieldType,
  FieldsApi,
  HistoryApi,
  ModulesApi,
  OauthApi,
  RecordsApi,
  ResponseError,
  SpacesApi,
} from '../src/index';

declare const process: { env: Record<string, string | undefined>; exitCode?: number };

const REDIRECT_URI = 'http://127.0.0.1/callback';

function setting(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set`);
  return value;
}

/** The authorization code from the 302 the authorize endpoint answers a bearer-token caller with. */
async function authorizationCode(oauth: OauthApi, clientId: string, state: string): Promise<string> {
  try {
    // `redirect: 'manual'`: fetch must not follow the redirect to the client's redirect URI.
    await oauth.authorizeRaw(
      { responseType: 'code', clientId, redirectUri: REDIRECT_URI, state },
      { redirect: 'manual' },
    );
  } catch (error) {
    // The client treats every status outside 2xx as an error; a 302 is the answer expected here.
    if (!(error instanceof ResponseError) || error.response.status !== 302) throw error;
    const location = new URL(error.response.headers.get('location') ?? '');
    if (location.searchParams.get('state') !== state) throw new Error(`state not returned: ${location}`);
    return location.searchParams.get('code') ?? '';
  }
  throw new Error('authorize did not redirect');
}

async function main(): Promise<void> {
  const basePath = setting('RECORDS_URL');
  const admin = new Configuration({ basePath, accessToken: setting('RECORDS_TOKEN') });
  const records = new RecordsApi(admin);

  const space = await new SpacesApi(admin).createSpace({ spaceCreate: { name: 'Scenario typescript' } });
  const module = await new ModulesApi(admin).createModule({
    moduleCreate: { spaceId: space.id, name: 'Tickets' },
  });
  const status = await new FieldsApi(admin).createField({
    fieldCreate: { moduleId: module.id, name: 'Status', type: FieldType.Text },
  });
  const created: Record<string, number> = {};
  for (const [name, value] of [
    ['Printer', 'open'],
    ['Scanner', 'open'],
    ['Router', 'closed'],
  ])
    created[name] = (
      await records.createRecord({ recordCreate: { moduleId: module.id, name, fields: { status: value } } })
    ).id;
  await records.updateRecordById({
    recordId: created.Printer!,
    recordUpdate: { fields: { status: 'closed' } },
  });

  const closed = await records.listModuleRecords({
    moduleId: module.id,
    filter: 'status=closed',
    order: 'name;ASC',
  });
  const history = await new HistoryApi(admin).listFieldHistory({
    moduleId: module.id,
    recordId: created.Printer!,
    filter: `field=fields.${status.key}`,
  });

  const oauth = new OauthApi(admin);
  const client = await oauth.createOAuthClient({
    oAuthClientCreate: { clientName: 'Scenario typescript', redirectUris: [REDIRECT_URI], scope: 'record:read' },
  });
  const code = await authorizationCode(oauth, client.clientId, 'scenario');
  // The client authenticates in the body (client_id, client_secret), the token endpoint's other way beside Basic.
  const issued = await new OauthApi(new Configuration({ basePath })).exchangeToken({
    grantType: 'authorization_code',
    code,
    redirectUri: REDIRECT_URI,
    clientId: client.clientId,
    clientSecret: client.clientSecret,
  });
  const asApp = new RecordsApi(new Configuration({ basePath, accessToken: issued.accessToken }));
  const seen = await asApp.listRecords({ filter: `moduleId=${module.id}`, order: 'name;ASC' });

  console.log(
    JSON.stringify({
      space: space.name,
      module: module.name,
      field: status.key,
      closed: closed.items.map((record) => record.name),
      history: history.items.map((change) => [change.oldValue, change.newValue]),
      oauth: {
        tokenType: issued.tokenType,
        scope: issued.scope,
        records: seen.items.map((record) => record.name),
      },
    }),
  );
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
