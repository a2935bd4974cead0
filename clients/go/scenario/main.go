// A small real scenario with the generated client, run by the platform's tests against a running platform:
//
//	RECORDS_URL=http://127.0.0.1:3000/api RECORDS_TOKEN=<API token> go run ./scenario
//
// Prints one JSON line: what it created, listed and read.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"

	records "github.com/records-platform/records-platform/clients/go"
)

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

func main() {
	serverURL := setting("RECORDS_URL")
	api := client(serverURL)
	admin := context.WithValue(context.Background(), records.ContextAccessToken, setting("RECORDS_TOKEN"))

	space := must(api.SpacesAPI.CreateSpace(admin).SpaceCreate(*records.NewSpaceCreate("Scenario go")).Execute())
	moduleCreate := records.NewModuleCreate(float64(space.Id))
	moduleCreate.SetName("Tickets")
	module := must(api.ModulesAPI.CreateModule(admin).ModuleCreate(*moduleCreate).Execute())
	status := must(api.FieldsAPI.CreateField(admin).
		FieldCreate(*records.NewFieldCreate(float64(module.Id), "Status", records.FIELDTYPE_TEXT)).Execute())
	created := map[string]int32{}
	for _, record := range [][2]string{{"Printer", "open"}, {"Scanner", "open"}, {"Router", "closed"}} {
		create := records.NewRecordCreate(float64(module.Id), record[0])
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
	})
	if err != nil {
		fail(err)
	}
	fmt.Println(string(out))
}
