package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/addonpkg/addonpkg/pkg/apply"
	"github.com/addonpkg/addonpkg/pkg/source"
)

// The positional-argument validators of the commands, declared on each
// (Args: exactArgs("SRC", "DST")) as cobra's ExactArgs, RangeArgs,
// MinimumNArgs and NoArgs are, but naming what is missing ("missing
// argument REF") or unexpected, as a usageError. A command that takes
// any arguments uses cobra.ArbitraryArgs. TestArgsAgreeWithUse checks
// each against its Use line.

// noArgs refuses any argument (cobra.NoArgs).
func noArgs(cmd *cobra.Command, args []string) error {
	return checkArgs(cmd, args, nil, nil, false)
}

// exactArgs takes exactly the arguments named (cobra.ExactArgs).
func exactArgs(names ...string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		return checkArgs(cmd, args, names, nil, false)
	}
}

// rangeArgs takes the required arguments and up to len(optional) more
// (cobra.RangeArgs).
func rangeArgs(required []string, optional ...string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		return checkArgs(cmd, args, required, optional, false)
	}
}

// minimumArgs takes the required arguments and any number more
// (cobra.MinimumNArgs).
func minimumArgs(required ...string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		return checkArgs(cmd, args, required, nil, true)
	}
}

// checkArgs names the first missing argument of required, or the first
// one beyond required and optional more unless variadic, or the first
// that is empty: no command takes "" for a name, a SOURCE or a registry,
// and letting one through gives messages about nothing (":latest: not
// found in store").
func checkArgs(cmd *cobra.Command, args, required, optional []string, variadic bool) error {
	names := append(slices.Clip(required), optional...)
	if cmd.Annotations == nil {
		cmd.Annotations = map[string]string{}
	}
	cmd.Annotations[argNamesKey] = strings.Join(names, " ")
	switch {
	case len(args) < len(required):
		missing := required[len(args):]
		what := "argument " + missing[0]
		if len(missing) > 1 {
			what = "arguments " + strings.Join(missing, " ")
		}
		return &usageError{cmd: cmd, msg: "missing " + what}
	case !variadic && len(args) > len(names):
		takes := "no arguments"
		if len(names) > 0 {
			// What the usage line says it takes.
			takes = strings.Join(strings.Fields(cmd.Use)[1:], " ")
		}
		arg := args[len(names)]
		msg := fmt.Sprintf("unexpected argument %q (%s takes %s)", arg, cmd.Name(), takes)
		// --dry-run alone is a dry run, so "--dry-run server" leaves
		// server an argument, as in kubectl.
		if f := cmd.Flags().Lookup("dry-run"); f != nil && f.NoOptDefVal != "" && slices.Contains([]string{"server", "client", "none"}, arg) {
			msg += fmt.Sprintf("; --dry-run takes its value after '=': --dry-run=%s", arg)
		}
		return &usageError{cmd: cmd, msg: msg}
	}
	for i, arg := range args {
		if arg == "" {
			return &usageError{cmd: cmd, msg: fmt.Sprintf("empty argument %s", names[min(i, len(names)-1)])}
		}
	}
	return nil
}

// rootArgs answers an unknown command with cobra's suggestions, each on
// its own line: the root's, and a command's that groups others
// (conformance), which cobra answered with its help and exit 0. Another
// tool's word for a command (its SuggestFor: helm's install, upgrade,
// template, package, show) is the answer alone: helm install suggested
// uninstall, whose name is two letters off.
func rootArgs(cmd *cobra.Command, args []string) error {
	if len(args) == 0 {
		return nil
	}
	path := cmd.CommandPath()
	e := &usageError{cmd: cmd, msg: fmt.Sprintf("unknown command %q", args[0])}
	sug := cmd.SuggestionsFor(args[0])
	var named []string
	for _, c := range cmd.Commands() {
		if c.IsAvailableCommand() && slices.ContainsFunc(c.SuggestFor, func(w string) bool { return strings.EqualFold(w, args[0]) }) {
			named = append(named, c.Name())
		}
	}
	if len(named) > 0 {
		sug = named
	}
	if len(sug) > 0 {
		e.extra = append(e.extra, "Did you mean this?")
		for _, s := range sug {
			e.extra = append(e.extra, "    "+path+" "+s)
		}
	}
	e.extra = append(e.extra, "Run '"+path+" --help' for the commands.")
	return e
}

