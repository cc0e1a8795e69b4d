package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/addonpkg/addonpkg/pkg/layout"
	"github.com/addonpkg/addonpkg/pkg/registry"
	"github.com/addonpkg/addonpkg/pkg/source"
	"github.com/addonpkg/addonpkg/pkg/source/git"
	"github.com/addonpkg/addonpkg/pkg/source/https"
)

// app holds what every command shares.
type app struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	storeDir       string
	reg            registry.Options
	quiet          bool
	verbose        bool
	maxLayers      int        // --max-layers of the commands that read images
	args           []string   // the command line, without the program's name
	waitLogs       []*waitLog // the waits of progress, ended when the command is
}

// newRootCmd is the command tree.
func newRootCmd(stdin io.Reader, stdout, stderr io.Writer) *cobra.Command {
	root, _ := newRoot(stdin, stdout, stderr)
	return root
}

// newRoot is the command tree and the state its commands share.
func newRoot(stdin io.Reader, stdout, stderr io.Writer) (*cobra.Command, *app) {
	routeKlog()
	info := readBuildInfo()
	a := &app{stdin: stdin, stdout: &stdoutWriter{w: stdout}, stderr: stderr}
	a.reg.UserAgent = "addonpkg/" + info.Version
	root := &cobra.Command{
		Use:   "addonpkg",
		Short: "Package Kubernetes add-ons as OCI images, ship them through registries, unpack them anywhere",
		Long: `addonpkg packages a Kubernetes add-on (plain manifests or a kustomize tree)
as an OCI image, pushes it to any registry, and unpacks it anywhere, with no
container runtime, no root and no daemon.

Two forms, specified in spec/addon-v1.md: the image form (an ordinary
container image holding the add-on under /addon) and the artifact form
(addonpkg's own OCI artifact media types).`,
		Example: `  addonpkg build examples/metrics-server -t metrics-server:0.7
  addonpkg unpack metrics-server:0.7 | kubectl apply -f -
  addonpkg push metrics-server:0.7 registry.example.com/addons/metrics-server:0.7`,
		Version:       info.Version,
		SilenceUsage:  true,
		SilenceErrors: true,
		Args:          rootArgs,
		// Without a command: the help.
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
		PersistentPreRunE: func(*cobra.Command, []string) error {
			// client-go logs through klog to stderr (a response cut short
			// by a cancelled request, say): a command says what went wrong
			// in its own one line, so klog speaks only with -v.
			klogLines.to.Store(nil)
			if a.verbose {
				lines := &lineHandler{w: a.stderr}
				a.reg.Logger = slog.New(lines)
				klogLines.to.Store(lines)
			}
			return nil
		},
	}
	root.SuggestionsMinimumDistance = 2
	root.SetVersionTemplate(info.line() + "\n")
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		if c.HasParent() {
			return flagError(c, err, a.args)
		}
		return rootFlagError(c, err, a.args)
	})
	root.SetIn(stdin)
	root.SetOut(a.stdout)
	root.SetErr(stderr)
	root.PersistentFlags().StringVar(&a.storeDir, "store", "", "local store directory (default $ADDONPKG_HOME, else $XDG_DATA_HOME/addonpkg)")
	root.PersistentFlags().BoolVarP(&a.verbose, "verbose", "v", false, "log each registry request and response on stderr (credentials redacted), and the registry's own words on errors")
	root.AddCommand(
		newBuildCmd(a), newImagesCmd(a), newTagCmd(a), newRmCmd(a), newGCCmd(a),
		newUnpackCmd(a), newInspectCmd(a),
		newPushCmd(a), newPullCmd(a), newCopyCmd(a), newLsCmd(a),
		newLoginCmd(a), newLogoutCmd(a),
		newDiffCmd(a), newDoctorCmd(a), newVersionCmd(a),
		newConformanceCmd(a),
		newLockCmd(a),
		newRenderCmd(a),
		newMirrorCmd(a),
		newSignCmd(a), newVerifyCmd(a),
		newApplyCmd(a), newUninstallCmd(a), newStatusCmd(a),
		newDocsCmd(root),
	)
	// cobra adds --version when the CLI runs; add it now, so that the
	// generated reference lists it with the other root flags.
	root.InitDefaultVersionFlag()
	strictCompletionAndHelp(root)
	return root, a
}

// store opens the local store; its first write creates it.
func (a *app) store() (*layout.Store, error) {
	dir := a.storeDir
	if dir == "" {
		var err error
		if dir, err = layout.DefaultDir(); err != nil {
			return nil, err
		}
	}
	return layout.InitOnWrite(dir)
}

// sourceOptions are the options of every command that reads a SOURCE.
// pull is a word --pull took (addPullFlag refuses the others as it
// parses), or one of the source.Pull constants.
func (a *app) sourceOptions(pull string) (source.Options, error) {
	st, err := a.store()
	if err != nil {
		return source.Options{}, err
	}
	return source.Options{Store: st, Registry: a.reg, Pull: pull, StoreFirst: true, MaxLayers: a.maxLayers, Locations: locations()}, nil
}

// locations are the kinds of SOURCE beyond the core ones: the command
// line reads them all.
func locations() []source.Location {
	return []source.Location{git.Location{}, https.Location{}}
}

// addRegistryFlags adds the transport flags to commands that talk to registries.
func (a *app) addRegistryFlags(cmd *cobra.Command) {
	f := cmd.Flags()
	f.BoolVar(&a.reg.PlainHTTP, "plain-http", false, "use plain HTTP (automatic for localhost and 127.0.0.1)")
	f.BoolVar(&a.reg.InsecureSkipTLSVerify, "insecure-skip-tls-verify", false, "accept any TLS certificate (still HTTPS)")
	f.StringVar(&a.reg.CAFile, "ca-file", "", "PEM file of CA certificates to trust")
	a.reg.Timeout, a.reg.Retries = 60*time.Second, 4
	f.Var((*timeoutValue)(&a.reg.Timeout), "timeout", "how long to wait for a server's answer, or for more of a response body (registries, http and git sources; git+ssh: the whole fetch)")
	f.Var((*retriesValue)(&a.reg.Retries), "retries", "retries of a failed registry request (429, 5xx, dropped connections); 0 for none")
}

// printJSON prints v as indented JSON. encoding/json escapes the C0
// controls; DEL and the C1 controls (which some terminals obey) are
// escaped too, so no string from an image reaches the terminal raw.
func (a *app) printJSON(v any) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return err
	}
	_, err := io.WriteString(a.stdout, escapeJSONControls(buf.String()))
	return err
}

// warn prints a library's warnings (render.Result.Warnings and the like)
// as addonpkg's own, one line each, unless --quiet.
func (a *app) warn(warnings []string) {
	for _, w := range warnings {
		a.infof("addonpkg: warning: %s", oneLine(w))
	}
}

func (a *app) infof(format string, args ...any) {
	if !a.quiet {
		fmt.Fprintf(a.stderr, format+"\n", args...)
	}
}

// isTerminal reports whether w is a terminal (for progress output).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}
