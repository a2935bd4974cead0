// A small real scenario with the generated client, run by the platform's tests against a running platform:
//
//	RECORDS_URL=http://127.0.0.1:3000/api RECORDS_TOKEN=<API token> go run ./scenario
//
// Prints one JSON line: what it created, listed and read.
package main

import (
	"context"
	"encoding/json"
	"fmt"
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
	fmt.Fprintln(os.Stderr, err)
	os.Exit(1)
}

func must[T any](value T, _ any, err error) T {
	if err != nil {
		if apiError, ok := err.(*records.GenericOpenAPIError); ok {
			fail(fmt.Errorf("%w: %s", err, apiError.Body()))
		}
		fail(err)
	}
	return value
}

func main() {
	config := records.NewConfiguration()
	config.Servers = records.ServerConfigurations{{URL: setting("RECORDS_URL")}}
	client := records.NewAPIClient(config)
	admin := context.WithValue(context.Background(), records.ContextAccessToken, setting("RECORDS_TOKEN"))

	space := must(client.SpacesAPI.CreateSpace(admin).SpaceCreate(*records.NewSpaceCreate("Scenario go")).Execute())
	moduleCreate := records.NewModuleCreate(float64(space.Id))
	moduleCreate.SetName("Tickets")
	module := must(client.ModulesAPI.CreateModule(admin).ModuleCreate(*moduleCreate).Execute())
	for _, name := range []string{"Printer", "Scanner", "Router"} {
		must(client.RecordsAPI.CreateRecord(admin).RecordCreate(*records.NewRecordCreate(float64(module.Id), name)).Execute())
	}

	filtered := must(client.RecordsAPI.ListModuleRecords(admin, module.Id).Filter("name~%t%").Order("name;ASC").Execute())
	names := []string{}
	for _, record := range filtered.Items {
		names = append(names, record.Name)
	}

	out, err := json.Marshal(map[string]any{
		"space":    space.Name,
		"module":   module.Name,
		"filtered": names,
		"total":    filtered.Meta.Total,
	})
	if err != nil {
		fail(err)
	}
	fmt.Println(string(out))
}