// flagError turns cobra's flag errors into usage errors; args is the
// command line (app.args). kubectl's, helm's and flux's -o json is this
// CLI's --json: a command that prints JSON says so when given -o json
// (or --output json), which it does not know, and says what to use for
// kubectl's -o yaml, -o wide and -o name, which it has no output for
// (outputHint); any other -o is a mistake of its own. helm's -n and -A
// (a release lives in a namespace) are unknown to status and uninstall,
// whose add-ons are named cluster-wide: they say where the inventories
// are instead.
func flagError(cmd *cobra.Command, err error, args []string) error {
	ue := &usageError{cmd: cmd, msg: err.Error()}
	var ne *pflag.NotExistError
	if !errors.As(err, &ne) {
		return ue
	}
	name, f := ne.GetSpecifiedName(), cmd.Flags()
	switch {
	case slices.Contains([]string{"o", "output"}, name) && f.Lookup("json") != nil:
		ue.msg += outputHint(outputValue(cmd, args))
	case slices.Contains([]string{"n", "namespace", "A", "all-namespaces"}, name) && f.Lookup("namespace") == nil && f.Lookup("inventory-namespace") != nil:
		ue.msg += " (an add-on is named cluster-wide, not in a namespace: its inventory is in --inventory-namespace, default " + apply.DefaultInventoryNamespace + ")"
	}
	return ue
}

// outputHint is what a command that prints JSON with --json says of
// kubectl's -o VALUE, which it does not take: "" for a VALUE that is no
// kubectl output it means.
func outputHint(value string) string {
	switch value {
	case "json":
		return " (addonpkg prints JSON with --json, not -o json)"
	case "yaml":
		return " (addonpkg prints no YAML: --json prints JSON, which a YAML reader reads as it is)"
	case "wide":
		return " (addonpkg has no -o wide: its table is all it prints for people; --json prints everything)"
	case "name":
		return " (addonpkg has no -o name: --json prints JSON, from which jq picks the names)"
	}
	if format, ok := kubectlOutput(value); ok {
		return " (addonpkg has no -o " + format + ": --json prints JSON, from which jq picks what you need)"
	}
	return ""
}

// kubectlTemplates are kubectl's -o formats that take an argument,
// -o FORMAT=ARG.
var kubectlTemplates = []string{"jsonpath", "jsonpath-as-json", "jsonpath-file", "go-template", "go-template-file", "template", "templatefile", "custom-columns", "custom-columns-file"}

// kubectlOutput reports whether value is one of kubectl's -o output
// formats, which its users type after -o by habit: json, yaml, wide,
// name, or FORMAT=ARG (jsonpath=..., go-template=...); format is the
// format's name.
func kubectlOutput(value string) (format string, ok bool) {
	if slices.Contains([]string{"json", "yaml", "wide", "name"}, value) {
		return value, true
	}
	format, _, ok = strings.Cut(value, "=")
	return format, ok && slices.Contains(kubectlTemplates, format)
}

// notOutputFormat is the check of an -o that names a file or folder to
// write (render's and unpack's DIR, lock's and mirror's file): it
// refuses one of kubectl's output formats (kubectlOutput) when nothing
// by that name exists, so that "-o yaml" does not quietly write a
// folder named yaml. What exists is taken as given (an empty folder
// named yaml), and so is a value written as a path (./yaml). instead
// says what the command prints in that format.
func notOutputFormat(instead string) func(string) error {
	return func(s string) error {
		if _, ok := kubectlOutput(s); !ok {
			return nil
		}
		if _, err := os.Lstat(s); !errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		return fmt.Errorf("-o is where to write, not an output format: %s (to write a new %s, give ./%s)", instead, s, s)
	}
}

