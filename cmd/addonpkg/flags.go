package main

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/spf13/cobra"

	"github.com/addonpkg/addonpkg/pkg/render"
	"github.com/addonpkg/addonpkg/pkg/source"
	"github.com/addonpkg/addonpkg/pkg/unpack"
	"github.com/addonpkg/addonpkg/pkg/values"
)

// The flags many commands share are declared here, once, so that their
// names, defaults, help and completion cannot drift apart.

// addJSONFlag adds --json; what says what the command prints.
func addJSONFlag(cmd *cobra.Command, v *bool, what string) {
	cmd.Flags().BoolVar(v, "json", false, "print "+what+" as JSON")
}

// addQuietFlag adds -q/--quiet, declared so by every command that says
// more on stderr than its errors (progress, kustomize's and the API
// server's warnings): what says what it silences, which app.infof then
// leaves out.
func addQuietFlag(cmd *cobra.Command, v *bool, what string) {
	cmd.Flags().BoolVarP(v, "quiet", "q", false, "no "+what)
}

// flagConflict is the error for flags that do not go together (or one
// that needs another): a usage error, exit 1 with the usage line, as a
// bad flag value is, whichever command finds it.
func flagConflict(cmd *cobra.Command, msg string) error {
	return &usageError{cmd: cmd, msg: msg}
}

// addPullFlag adds --pull, the local store's policy for registry
// references (source.PullMissing, PullAlways, PullNever).
func addPullFlag(cmd *cobra.Command, v *string) {
	addEnumFlag(cmd, v, "pull", source.PullMissing, "for REGISTRY/REPO references: missing (a copy in the local store wins), always or never read the registry",
		source.PullMissing, source.PullAlways, source.PullNever)
}

// addEnumFlag adds a string flag --name that takes one of words (def
// its default), completed with them. Any other value is refused as the
// flag is parsed, as a bad duration is: a usage error that names the
// command, the flag and the words, with the usage line.
func addEnumFlag(cmd *cobra.Command, v *string, name, def, help string, words ...string) {
	*v = def
	cmd.Flags().Var(&checkedString{v: v, check: oneOf(words)}, name, help)
	_ = cmd.RegisterFlagCompletionFunc(name, fixedCompletion(words...))
}

// oneOf accepts one of words.
func oneOf(words []string) func(string) error {
	return func(s string) error {
		if !slices.Contains(words, s) {
			return fmt.Errorf("want %s or %s", strings.Join(words[:len(words)-1], ", "), words[len(words)-1])
		}
		return nil
	}
}

// checkApplyDryRun is apply's --dry-run: none or server. kubectl's
// --dry-run=client, which prints the objects it would send without asking
// the server, is what unpack does here: the error says so.
func checkApplyDryRun(s string) error {
	if s == "client" {
		return errors.New("want none or server: apply has no client dry-run ('addonpkg unpack SOURCE' prints the objects it would send, without a cluster)")
	}
	return oneOf([]string{"none", "server"})(s)
}

// checkedArray is a repeatable string flag (pflag's stringArray: one
// value a time, commas kept) whose every value check accepts or refuses
// as the flag is parsed, so that a malformed --set X or --label X is a
// usage error with the usage line, as a bad duration is, not a bare
// message from the command's run.
type checkedArray struct {
	v     *[]string
	check func(string) error
}

// addCheckedArray adds the repeatable flag --name, each value checked.
func addCheckedArray(cmd *cobra.Command, v *[]string, name, help string, check func(string) error) {
	cmd.Flags().Var(&checkedArray{v: v, check: check}, name, help)
}

// String is "" when no value was given, so that help prints no
// "(default [])".
func (c *checkedArray) String() string {
	if len(*c.v) == 0 {
		return ""
	}
	return "[" + strings.Join(*c.v, ",") + "]"
}

// Type is pflag's for a repeatable string: help and completion treat
// the flag as stringArray's.
func (c *checkedArray) Type() string { return "stringArray" }

// GetSlice is the values given, each its own, as pflag's stringArray
// gives them (pflag.SliceValue): an error about one names it
// (namedInput), not the list.
func (c *checkedArray) GetSlice() []string { return *c.v }

// Append is Set (pflag.SliceValue).
func (c *checkedArray) Append(s string) error { return c.Set(s) }

// Replace sets the values to vals, each checked (pflag.SliceValue).
func (c *checkedArray) Replace(vals []string) error {
	for _, s := range vals {
		if err := c.check(s); err != nil {
			return err
		}
	}
	*c.v = slices.Clone(vals)
	return nil
}

func (c *checkedArray) Set(s string) error {
	if err := c.check(s); err != nil {
		return err
	}
	*c.v = append(*c.v, s)
	return nil
}

