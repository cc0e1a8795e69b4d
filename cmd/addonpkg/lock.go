package main

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/addonpkg/addonpkg/pkg/addonset"
)

// setFlags are the flags of the commands that read an add-on set.
type setFlags struct {
	file        string
	concurrency int
	fetch       fetchFlags
}

func (f *setFlags) add(a *app, cmd *cobra.Command) {
	cmd.Flags().StringVarP(&f.file, "file", "f", "addons.yaml", "the add-on set's declaration")
	f.concurrency = addonset.DefaultConcurrency
	cmd.Flags().Var((*countValue)(&f.concurrency), "concurrency", "members fetched at once")
	f.fetch.add(cmd)
	a.addRegistryFlags(cmd)
}

// load reads the declaration and the options every set command shares.
func (f *setFlags) load(a *app, cmd *cobra.Command) (*addonset.Set, addonset.Options, error) {
	s, err := addonset.Load(cmd.Context(), f.file)
	if errors.Is(err, fs.ErrNotExist) && !cmd.Flags().Changed("file") {
		// The command run bare, where no set is declared: say what it
		// reads, as a missing argument does, not "open addons.yaml".
		msg := fmt.Sprintf("no %s here: give the add-on set's declaration with -f FILE", f.file)
		if cmd.Name() == "render" {
			msg += " (one add-on renders with addonpkg unpack SOURCE)"
		}
		return nil, addonset.Options{}, &usageError{cmd: cmd, msg: msg}
	}
	if err != nil {
		return nil, addonset.Options{}, notASetHint(err, cmd.Name(), f.file)
	}
	opts := addonset.Options{Concurrency: f.concurrency}
	opts.Source.Registry = a.reg
	f.fetch.apply(&opts.Source)
	return s, opts, nil
}

// notASetHint says, of a -f that is no add-on set's declaration (a
// manifest or a folder, as kubectl's -f takes: addonset.ErrNotASet, or a
// directory), what -f takes, and how the command named cmd takes the one
// add-on in file, where it can.
func notASetHint(err error, cmd, file string) error {
	if !errors.Is(err, addonset.ErrNotASet) && !errors.Is(err, syscall.EISDIR) {
		return err
	}
	hint := "-f takes an add-on set's declaration, not a manifest or folder"
	if slices.Contains([]string{"kustomization.yaml", "kustomization.yml", "Kustomization"}, filepath.Base(file)) {
		file = filepath.Dir(file) // a kustomization is read as its folder
	}
	switch cmd {
	case "apply":
		hint += "; to apply one add-on: addonpkg apply " + file
	case "render":
		hint += "; to render one add-on: addonpkg unpack " + file
	case "mirror":
		hint += "; to copy one add-on: addonpkg copy " + file + " DST"
	}
	return &hintedError{err: err, hint: hint}
}

// lockHint says what to do about a missing lock (addonset.ErrNoLock):
// lock the declaration file and review the lock. The library names no
// command line; this is where the flags are named. lock is the lock file
// asked for, "" for the one beside the declaration.
func lockHint(err error, file, lock string) error {
	if !errors.Is(err, addonset.ErrNoLock) {
		return err
	}
	cmd := "addonpkg lock -f " + file
	if lock != "" {
		cmd += " -o " + lock
	}
	return fmt.Errorf("%w: run '%s' and review it first", err, cmd)
}

