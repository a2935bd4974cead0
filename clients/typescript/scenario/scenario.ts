/**
 * A small real scenario with the generated client, run by the platform's tests against a running platform:
 *   RECORDS_URL=http://127.0.0.1:3000/api RECORDS_TOKEN=<API token> node build/scenario/scenario.js
 * Prints one JSON line: what it created, listed and read.
 */
import { Configuration, ModulesApi, RecordsApi, SpacesApi } from '../src/index';

declare const process: { env: Record<string, string | undefined>; exitCode?: number };

function setting(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set`);
  return value;
}

async function main(): Promise<void> {
  const basePath = setting('RECORDS_URL');
  const admin = new Configuration({ basePath, accessToken: setting('RECORDS_TOKEN') });
  const spaces = new SpacesApi(admin);
  const modules = new ModulesApi(admin);
  const records = new RecordsApi(admin);

  const space = await spaces.createSpace({ spaceCreate: { name: 'Scenario typescript' } });
  const module = await modules.createModule({ moduleCreate: { spaceId: space.id, name: 'Tickets' } });
  for (const name of ['Printer', 'Scanner', 'Router'])
    await records.createRecord({ recordCreate: { moduleId: module.id, name } });

  const filtered = await records.listModuleRecords({
    moduleId: module.id,
    filter: 'name~%t%',
    order: 'name;ASC',
  });

  console.log(
    JSON.stringify({
      space: space.name,
      module: module.name,
      filtered: filtered.items.map((record) => record.name),
      total: filtered.meta.total,
    }),
  );
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
