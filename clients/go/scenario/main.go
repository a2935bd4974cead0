// A small real scenario with the generated client, run by the platform's tests against a running platform:
//
//	RECORDS_URL=http://127.0.0.1:3000/api RECORDS_TOKEN=<API token> go run ./scenario
//
// Prints one JSON line: what it created, listed and read, and what an OAuth access token could read.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"

	records "github.com/records-platform/records-platform/clients/go"
)

const redirectURI = "http://127.0.0.1/callback"

func setting(name string) string {
	value := os.Getenv(name)
	if value == "" {
		fail(fmt.Errorf("%s is not set", name))
	}
	return value
}

func fail(err error) {
	var apiError *records.GenericOpenAPIError
	if errors.As(err, &apiError) {
		err = fmt.Errorf("%w: %s", err, apiError.Body())
	}
	fmt.Fprintln(os.Stderr, err)
	os.Exit(1)
}

// must returns an Execute's value, or ends the scenario on its error.
func must[T any](value T, _ *http.Response, err error) T {
	if err != nil {
		fail(err)
	}
	return value
}

func text(value string) records.FieldValue {
	return records.FieldValue{String: &value}
}

func client(serverURL string) *records.APIClient {
	config := records.NewConfiguration()
	config.Servers = records.ServerConfigurations{{URL: serverURL}}
	return records.NewAPIClient(config)
}

// authorizationCode reads the code from the 302 the authorize endpoint answers a bearer-token caller with.
func authorizationCode(serverURL string, admin context.Context, clientID, state string) string {
	config := records.NewConfiguration()
	config.Servers = records.ServerConfigurations{{URL: serverURL}}
	// Not following the redirect (to the client's redirect URI): the 302 itself is the answer.
	config.HTTPClient = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error {
		return http.ErrUseLastResponse
	}}
	_, response, err := records.NewAPIClient(config).OauthAPI.Authorize(admin).
		ResponseType("code").ClientId(clientID).RedirectUri(redirectURI).State(state).Execute()
	if response == nil || response.StatusCode != http.StatusFound {
		fail(fmt.Errorf("authorize did not redirect: %v", err))
	}
	location, err := url.Parse(response.Header.Get("Location"))
	if err != nil {
		fail(err)
	}
	if location.Query().Get("state") != state {
		fail(fmt.Errorf("state not returned: %s", location))
	}
	return location.Query().Get("code")
}

func main() {
	serverURL := setting("RECORDS_URL")
	api := client(serverURL)
	admin := context.WithValue(context.Background(), records.ContextAccessToken, setting("RECORDS_TOKEN"))

	space := must(api.SpacesAPI.CreateSpace(admin).SpaceCreate(*records.NewSpaceCreate("Scenario go")).Execute())
	moduleCreate := records.NewModuleCreate(space.Id)
	moduleCreate.SetName("Tickets")
	module := must(api.ModulesAPI.CreateModule(admin).ModuleCreate(*moduleCreate).Execute())
	status := must(api.FieldsAPI.CreateField(admin).
		FieldCreate(*records.NewFieldCreate(module.Id, "Status", records.FIELDTYPE_TEXT)).Execute())
	created := map[string]int32{}
	for _, record := range [][2]string{{"Printer", "open"}, {"Scanner", "open"}, {"Router", "closed"}} {
		create := records.NewRecordCreate(module.Id, record[0])
		create.SetFields(map[string]records.FieldValue{"status": text(record[1])})
		created[record[0]] = must(api.RecordsAPI.CreateRecord(admin).RecordCreate(*create).Execute()).Id
	}
	update := records.NewRecordUpdate()
	update.SetFields(map[string]records.FieldValue{"status": text("closed")})
	must(api.RecordsAPI.UpdateRecordById(admin, created["Printer"]).RecordUpdate(*update).Execute())

	closed := must(api.RecordsAPI.ListModuleRecords(admin, module.Id).
		Filter("status=closed").Order("name;ASC").Execute())
	history := must(api.HistoryAPI.ListFieldHistory(admin, module.Id, created["Printer"]).
		Filter("field=fields." + status.Key).Execute())

	clientCreate := records.NewOAuthClientCreate("Scenario go", []string{redirectURI})
	clientCreate.SetScope("record:read")
	registered := must(api.OauthAPI.CreateOAuthClient(admin).OAuthClientCreate(*clientCreate).Execute())
	code := authorizationCode(serverURL, admin, registered.ClientId, "scenario")
	// The client authenticates in the body (client_id, client_secret), the token endpoint's other way beside Basic.
	issued := must(api.OauthAPI.ExchangeToken(context.Background()).
		GrantType("authorization_code").Code(code).RedirectUri(redirectURI).
		ClientId(registered.ClientId).ClientSecret(registered.ClientSecret).Execute())
	asApp := context.WithValue(context.Background(), records.ContextAccessToken, issued.AccessToken)
	seen := must(api.RecordsAPI.ListRecords(asApp).
		Filter(fmt.Sprintf("moduleId=%d", module.Id)).Order("name;ASC").Execute())

	names := func(items []records.Record) []string {
		out := []string{}
		for _, item := range items {
			out = append(out, item.Name)
		}
		return out
	}
	changes := [][2]any{}
	for _, change := range history.Items {
		changes = append(changes, [2]any{change.OldValue, change.NewValue})
	}
	out, err := json.Marshal(map[string]any{
		"space":   space.Name,
		"module":  module.Name,
		"field":   status.Key,
		"closed":  names(closed.Items),
		"history": changes,
		"oauth": map[string]any{
			"tokenType": issued.TokenType,
			"scope":     issued.Scope,
			"records":   names(seen.Items),
		},
	})
	if err != nil {
		fail(err)
	}
	fmt.Println(string(out))
}