// checkKeyValue accepts KEY=VALUE with a KEY (--label, --annotation).
func checkKeyValue(s string) error {
	if k, _, ok := strings.Cut(s, "="); !ok || k == "" {
		return errors.New("want KEY=VALUE")
	}
	return nil
}

// checkAssignment accepts what values.ParseAssignment does (--set).
func checkAssignment(s string) error {
	if _, _, err := values.ParseAssignment(s); err != nil {
		return errors.New("want NAME=VALUE, NAME a letter or '_', then letters, digits or '_'")
	}
	return nil
}

// checkedString is a string flag whose value check accepts or refuses
// as the flag is parsed (--platform, the word flags).
type checkedString struct {
	v     *string
	check func(string) error
}

func (c *checkedString) String() string { return *c.v }
func (c *checkedString) Type() string   { return "string" }
func (c *checkedString) Set(s string) error {
	if err := c.check(s); err != nil {
		return err
	}
	*c.v = s
	return nil
}

// checkPlatform accepts os/arch[/variant] as an index names it, and ""
// (the running platform).
func checkPlatform(s string) error {
	if s == "" {
		return nil
	}
	if _, err := v1.ParsePlatform(s); err != nil {
		return errors.New("want os/arch[/variant], such as linux/amd64 or linux/arm/v7")
	}
	return nil
}

// addPlatformFlag adds --platform, the image picked from an index;
// fromEnv makes $ADDON_PLATFORM its default.
func addPlatformFlag(cmd *cobra.Command, v *string, fromEnv bool) {
	help, def := "platform to pick from an index, os/arch[/variant]", ""
	if fromEnv {
		help, def = help+" (default $ADDON_PLATFORM)", os.Getenv("ADDON_PLATFORM")
	}
	*v = def
	cmd.Flags().Var(&checkedString{v: v, check: checkPlatform}, "platform", help)
	_ = cmd.RegisterFlagCompletionFunc("platform", fixedCompletion("linux/amd64", "linux/arm64", "linux/arm/v7", "linux/ppc64le", "linux/s390x"))
}

// renderFlags say how an add-on renders for installing: whether its
// kustomization may load remote resources, and the values it declares
// for its installer (--values files in order, then --set, later ones
// winning, as Helm takes them).
type renderFlags struct {
	allowRemote bool
	set         []string
	files       []string
	maxKeys     int
	maxObjects  int
	maxTargets  int
}

func (r *renderFlags) add(cmd *cobra.Command) {
	f := cmd.Flags()
	f.BoolVar(&r.allowRemote, "allow-remote", false, "let a kustomization load remote resources")
	addCheckedArray(cmd, &r.set, "set", "fill the add-on's value NAME, as it declares in its .addonvalues (repeatable): --set NAME=VALUE", checkAssignment)
	f.StringArrayVar(&r.files, "values", nil, "fill the add-on's values from a YAML file of NAME: VALUE lines (repeatable; --set wins)")
	addKustomizeLimits(cmd, &r.maxKeys, &r.maxObjects, &r.maxTargets)
}

// limits are the render options of the flags, without values.
func (r *renderFlags) limits() render.Options {
	return render.Options{AllowRemote: r.allowRemote, MaxMappingKeys: r.maxKeys, MaxKustomizeObjects: r.maxObjects, MaxPatchTargets: r.maxTargets}
}

// given reports whether any value was given.
func (r *renderFlags) given() bool { return len(r.set) > 0 || len(r.files) > 0 }

// options are the render options; with fill, the add-on's declared
// values are filled in (an add-on that declares required values then
// needs them), else only when some are given.
func (r *renderFlags) options(fill bool) (render.Options, error) {
	opts := r.limits()
	if !fill && !r.given() {
		return opts, nil
	}
	opts.Values = map[string]string{}
	for _, file := range r.files {
		vals, err := values.ReadFile(file)
		if err != nil {
			return opts, fmt.Errorf("--values: %w", err)
		}
		for k, v := range vals {
			opts.Values[k] = v
		}
	}
	for _, s := range r.set {
		k, v, err := values.ParseAssignment(s)
		if err != nil {
			return opts, fmt.Errorf("--set: %w", err)
		}
		opts.Values[k] = v
	}
	return opts, nil
}

// sourceFlags say how the commands that install or show one add-on
// (unpack, inspect, diff, apply) read its SOURCE: the local store's pull
// policy, the platform picked from an index, the keys its signature must
// verify against, the cap of an http download, and the registry
// transport. They are declared and read here, once, so the four commands
// read a SOURCE alike.
type sourceFlags struct {
	pull, platform string
	fetch          fetchFlags
}