func newLockCmd(a *app) *cobra.Command {
	var (
		sf                    setFlags
		out                   string
		update, check, asJSON bool
	)
	cmd := &cobra.Command{
		Use:   "lock [-f addons.yaml] [--update [NAME...]] [--check]",
		Short: "Pin every member of an add-on set in a lock file",
		Long: `Lock resolves every member of the add-on set declared in -f (see
spec/addon-set-v1.md) and writes the lock file (addons.yaml -> addons.lock, or
-o): for each member its pinned SOURCE (registry digest, git commit, https
checksum, a folder's path), the tag a version range resolved to, the content
identity, and the digest of the declaration entry. The bytes are
deterministic: members sorted by name, no times.

A member already in the lock whose entry has not changed keeps its pin; a new
or changed entry is resolved. --update resolves the named members again (a
newer tag in the range, a moved branch), every member when none is named.
What changed (members added or removed, pins that moved) is printed on
stderr, for the review of the lock's diff.

--check writes nothing: it exits 0 when the lock is true, 1 when it is stale
(missing, a member added, removed or changed since) or a pinned source no
longer yields what the lock recorded (a tag that moved, different content),
and 2 when it cannot tell (a declaration that does not parse, a source that
cannot be reached), as diff does.`,
		Example: `  addonpkg lock -f addons.yaml
  addonpkg lock -f addons.yaml --update metrics-server
  addonpkg lock -f addons.yaml --check
  addonpkg lock -f addons.yaml --json`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := lockFlagsAgree(cmd, args, update, check); err != nil {
				return err
			}
			s, opts, err := sf.load(a, cmd)
			if err != nil {
				return err
			}
			if check {
				l, err := addonset.CheckFile(cmd.Context(), s, out, opts)
				return a.printLock(l, lockHint(err, sf.file, out), asJSON, "%s: up to date (%d add-ons)", out, sf.file)
			}
			l, changes, err := addonset.LockTo(cmd.Context(), s, out, addonset.LockOptions{Options: opts, Update: args, UpdateAll: update && len(args) == 0})
			for _, ch := range changes {
				a.infof("%s", ch)
			}
			return a.printLock(l, err, asJSON, "wrote %s (%d add-ons)", out, sf.file)
		},
	}
	sf.add(a, cmd)
	f := cmd.Flags()
	f.VarP(&checkedString{v: &out, check: notOutputFormat("lock prints the lock as JSON with --json")},
		"output", "o", "the lock file (default: the declaration's name with .lock; kubectl's output formats, -o json, -o yaml, are refused unless such a file exists)")
	f.BoolVar(&update, "update", false, "resolve the named members again (all when none is named)")
	f.BoolVar(&check, "check", false, "write nothing; exit 1 when the lock is stale or a pinned source changed, 2 on trouble")
	addJSONFlag(cmd, &asJSON, "the lock")
	addQuietFlag(cmd, &a.quiet, "notes (members added, removed or moved; what was written or checked)")
	// With --check, a bad flag before or after it and a crash are
	// trouble (2), never a stale lock (1).
	a.exitOnErrorWhen(cmd, "check", checkExit)
	return cmd
}

// checkExit gives lock --check's error its exit code: 1 for a lock that
// is not true (missing, stale, a source that changed), 2 for any other
// trouble, so that a script tells "run addonpkg lock" from "could not
// check".
func checkExit(err error) error {
	if err == nil || errors.Is(err, addonset.ErrNoLock) || errors.Is(err, addonset.ErrLockStale) || errors.Is(err, addonset.ErrLockMismatch) {
		return err
	}
	return withExitCode(err, exitDiffError)
}

// lockFlagsAgree refuses member names without --update, and --check with
// --update: usage errors, with the usage line, as a bad flag is.
func lockFlagsAgree(cmd *cobra.Command, args []string, update, check bool) error {
	if len(args) > 0 && !update {
		return &usageError{cmd: cmd, msg: fmt.Sprintf("member names are for --update (got %q)", args)}
	}
	if check && update {
		return &usageError{cmd: cmd, msg: "--check and --update exclude each other"}
	}
	return nil
}

// printLock prints the lock l that lock wrote or checked (unless err):
// as JSON, else the message done about the lock file (out, else the
// declaration's) and how many add-ons it pins.
func (a *app) printLock(l *addonset.LockFile, err error, asJSON bool, done, out, decl string) error {
	if err != nil {
		return err
	}
	if asJSON {
		return a.printJSON(l)
	}
	if out == "" {
		out = addonset.LockPath(decl)
	}
	a.infof(done, out, len(l.Addons))
	return nil
}
