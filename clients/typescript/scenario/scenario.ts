/**
 * A small real scenario with the generated client, run by the platform's tests against a running platform:
 *   RECORDS_URL=http://127.0.0.1:3000/api RECORDS_TOKEN=<API token> node build/scenario/scenario.js
 * Prints one JSON line: what it created, listed and read.
 */
import {
  Configuration,
  FieldType,
  FieldsApi,
  HistoryApi,
  ModulesApi,
  RecordsApi,
  SpacesApi,
} from '../src/index';

declare const process: { env: Record<string, string | undefined>; exitCode?: number };

function setting(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set`);
  return value;
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

  console.log(
    JSON.stringify({
      space: space.name,
      module: module.name,
      field: status.key,
      closed: closed.items.map((record) => record.name),
      history: history.items.map((change) => [change.oldValue, change.newValue]),
    }),
  );
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
