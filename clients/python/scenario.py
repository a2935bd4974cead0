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
    url, token = setting("RECORDS_URL"), setting("RECORDS_TOKEN")
    with rc.ApiClient(rc.Configuration(host=url, access_token=token)) as admin:
        records = rc.RecordsApi(admin)
        space = rc.SpacesApi(admin).create_space(rc.SpaceCreate(name="Scenario python"))
        module = rc.ModulesApi(admin).create_module(rc.ModuleCreate(space_id=space.id, name="Tickets"))
        status = rc.FieldsApi(admin).create_field(
            rc.FieldCreate(module_id=module.id, name="Status", type=rc.FieldType.TEXT)
        )
        created = {}
        for name, value in [("Printer", "open"), ("Scanner", "open"), ("Router", "closed")]:
            created[name] = records.create_record(
                rc.RecordCreate(module_id=module.id, name=name, fields={"status": rc.FieldValue(value)})
            ).id
        records.update_record_by_id(
            created["Printer"], rc.RecordUpdate(fields={"status": rc.FieldValue("closed")})
        )

        closed = records.list_module_records(module.id, filter="status=closed", order="name;ASC")
        history = rc.HistoryApi(admin).list_field_history(
            module.id, created["Printer"], filter=f"field=fields.{status.key}"
        )

    print(
        json.dumps(
            {
                "space": space.name,
                "module": module.name,
                "field": status.key,
                "closed": [record.name for record in closed.items],
                "history": [[change.old_value, change.new_value] for change in history.items],
            }
        )
    )


if __name__ == "__main__":
    main()
