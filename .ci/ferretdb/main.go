// Command ferretdb runs FerretDB 1.x with its SQLite backend as a MongoDB-wire server for the test suite.
// It embeds FerretDB's library package because `go install .../cmd/ferretdb` builds a binary that panics
// at start-up (upstream issue #2982).
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	"github.com/FerretDB/FerretDB/ferretdb"
)

func main() {
	listenAddr := flag.String("listen", "127.0.0.1:27027", "TCP address to listen on")
	dataDir := flag.String("data", "", "directory holding the SQLite databases (created if missing)")
	logLevel := flag.String("log-level", "warn", "log level: debug, info, warn or error")
	flag.Parse()

	if err := run(*listenAddr, *dataDir, *logLevel); err != nil {
		fmt.Fprintf(os.Stderr, "ferretdb: %s\n", err)
		os.Exit(1)
	}
}

func run(listenAddr, dataDir, logLevel string) error {
	if dataDir == "" {
		return fmt.Errorf("-data is required")
	}

	absoluteDataDir, err := filepath.Abs(dataDir)
	if err != nil {
		return err
	}

	// The SQLite handler refuses a folder that does not exist.
	if err = os.MkdirAll(absoluteDataDir, 0o755); err != nil {
		return err
	}

	var level slog.Level
	if err = level.UnmarshalText([]byte(logLevel)); err != nil {
		return fmt.Errorf("bad -log-level: %w", err)
	}

	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))

	server, err := ferretdb.New(&ferretdb.Config{
		Listener: ferretdb.ListenerConfig{TCP: listenAddr},
		Logger:   logger,
		Handler:  "sqlite",
		// The SQLite URL names a directory and must end with a slash.
		SQLiteURL: "file:" + absoluteDataDir + "/",
	})
	if err != nil {
		return err
	}

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()

	done := make(chan error, 1)
	go func() { done <- server.Run(ctx) }()

	// MongoDBURI blocks until the listener accepts connections.
	fmt.Printf("ready %s\n", server.MongoDBURI())

	return <-done
}
