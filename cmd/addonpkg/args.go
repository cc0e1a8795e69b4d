package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"
)

// argSpec is what a command's Use line says about its arguments:
// "build PATH" takes one, "push NAME[:TAG] [DEST]" one or two, "rm
// NAME..." one or more.
type argSpec struct {
	required []string // names of the required arguments
	optional []string // names of the optional ones
	variadic bool     // the last one repeats
}

func parseUse(use string) argSpec {
	var s argSpec
	fields := strings.Fields(use)
	if len(fields) > 0 {
		fields = fields[1:]
	}
	depth := 0 // inside [...]: optional
	for i := 0; i < len(fields); i++ {
		f := fields[i]
		// Leading '[' open optional groups, unmatched trailing ']' close
		// them; brackets inside a name (NAME[:TAG]) are part of it.
		lead := len(f) - len(strings.TrimLeft(f, "["))
		f = f[lead:]
		optional := depth > 0 || lead > 0
		closing := strings.Count(f, "]") - strings.Count(f, "[")
		for ; closing > 0 && strings.HasSuffix(f, "]"); closing-- {
			f = f[:len(f)-1]
			depth--
		}
		depth += lead
		if strings.HasSuffix(f, "...") {
			s.variadic = true
			f = strings.TrimSuffix(f, "...")
		}
		switch {
		case f == "--" || f == "":
		case strings.HasPrefix(f, "-"):
			// A flag, not an argument; the word after it is its value
			// (--to REGISTRY), unless that opens a group or is a flag.
			if i+1 < len(fields) && !strings.HasPrefix(fields[i+1], "[") && !strings.HasPrefix(fields[i+1], "-") && !strings.HasSuffix(fields[i], "]") {
				i++
				next := fields[i]
				for closing := strings.Count(next, "]") - strings.Count(next, "["); closing > 0; closing-- {
					depth--
				}
			}
		case optional:
			s.optional = append(s.optional, f)
		default:
			s.required = append(s.required, f)
		}
	}
	return s
}

// argsFromUse checks the arguments against the command's Use line and
// names the one that is missing or too many, as a usageError.
func argsFromUse(cmd *cobra.Command, args []string) error {
	s := parseUse(cmd.Use)
	switch {
	case len(args) < len(s.required):
		missing := s.required[len(args):]
		what := "argument " + missing[0]
		if len(missing) > 1 {
			what = "arguments " + strings.Join(missing, " ")
		}
		return &usageError{cmd: cmd, msg: "missing " + what}
	case !s.variadic && len(args) > len(s.required)+len(s.optional):
		extra := args[len(s.required)+len(s.optional):]
		takes := "no arguments"
		if n := len(s.required) + len(s.optional); n > 0 {
			takes = strings.Join(strings.Fields(cmd.Use)[1:], " ")
		}
		return &usageError{cmd: cmd, msg: fmt.Sprintf("unexpected argument %q (%s takes %s)", extra[0], cmd.Name(), takes)}
	}
	return nil
}

// checkArgsFromUse puts argsFromUse on every command of the tree that
// is addonpkg's own (not cobra's help and completion commands).
func checkArgsFromUse(c *cobra.Command) {
	for _, sub := range c.Commands() {
		if sub.Name() == "help" || sub.Name() == "completion" || sub.Name() == "__complete" || sub.Name() == "__completeNoDesc" {
			continue
		}
		if sub.Runnable() {
			sub.Args = argsFromUse
		}
		checkArgsFromUse(sub)
	}
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
