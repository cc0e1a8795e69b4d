package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"
)

// The positional-argument validators of the commands, declared on each
// (Args: exactArgs("SRC", "DST")) as cobra's ExactArgs, RangeArgs,
// MinimumNArgs and NoArgs are, but naming what is missing ("missing
// argument REF") or unexpected, as a usageError. A command that takes
// any arguments uses cobra.ArbitraryArgs. TestArgsAgreeWithUse checks
// each against its Use line.

// noArgs refuses any argument (cobra.NoArgs).
func noArgs(cmd *cobra.Command, args []string) error {
	return checkArgs(cmd, args, nil, 0, false)
}

// exactArgs takes exactly the arguments named (cobra.ExactArgs).
func exactArgs(names ...string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		return checkArgs(cmd, args, names, 0, false)
	}
}

// rangeArgs takes the required arguments and up to len(optional) more
// (cobra.RangeArgs).
func rangeArgs(required []string, optional ...string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		return checkArgs(cmd, args, required, len(optional), false)
	}
}

// minimumArgs takes the required arguments and any number more
// (cobra.MinimumNArgs).
func minimumArgs(required ...string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		return checkArgs(cmd, args, required, 0, true)
	}
}

// checkArgs names the first missing argument of required, or the first
// one beyond required and optional more unless variadic.
func checkArgs(cmd *cobra.Command, args, required []string, optional int, variadic bool) error {
	switch {
	case len(args) < len(required):
		missing := required[len(args):]
		what := "argument " + missing[0]
		if len(missing) > 1 {
			what = "arguments " + strings.Join(missing, " ")
		}
		return &usageError{cmd: cmd, msg: "missing " + what}
	case !variadic && len(args) > len(required)+optional:
		takes := "no arguments"
		if len(required)+optional > 0 {
			// What the usage line says it takes.
			takes = strings.Join(strings.Fields(cmd.Use)[1:], " ")
		}
		return &usageError{cmd: cmd, msg: fmt.Sprintf("unexpected argument %q (%s takes %s)", args[len(required)+optional], cmd.Name(), takes)}
	}
	return nil
}

// rootArgs answers an unknown command with cobra's suggestions, each on
// its own line.
func rootArgs(cmd *cobra.Command, args []string) error {
	if len(args) == 0 {
		return nil
	}
	e := &usageError{cmd: cmd, msg: fmt.Sprintf("unknown command %q", args[0])}
	if sug := cmd.SuggestionsFor(args[0]); len(sug) > 0 {
		e.extra = append(e.extra, "Did you mean this?")
		for _, s := range sug {
			e.extra = append(e.extra, "    addonpkg "+s)
		}
	}
	e.extra = append(e.extra, "Run 'addonpkg --help' for the commands.")
	return e
}

// flagError turns cobra's flag errors into usage errors.
func flagError(cmd *cobra.Command, err error) error {
	return &usageError{cmd: cmd, msg: err.Error()}
}
