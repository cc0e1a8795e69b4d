package main

import (
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/addonpkg/addonpkg/internal/conformance"
	"github.com/addonpkg/addonpkg/pkg/safetree"
)

func newConformanceCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "conformance",
		Short: "Check a reader of the add-on format against the conformance vectors",
		Long: `The conformance suite of spec/addon-v1.md (spec/conformance/) is a set of
vectors: small add-ons, each with the result a reader must give for it.
'conformance read' is addonpkg's own reader for the suite; 'conformance run'
runs any reader command over the vectors and compares.`,
		Example: `  addonpkg conformance run
  addonpkg conformance run --vectors spec/conformance/vectors -- ./my-reader --json
  addonpkg conformance read oci:spec/conformance/vectors/image-gzip/layout:v1`,
		// Without a command: the help; an unknown one is an error, as the
		// root's (cobra printed the help and exited 0).
		Args: rootArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	cmd.SuggestionsMinimumDistance = 2 // as the root's
	cmd.AddCommand(newConformanceReadCmd(a), newConformanceRunCmd(a))
	return cmd
}

func newConformanceReadCmd(a *app) *cobra.Command {
	var platform string
	cmd := &cobra.Command{
		Use:   "read SOURCE",
		Short: "Print what addonpkg reads from an add-on, as a conformance result",
		Long: `Read unpacks the add-on in SOURCE (oci:DIR:TAG, oci-archive:FILE:TAG or
docker-archive:FILE; nothing is fetched) and prints the conformance result on stdout: {"result":"ok","form":...,
"identity":...,"files":{...},"links":{...}}, or {"result":"refuse","reason":...}
with the refusal class of spec/addon-v1.md section 14. A refused add-on exits
1, with the error on stderr.`,
		Example: `  addonpkg conformance read oci:spec/conformance/vectors/image-gzip/layout:v1
  addonpkg conformance read --platform linux/arm64 oci:./layout:v1`,
		Args: exactArgs("SOURCE"),
		RunE: func(cmd *cobra.Command, args []string) error {
			p, err := parsePlatform(platform)
			if err != nil {
				return err
			}
			res, err := conformance.Read(cmd.Context(), args[0], conformance.ReadOptions{Platform: p})
			if res.Result == "" {
				return err
			}
			if perr := a.printJSON(res); perr != nil {
				return perr
			}
			return err
		},
	}
	addPlatformFlag(cmd, &platform, true)
	return cmd
}

func newConformanceRunCmd(a *app) *cobra.Command {
	var (
		dir    string
		asJSON bool
	)
	cmd := &cobra.Command{
		Use:   "run [-- READER [ARG...]]",
		Short: "Run a reader command over every conformance vector and compare",
		Long: `Run runs READER once per vector, with the vector's source (oci:DIR:v1,
oci-archive:FILE:v1 or docker-archive:FILE) appended as its last argument and
ADDON_PLATFORM=linux/amd64, ADDON_VECTOR and ADDON_SOURCE in its environment.
The reader prints its result as JSON on stdout and exits 0 for "ok", non-zero
for "refuse" (the contract of spec/conformance/README.md). Without READER,
this addonpkg's own 'conformance read' is run.

It prints one line per vector (PASS or FAIL with what differs) and exits 1
if any vector fails.`,
		Example: `  addonpkg conformance run
  addonpkg conformance run --vectors spec/conformance/vectors -- python3 reader.py
  addonpkg conformance run --json`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			reader, err := readerCommand(args)
			if err != nil {
				return err
			}
			outs, err := conformance.RunDir(cmd.Context(), dir, conformance.RunOptions{Command: reader})
			if err != nil {
				return err
			}
			if asJSON {
				err = a.printJSON(outcomesJSON(outs))
			} else {
				printOutcomes(a.stdout, outs)
			}
			if err != nil {
				return err
			}
			return conformance.Verdict(outs)
		},
	}
	cmd.Flags().StringVar(&dir, "vectors", "spec/conformance/vectors", "folder of the vectors")
	addJSONFlag(cmd, &asJSON, "each vector's outcome")
	return cmd
}

// readerCommand is the reader conformance run runs: READER [ARG...],
// else this addonpkg's own conformance read.
func readerCommand(args []string) ([]string, error) {
	if len(args) > 0 {
		return args, nil
	}
	self, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("find this addonpkg: %w", err)
	}
	return []string{self, "conformance", "read"}, nil
}

// printOutcomes prints one PASS or FAIL line per vector, and how many
// passed.
func printOutcomes(w io.Writer, outs []conformance.Outcome) {
	for _, o := range outs {
		// A vector's name is its directory's, and the problems quote the
		// reader: neither reaches the terminal with control characters.
		name := safetree.Sanitize(o.Vector.Name)
		if o.Passed() {
			fmt.Fprintf(w, "PASS %s\n", name)
			continue
		}
		fmt.Fprintf(w, "FAIL %s: %s\n", name, clean(strings.Join(o.Problems, "; ")))
	}
	fmt.Fprintf(w, "%d of %d vectors passed\n", len(outs)-conformance.Failed(outs), len(outs))
}

type outcomeJSON struct {
	Vector   string             `json:"vector"`
	Passed   bool               `json:"passed"`
	Problems []string           `json:"problems,omitempty"`
	Expected conformance.Result `json:"expected"`
	Got      conformance.Result `json:"got"`
	Stderr   string             `json:"stderr,omitempty"`
}

func outcomesJSON(outs []conformance.Outcome) []outcomeJSON {
	js := make([]outcomeJSON, len(outs))
	for i, o := range outs {
		js[i] = outcomeJSON{Vector: o.Vector.Name, Passed: o.Passed(), Problems: o.Problems, Expected: o.Vector.Expected, Got: o.Got, Stderr: o.Stderr}
	}
	return js
}
