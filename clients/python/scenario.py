"""A small real scenario with the generated client, run by the platform's tests against a running platform:

    RECORDS_URL=http://127.0.0.1:3000/api RECORDS_TOKEN=<API token> python scenario.py

Prints one JSON line: what it created, listed and read, and what an OAuth access token could read.
"""
import json
import os
from urllib.parse import parse_qs, urlsplit

import records_client as rc

REDIRECT_URI = "http://127.0.0.1/callback"


def setting(name: str) -> str:
    value = os.environ.get(name)
    if not value:
        raise SystemExit(f"{name} is not set")
    return value


def authorization_code(url: str, token: str, client_id: str, state: str) -> str:
    """The code from the 302 the authorize endpoint answers a bearer-token caller with."""
    # retries=False: urllib3 hands the redirect back instead of following it to the client's redirect URI.
    config = rc.Configuration(host=url, access_token=token, retries=False)
    with rc.ApiClient(config) as client:
        response = rc.OauthApi(client).authorize_without_preload_content(
            response_type="code", client_id=client_id, redirect_uri=REDIRECT_URI, state=state
        )
        if response.status != 302:
            raise SystemExit(f"authorize answered {response.status}, not a redirect")
        query = parse_qs(urlsplit(response.headers["Location"]).query)
        if query["state"] != [state]:
            raise SystemExit(f"state not returned: {response.headers['Location']}")
        return query["code"][0]


def plain(value):
    """A field value as JSON holds it: the union wrapper's instance, or None."""
    return None if value is None else value.actual_instance


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
        client = rc.OauthApi(admin).create_o_auth_client(
            rc.OAuthClientCreate(client_name="Scenario python", redirect_uris=[REDIRECT_URI], scope="record:read")
        )

    code = authorization_code(url, token, client.client_id, "scenario")
    with rc.ApiClient(rc.Configuration(host=url)) as anonymous:
        # The client authenticates in the body (client_id, client_secret), the token endpoint's other way beside Basic.
        issued = rc.OauthApi(anonymous).exchange_token(
            grant_type="authorization_code",
            code=code,
            redirect_uri=REDIRECT_URI,
            client_id=client.client_id,
            client_secret=client.client_secret,
        )
    with rc.ApiClient(rc.Configuration(host=url, access_token=issued.access_token)) as app:
        seen = rc.RecordsApi(app).list_records(filter=f"moduleId={module.id}", order="name;ASC")

    print(
        json.dumps(
            {
                "space": space.name,
                "module": module.name,
                "field": status.key,
                "closed": [record.name for record in closed.items],
                "history": [[plain(change.old_value), plain(change.new_value)] for change in history.items],
                "oauth": {
                    "tokenType": issued.token_type,
                    "scope": issued.scope,
                    "records": [record.name for record in seen.items],
                },
            }
        )
    )


if __name__ == "__main__":
    main()
