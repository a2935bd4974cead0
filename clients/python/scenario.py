"""A small real scenario with the generated client, run by the platform's tests against a running platform:

    RECORDS_URL=http://127.0.0.1:3000/api RECORDS_TOKEN=<API token> python scenario.py

Prints one JSON line: what it created, listed and read.
"""
import json
import os

import records_client as rc


def setting(name: str) -> str:
    value = os.environ.get(name)
    if not value:
        raise SystemExit(f"{name} is not set")
    return value


def main() -> None:
    admin = rc.Configuration(host=setting("RECORDS_URL"), access_token=setting("RECORDS_TOKEN"))
    with rc.ApiClient(admin) as client:
        spaces = rc.SpacesApi(client)
        modules = rc.ModulesApi(client)
        records = rc.RecordsApi(client)

        space = spaces.create_space(rc.SpaceCreate(name="Scenario python"))
        module = modules.create_module(rc.ModuleCreate(space_id=space.id, name="Tickets"))
        for name in ["Printer", "Scanner", "Router"]:
            records.create_record(rc.RecordCreate(module_id=module.id, name=name))

        filtered = records.list_module_records(module.id, filter="name~%t%", order="name;ASC")

        print(
            json.dumps(
                {
                    "space": space.name,
                    "module": module.name,
                    "filtered": [record.name for record in filtered.items],
                    "total": filtered.meta.total,
                }
            )
        )


if __name__ == "__main__":
    main()
