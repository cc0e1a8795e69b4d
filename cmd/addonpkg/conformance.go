package main

import (
	"errors"
	"fmt"
	"os"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/spf13/cobra"

	"github.com/addonpkg/addonpkg/internal/conformance"
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
	}
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
			var opts conformance.ReadOptions
			if platform != "" {
				p, err := v1.ParsePlatform(platform)
				if err != nil {
					return fmt.Errorf("--platform %q: %w", platform, err)
				}
				opts.Platform = p
			}
			res, err := conformance.Read(cmd.Context(), args[0], opts)
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
			reader := args
			if len(reader) == 0 {
				self, err := os.Executable()
				if err != nil {
					return fmt.Errorf("find this addonpkg: %w", err)
				}
				reader = []string{self, "conformance", "read"}
			}
			vs, err := conformance.LoadVectors(dir)
			if err != nil {
				return err
			}
			outs, err := conformance.Run(cmd.Context(), vs, conformance.RunOptions{Command: reader})
			if err != nil {
				return err
			}
			failed := 0
			for _, o := range outs {
				if !o.Passed() {
					failed++
				}
			}
			if asJSON {
				if err := a.printJSON(outcomesJSON(outs)); err != nil {
					return err
				}
			} else {
				for _, o := range outs {
					if o.Passed() {
						fmt.Fprintf(a.stdout, "PASS %s\n", o.Vector.Name)
						continue
					}
					fmt.Fprintf(a.stdout, "FAIL %s: %s\n", o.Vector.Name, strings.Join(o.Problems, "; "))
				}
				fmt.Fprintf(a.stdout, "%d of %d vectors passed\n", len(outs)-failed, len(outs))
			}
			if failed > 0 {
				return errors.New(fmt.Sprint(failed, " of ", len(outs), " conformance vectors failed"))
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&dir, "vectors", "spec/conformance/vectors", "folder of the vectors")
	addJSONFlag(cmd, &asJSON, "each vector's outcome")
	return cmd
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
