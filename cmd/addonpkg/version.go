package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"runtime"
	"runtime/debug"
	"sync"

	"github.com/spf13/cobra"
)

// Set at link time by make build:
//
//	-ldflags "-X main.version=v1.2.3 -X main.commit=0123abc..."
//
// Unset, they come from the module version (go install ...@v1.2.3) and
// the VCS stamp of go build.
var (
	version = ""
	commit  = ""
)

// buildInfo is what `addonpkg version --json` prints.
type buildInfo struct {
	Version   string `json:"version"`
	Commit    string `json:"commit"`
	GoVersion string `json:"goVersion"`
	Platform  string `json:"platform"`
}

func (b buildInfo) line() string {
	return fmt.Sprintf("addonpkg %s (commit %s, %s, %s)", b.Version, b.Commit, b.GoVersion, b.Platform)
}

// readBuildInfo is the version, commit, Go version and platform of this
// binary.
func readBuildInfo() buildInfo {
	b := buildInfo{Version: version, Commit: commit, GoVersion: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH}
	if bi, ok := debug.ReadBuildInfo(); ok {
		if b.Version == "" && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
			b.Version = bi.Main.Version
		}
		if b.Commit == "" {
			var rev, dirty string
			for _, s := range bi.Settings {
				switch {
				case s.Key == "vcs.revision":
					rev = s.Value
				case s.Key == "vcs.modified" && s.Value == "true":
					dirty = "-dirty"
				}
			}
			if rev != "" {
				b.Commit = rev + dirty
			}
		}
	}
	if b.Version == "" {
		b.Version = "dev"
	}
	if b.Commit == "" {
		b.Commit = "unknown"
	}
	return b
}

func newVersionCmd(a *app) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print addonpkg's version, commit, Go version and platform",
		Example: `  addonpkg version
  addonpkg version --json`,
		Args: noArgs,
		RunE: func(*cobra.Command, []string) error {
			info := readBuildInfo()
			if asJSON {
				return a.printJSON(info)
			}
			_, err := fmt.Fprintf(a.stdout, "version:  %s\ncommit:   %s\ngo:       %s\nplatform: %s\n", info.Version, info.Commit, info.GoVersion, info.Platform)
			return err
		},
	}
	addJSONFlag(cmd, &asJSON, "the version, commit, Go version and platform")
	return cmd
}

// lineHandler prints each log record's message as one "addonpkg: ..."
// line on w (the records of registry.Options.Logger are whole lines).
type lineHandler struct {
	mu sync.Mutex
	w  io.Writer
}

func (h *lineHandler) Enabled(context.Context, slog.Level) bool { return true }

func (h *lineHandler) Handle(_ context.Context, r slog.Record) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	_, err := fmt.Fprintln(h.w, "addonpkg: "+clean(r.Message))
	return err
}

func (h *lineHandler) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h *lineHandler) WithGroup(string) slog.Handler      { return h }