func (s *sourceFlags) add(a *app, cmd *cobra.Command) {
	addPullFlag(cmd, &s.pull)
	addPlatformFlag(cmd, &s.platform, false)
	addVerifyKeyFlag(cmd)
	s.fetch.add(cmd)
	a.addRegistryFlags(cmd)
}

// options are the source options the flags ask for, and the unpack
// options with the platform (nil: the running one).
func (s *sourceFlags) options(cmd *cobra.Command, a *app) (source.Options, unpack.Options, error) {
	sopts, err := a.sourceOptions(s.pull)
	if err != nil {
		return sopts, unpack.Options{}, err
	}
	s.fetch.apply(&sopts)
	if err := applyVerifyKeys(cmd, &sopts); err != nil {
		return sopts, unpack.Options{}, err
	}
	p, err := parsePlatform(s.platform)
	return sopts, unpack.Options{Platform: p}, err
}

// dirValue is unpack's -o DIR: a directory to write, never empty (-o ""
// fell back to the stream on stdout) nor "-" (which made a folder named
// "-"; the stream is what unpack prints without -o), nor a new folder
// named for one of kubectl's output formats (notOutputFormat).
type dirValue string

func (v *dirValue) String() string { return string(*v) }
func (v *dirValue) Type() string   { return "dir" }
func (v *dirValue) Set(s string) error {
	switch s {
	case "":
		return fmt.Errorf("want a directory")
	case "-":
		return fmt.Errorf("want a directory; without -o, unpack prints the rendered stream on stdout")
	}
	if err := notOutputFormat("unpack prints the rendered YAML stream on stdout without -o, and JSON with --json")(s); err != nil {
		return err
	}
	*v = dirValue(s)
	return nil
}

// timeoutValue is --timeout: a positive duration. registry.Options
// reads 0 as its default and a negative one as no timeout at all, so
// "--timeout 0" waited 60s and "--timeout -1s" forever.
type timeoutValue time.Duration

func (v *timeoutValue) String() string { return time.Duration(*v).String() }
func (v *timeoutValue) Type() string   { return "duration" }
func (v *timeoutValue) Set(s string) error {
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 {
		return fmt.Errorf("want a positive duration such as 30s or 2m")
	}
	*v = timeoutValue(d)
	return nil
}

// retriesValue is --retries: 0 for none, as a count reads (-1, which
// said none before, still does). registry.Options reads 0 as its
// default of 4, so "--retries 0" retried 4 times.
type retriesValue int

func (v *retriesValue) String() string { return strconv.Itoa(max(int(*v), 0)) }
func (v *retriesValue) Type() string   { return "int" }
func (v *retriesValue) Set(s string) error {
	n, err := strconv.Atoi(s)
	if err != nil || n < -1 {
		return fmt.Errorf("want a number of retries, 0 for none")
	}
	if n <= 0 {
		n = -1 // registry.Options' none
	}
	*v = retriesValue(n)
	return nil
}

// countValue is a count of at least 1 (--concurrency): 0 or less is
// refused as the flag is parsed, not when the command runs.
type countValue int

func (v *countValue) String() string { return strconv.Itoa(int(*v)) }
func (v *countValue) Type() string   { return "int" }
func (v *countValue) Set(s string) error {
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 {
		return fmt.Errorf("want a number, at least 1")
	}
	*v = countValue(n)
	return nil
}

// deleteDryRunValue is uninstall's --dry-run: a bool (--dry-run alone is
// true) that also takes kubectl delete's words, so that the
// --dry-run=server written for apply and kubectl is not refused with
// strconv's message. Whichever is given, the deletions are worked out
// from the inventories and the live objects; nothing is sent.
type deleteDryRunValue bool

func (v *deleteDryRunValue) String() string   { return strconv.FormatBool(bool(*v)) }
func (v *deleteDryRunValue) Type() string     { return "bool" }
func (v *deleteDryRunValue) IsBoolFlag() bool { return true }
func (v *deleteDryRunValue) Set(s string) error {
	switch s {
	case "server", "client":
		*v = true
		return nil
	case "none":
		*v = false
		return nil
	}
	b, err := strconv.ParseBool(s)
	if err != nil {
		return fmt.Errorf("want true, false, none, server or client")
	}
	*v = deleteDryRunValue(b)
	return nil
}

// withDropText is opts with DropText.
func withDropText(opts render.Options) render.Options {
	opts.DropText = true
	return opts
}

// withValues is opts with Values.
func withValues(opts render.Options, vals map[string]string) render.Options {
	opts.Values = vals
	return opts
}
