package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"reflect"
	"runtime/debug"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/addonpkg/addonpkg/pkg/registry"
	"github.com/addonpkg/addonpkg/pkg/safetree"
)

// Exit codes. A command exits 1 on any error unless the error carries
// its own code (exitCoder): diff's are 0 same, 1 different, 2 trouble
// (as diff(1) and git diff --exit-code), through exitCodeError and
// exitOnError; lock --check's are 0 true, 1 stale, 2 trouble. An interrupt (SIGINT, SIGTERM) exits 130 whatever the
// command, after the command has cleaned up.
const (
	exitOK          = 0
	exitError       = 1
	exitDiffError   = 2
	exitInterrupted = 130
)

// exitCoder is an error that chooses the process's exit code.
type exitCoder interface{ ExitCode() int }

// exitCodeError carries a specific exit code and prints nothing (diff
// exits 1 when the add-ons differ).
type exitCodeError struct{ code int }

func (e *exitCodeError) Error() string { return fmt.Sprintf("exit %d", e.code) }

// ExitCode is the code to exit with.
func (e *exitCodeError) ExitCode() int { return e.code }

// codedError is an error printed as err is, exiting with code.
type codedError struct {
	err  error
	code int
}

func (e *codedError) Error() string { return e.err.Error() }
func (e *codedError) Unwrap() error { return e.err }

// ExitCode is the code to exit with.
func (e *codedError) ExitCode() int { return e.code }

// withExitCode gives err the exit code code, unless it carries one.
func withExitCode(err error, code int) error {
	var ec exitCoder
	if err == nil || errors.As(err, &ec) {
		return err
	}
	return &codedError{err: err, code: code}
}

// exitOnError makes every error of cmd exit with code: a bad flag or
// argument, what its RunE returns, a panic. An error that carries its
// own code (exitCodeError) keeps it.
func (a *app) exitOnError(cmd *cobra.Command, code int) {
	if args := cmd.Args; args != nil {
		cmd.Args = func(c *cobra.Command, a []string) error { return withExitCode(args(c, a), code) }
	}
	cmd.SetFlagErrorFunc(func(c *cobra.Command, err error) error { return withExitCode(flagError(c, err, a.args), code) })
	if runE := cmd.RunE; runE != nil {
		cmd.RunE = func(c *cobra.Command, a []string) (err error) {
			defer func() { err = withExitCode(err, code) }()
			defer recoverPanic(&err)
			return runE(c, a)
		}
	}
}

// exitOnErrorWhen is exitOnError for a command whose exit codes belong
// to a mode that the bool flag named flag turns on (lock --check: 1 for
// a stale lock, 2 for any other trouble): when the flag is on, every
// error of cmd, a bad flag or argument, what its RunE returns, a panic,
// goes through code. Whether it is on is read from the whole command
// line (flagOn), not from the flag's variable, which a bad flag before
// it leaves unset.
func (a *app) exitOnErrorWhen(cmd *cobra.Command, flag string, code func(error) error) {
	if args := cmd.Args; args != nil {
		cmd.Args = func(c *cobra.Command, as []string) error {
			err := args(c, as)
			if err != nil && a.flagOn(c, flag) {
				return code(err)
			}
			return err
		}
	}
	cmd.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		if a.flagOn(c, flag) {
			return code(flagError(c, err, a.args))
		}
		return flagError(c, err, a.args)
	})
	if runE := cmd.RunE; runE != nil {
		cmd.RunE = func(c *cobra.Command, as []string) (err error) {
			if a.flagOn(c, flag) {
				defer func() { err = code(err) }()
				defer recoverPanic(&err)
			}
			return runE(c, as)
		}
	}
}

// flagOn says whether the bool flag named name is on in the command
// line a runs (a.args), wherever it stands: the line is read again with
// c's flags, skipping what the real parse refuses (an unknown flag, a
// value that does not parse), so that a mistake before the flag does not
// hide it. A value of the flag that is not a bool counts as on: the mode
// was asked for.
func (a *app) flagOn(c *cobra.Command, name string) bool {
	fs := pflag.NewFlagSet(c.Name(), pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.ParseErrorsAllowlist.UnknownFlags = true
	fs.AddFlagSet(c.Flags())
	fs.AddFlagSet(c.InheritedFlags())
	on := false
	_ = fs.ParseAll(a.args, func(f *pflag.Flag, value string) error {
		if f.Name == name {
			b, err := strconv.ParseBool(value)
			on = b || err != nil
		}
		return nil // set nothing: the real parse did
	})
	return on
}

// usageError is a mistake in the command line: printed with the
// command's usage line under it.
type usageError struct {
	cmd   *cobra.Command
	msg   string
	extra []string // lines after the message (suggestions)
}

func (e *usageError) Error() string { return e.msg }

// panicError is a crash recovered at the command boundary.
type panicError struct {
	value any
	stack []byte
}

func (e *panicError) Error() string { return fmt.Sprintf("internal error: %v", e.value) }

// run executes the CLI and returns the process exit code.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	root, a := newRoot(stdin, stdout, stderr)
	return execute(ctx, root, a, args)
}