// outputValue is the value args (the command line) give -o or --output,
// which cmd does not know: the line is read again with cmd's flags and
// an output flag, skipping what the real parse refused; "" when it gives
// none.
func outputValue(cmd *cobra.Command, args []string) string {
	fs := pflag.NewFlagSet(cmd.Name(), pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.ParseErrorsAllowlist.UnknownFlags = true
	out := fs.StringP("output", "o", "", "")
	add := func(f *pflag.Flag) {
		if fs.Lookup(f.Name) == nil && (f.Shorthand == "" || fs.ShorthandLookup(f.Shorthand) == nil) {
			fs.AddFlag(f)
		}
	}
	cmd.Flags().VisitAll(add)
	cmd.InheritedFlags().VisitAll(add)
	_ = fs.ParseAll(args, func(f *pflag.Flag, value string) error {
		if f.Name == "output" {
			*out = value
		}
		return nil // set nothing else: the real parse did
	})
	return *out
}

// rootFlagError is flagError for a flag the root does not know, given
// before the command (addonpkg --json images, as kubectl takes
// --context X before get). cobra takes the word after a flag it does not
// know for the flag's value, finds no command, and the root refuses the
// flag: the error says to give it after the command, naming the command
// of args that has it, and points at the help.
func rootFlagError(root *cobra.Command, err error, args []string) error {
	ferr := flagError(root, err, args)
	var ue *usageError
	var ne *pflag.NotExistError
	if !errors.As(ferr, &ue) || !errors.As(err, &ne) {
		return ferr
	}
	name := ne.GetSpecifiedName()
	for _, arg := range args {
		c, _, ferr := root.Find([]string{arg})
		if ferr != nil || c == root || !c.IsAvailableCommand() {
			continue
		}
		if f := c.Flags().Lookup(name); f != nil || (len(name) == 1 && c.Flags().ShorthandLookup(name) != nil) {
			ue.extra = append(ue.extra, fmt.Sprintf("%s is a flag of %s: give it after the command (addonpkg %s %s ...)", dashes(name), c.Name(), c.Name(), dashes(name)))
			break
		}
	}
	ue.extra = append(ue.extra, "Run 'addonpkg --help' for the commands.")
	return ue
}

// dashes is how the flag named name is written: -x or --name.
func dashes(name string) string {
	if len(name) == 1 {
		return "-" + name
	}
	return "--" + name
}

// argNamesKey is the annotation in which checkArgs leaves the names of
// the arguments a command was given (its Use line's), for inputError.
const argNamesKey = "addonpkg/args"

// inputError is a file or folder named on the command line, by an
// argument or a flag, that cannot be read or written (missing, a
// directory where a file is wanted, no permission): every command says
// it in one form, "NAME PATH: PROBLEM" (SOURCE ./x: no such file or
// directory, -f addons.yaml: is a directory), as kubectl says 'the path
// "x" does not exist'. err is the whole error, for errors.Is.
type inputError struct {
	name, path string // -f, --key or the argument's name; the value given
	problem    error  // the *fs.PathError's Err
	hint       string // what the command added (notASetHint), or ""
	err        error
}

func (e *inputError) Error() string {
	s := e.name + " " + e.path + ": " + e.problem.Error()
	if e.hint != "" {
		s += " (" + e.hint + ")"
	}
	return s
}

func (e *inputError) Unwrap() error { return e.err }

// hintedError is err with a hint after it in parentheses, which
// inputError keeps when it names the path err is about.
type hintedError struct {
	err  error
	hint string
}

func (e *hintedError) Error() string { return e.err.Error() + " (" + e.hint + ")" }
func (e *hintedError) Unwrap() error { return e.err }

// namedInput is err said as an inputError when it is an *fs.PathError
// about a path that cmd's command line gives: an argument (named as its
// Use line names it) or the value of a flag that takes a path
// (pathFlags: -f, --key, --values, -o), however written (./x, x/), or
// the path of a SOURCE or DST written with its transport
// (oci-archive:x.tar). An error about a folder above that path (a file
// in the way of -o a/b/x.lock) names the folder after it. Any other
// error is err: a path the command found itself (a file a kustomization
// lists) is named by the library's own words.
func namedInput(cmd *cobra.Command, err error) error {
	var pe *fs.PathError
	var ie *inputError
	if cmd == nil || !errors.As(err, &pe) || errors.As(err, &ie) {
		return err
	}
	var problem error
	gives := func(value string) bool {
		// oci-archive:x.tar's path is x.tar (SOURCE and DST syntax).
		if ref, err := source.Parse(value); err == nil && ref.Path != "" {
			value = ref.Path
		}
		switch {
		case samePath(value, pe.Path):
			problem = pe.Err
			// "output x: stat x: not a directory" says x once.
			for inner := (*fs.PathError)(nil); errors.As(problem, &inner) && inner.Path == pe.Path; {
				problem = inner.Err
			}
			return true
		case above(pe.Path, value):
			problem = pe
			return true
		}
		return false
	}
	name, given := "", ""
	if names := strings.Fields(cmd.Annotations[argNamesKey]); len(names) > 0 {
		for i, arg := range cmd.Flags().Args() {
			if gives(arg) {
				name, given = names[min(i, len(names)-1)], arg
				break
			}
		}
	}
	cmd.Flags().Visit(func(f *pflag.Flag) {
		// Only a flag whose value is a path: --context X (a kubeconfig
		// context) was named for an error about -f X.
		if !slices.Contains(pathFlags, f.Name) {
			return
		}
		values := []string{f.Value.String()}
		if sv, ok := f.Value.(pflag.SliceValue); ok {
			values = sv.GetSlice()
		}
		if i := slices.IndexFunc(values, gives); name == "" && i >= 0 {
			name, given = dashes(f.Name), values[i]
			if f.Shorthand != "" {
				name = dashes(f.Shorthand)
			}
		}
	})
	if name == "" {
		return err
	}
	var he *hintedError
	hint := ""
	if errors.As(err, &he) {
		hint = he.hint
	}
	return &inputError{name: name, path: given, problem: problem, hint: hint, err: err}
}

// samePath says whether a and b name one path however written: -o
// out/ or ./out is the folder a library names out (or /abs/out).
func samePath(a, b string) bool {
	if a == b {
		return true
	}
	x, xerr := filepath.Abs(a)
	y, yerr := filepath.Abs(b)
	return xerr == nil && yerr == nil && x == y
}

// above says whether dir is a folder above path (both made absolute).
func above(dir, path string) bool {
	d, derr := filepath.Abs(dir)
	p, perr := filepath.Abs(path)
	if derr != nil || perr != nil || d == p {
		return false
	}
	rel, err := filepath.Rel(d, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}