// execute runs root with args: every command's RunE is guarded against
// panics, and the error, if any, is printed and turned into an exit code.
func execute(ctx context.Context, root *cobra.Command, a *app, args []string) int {
	guardCommands(root)
	a.args = args
	root.SetArgs(args)
	cmd, err := root.ExecuteContextC(ctx)
	for _, l := range a.waitLogs {
		l.end() // a failed wait's ticker: its error comes next
	}
	if out, ok := a.stdout.(*stdoutWriter); ok && err == nil {
		err = out.err
	}
	if err == nil {
		return exitOK
	}
	return a.fail(ctx, cmd, err)
}

// guardCommands makes every command turn a panic into a panicError: one
// line instead of a Go trace, and the command's deferred clean-up (temp
// directories, locks) has run by the time it is printed.
func guardCommands(c *cobra.Command) {
	if c.RunE != nil {
		runE := c.RunE
		c.RunE = func(cmd *cobra.Command, args []string) (err error) {
			defer recoverPanic(&err)
			return runE(cmd, args)
		}
	}
	for _, sub := range c.Commands() {
		guardCommands(sub)
	}
}

// recoverPanic, deferred, turns a panic into a panicError in *err.
func recoverPanic(err *error) {
	if r := recover(); r != nil {
		*err = &panicError{value: r, stack: debug.Stack()}
	}
}

// fail prints err on stderr and returns the exit code.
func (a *app) fail(ctx context.Context, cmd *cobra.Command, err error) int {
	code := exitError
	if ec := exitCoder(nil); errors.As(err, &ec) {
		code = ec.ExitCode()
	}
	var ce *exitCodeError
	var ue *usageError
	var pe *panicError
	var re *registry.Error
	switch {
	case errors.As(err, &ce):
		return ce.code
	case ctx.Err() != nil:
		a.errorf("interrupted")
		return exitInterrupted
	case errors.As(err, &pe):
		where := "; --verbose prints where it happened"
		if a.verbose {
			where = ""
		}
		a.errorf("%s (this is a bug in addonpkg: please report it with the command line%s)", err.Error(), where)
		if a.verbose {
			fmt.Fprint(a.stderr, sanitizeLines(string(pe.stack)))
		}
		return code
	case errors.As(err, &ue):
		prefix := ""
		if ue.cmd != nil && ue.cmd.HasParent() {
			prefix = strings.TrimPrefix(ue.cmd.CommandPath(), ue.cmd.Root().Name()+" ") + ": "
		}
		a.errorf("%s%s", prefix, ue.msg)
		for _, l := range ue.extra {
			fmt.Fprintln(a.stderr, safetree.Sanitize(l))
		}
		if ue.cmd != nil && ue.cmd.HasParent() {
			fmt.Fprintln(a.stderr, "Usage: "+ue.cmd.UseLine())
		}
		return code
	case errors.As(err, &re):
		// A tag that is not there: say which tags are.
		_ = a.reg.ExplainTags(ctx, re.Ref, re)
		re.Hint = registryHint(cmd, re)
	}
	for _, e := range joined(err) {
		e = namedInput(cmd, e)
		a.errorf("%s", e.Error()+flagHint(cmd, e))
	}
	if a.verbose && re != nil && re.Detail() != "" {
		a.errorf("detail: %s", re.Detail())
	}
	return code
}

// joinType is the type of what errors.Join returns.
var joinType = reflect.TypeOf(errors.Join(errors.New("a"), errors.New("b")))

// joined is the errors that errors.Join made err of, each to be its own
// line (uninstall or status of several add-ons not installed), or err
// alone: an error that wraps a join in words of its own (a prefix) is
// one error.
func joined(err error) []error {
	var ce *codedError
	switch {
	case errors.As(err, &ce) && ce == err:
		return joined(ce.err) // an exit code, no words of its own
	case reflect.TypeOf(err) != joinType:
		return []error{err}
	}
	var out []error
	for _, e := range err.(interface{ Unwrap() []error }).Unwrap() {
		out = append(out, joined(e)...)
	}
	return out
}

// errorf prints one "addonpkg: ..." line on stderr, sanitized: no
// control characters from a registry, a file name or an image reach
// the terminal.
func (a *app) errorf(format string, args ...any) {
	fmt.Fprintln(a.stderr, "addonpkg: "+clean(fmt.Sprintf(format, args...)))
}

// clean makes s one line of printable text: line breaks and tabs
// become spaces, other control characters '?' (safetree.SanitizeN).
// Unlike an entry name in a message, an error is kept whole up to 4096
// runes.
func clean(s string) string {
	s = strings.TrimSpace(strings.NewReplacer("\r\n", " ", "\n", " ", "\r", " ", "\t", " ").Replace(s))
	return safetree.SanitizeN(s, 4096)
}

// sanitizeLines sanitizes each line of s, keeping the line breaks.
func sanitizeLines(s string) string {
	var b strings.Builder
	for _, l := range strings.SplitAfter(s, "\n") {
		nl := strings.HasSuffix(l, "\n")
		b.WriteString(clean(strings.TrimSuffix(l, "\n")))
		if nl {
			b.WriteString("\n")
		}
	}
	return b.String()
}

// oneLine is err's text on one line, for messages that are not errors
// of the command (warnings).
func oneLine(s string) string { return clean(s) }
