package main

import (
	"errors"
	"fmt"
	"io/fs"

	"github.com/spf13/cobra"

	"github.com/addonpkg/addonpkg/pkg/addonset"
)

// renderedMember is one member of render --json.
type renderedMember struct {
	addonset.Member
	Documents int    `json:"documents"`
	File      string `json:"file,omitempty"`
}

// setLock is the lock a set renders from: lockFile, else the
// declaration's own when it exists; nil (rendering the declaration as
// it resolves now, said on stderr) when there is none.
func (a *app) setLock(declFile, lockFile string) (*addonset.LockFile, error) {
	file := lockFile
	if file == "" {
		file = addonset.LockPath(declFile)
	}
	l, err := addonset.LoadLock(file)
	switch {
	case err == nil:
		return l, nil
	case !errors.Is(err, fs.ErrNotExist):
		return nil, err
	case lockFile != "":
		return nil, fmt.Errorf("--lock %s: no such file", lockFile)
	}
	a.infof("no %s: rendering the declaration as it resolves now (run 'addonpkg lock' to pin it)", file)
	return nil, nil
}

// warnMembers prints the renderer's warnings of each member, named.
func (a *app) warnMembers(res *addonset.Result) {
	for _, m := range res.Members {
		for _, w := range m.Result.Warnings {
			a.warn([]string{m.Name + ": " + w})
		}
	}
}

// writeRendered writes a rendered set: to DIR, as JSON rows, or as one
// stream on stdout.
func (a *app) writeRendered(res *addonset.Result, out string, asJSON bool) error {
	var names []string
	if out != "" {
		if err := res.WriteDir(out); err != nil {
			return err
		}
		names = res.FileNames()
	}
	if asJSON {
		rows := make([]renderedMember, len(res.Members))
		for i, m := range res.Members {
			rows[i] = renderedMember{Member: m, Documents: len(m.Result.Documents)}
			if names != nil {
				rows[i].File = names[i]
			}
		}
		return a.printJSON(rows)
	}
	if out != "" {
		a.infof("wrote %d add-ons to %s", len(res.Members), out)
		return nil
	}
	_, err := res.WriteTo(a.stdout)
	return err
}

func newRenderCmd(a *app) *cobra.Command {
	var (
		sf                              setFlags
		crs                             crsFlags
		out, lockFile                   string
		noLock, asJSON, allowRemote     bool
		maxKeys, maxObjects, maxTargets int
	)
	cmd := &cobra.Command{
		Use:   "render [-f addons.yaml] [-o DIR]",
		Short: "Render every member of an add-on set, in dependency order",
		Long: `Render fetches every member of the add-on set declared in -f (in parallel,
--concurrency at once), renders each, and prints one YAML stream for
'kubectl apply -f -': the members in dependsOn order (otherwise in declaration
order), each member's objects in the order 'addonpkg unpack' prints them.

The stream separates members so that a script can split it: the first
document of each member starts with the comment line

  # addonpkg-set-member: NAME

(split at lines that begin with "# addonpkg-set-member: "). With -o DIR, each
member's stream goes to its own file instead, DIR/NN-NAME.yaml, numbered in
order, so that 'kubectl apply -f DIR' applies them in order.

When the lock file exists (addons.yaml -> addons.lock, or --lock) the set is
frozen: render fetches exactly the pinned sources and refuses when anything
differs from the lock (a member added, removed or changed in the declaration;
a locked tag that now points elsewhere; different content). --no-lock ignores
the lock and resolves the declaration as it is now.

--cluster-resource-set NAME prints the set for Cluster API instead: a
ConfigMap per member holding its stream (a Secret of type
addons.cluster.x-k8s.io/resource-set for a member whose stream holds
Secrets), then the ClusterResourceSet NAME (addons.cluster.x-k8s.io/v1beta2)
that lists them in dependsOn order, so that the management cluster installs
the locked add-ons into every workload cluster --cluster-selector selects.
Each document is its own data key, so Cluster API applies them in this
order; a member over 1 MiB is split across NAME-MEMBER, NAME-MEMBER.2, ...
Apply the stream with --server-side: a client-side apply stores each object
in an annotation, which holds at most 256 KiB.`,
		Example: `  addonpkg render -f addons.yaml | kubectl apply -f -
  addonpkg render -f addons.yaml -o ./manifests
  addonpkg render -f addons.yaml --no-lock
  addonpkg render -f addons.yaml | csplit -z -f member- - '/^# addonpkg-set-member: /' '{*}'
  addonpkg render -f addons.yaml --cluster-resource-set addons --cluster-selector addons=standard --namespace fleet | kubectl apply --server-side -f -`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if noLock && lockFile != "" {
				return flagConflict(cmd, "--lock and --no-lock exclude each other")
			}
			if err := crs.check(cmd, out, asJSON); err != nil {
				return err
			}
			s, opts, err := sf.load(a, cmd)
			if err != nil {
				return err
			}
			ro := addonset.RenderOptions{Options: opts, AllowRemote: allowRemote, MaxMappingKeys: maxKeys, MaxKustomizeObjects: maxObjects, MaxPatchTargets: maxTargets}
			if !noLock {
				if ro.Lock, err = a.setLock(sf.file, lockFile); err != nil {
					return err
				}
			}
			res, err := addonset.Render(cmd.Context(), s, ro)
			if err != nil {
				return err
			}
			a.warnMembers(res)
			if crs.opts.Name != "" {
				return crs.write(a, res)
			}
			return a.writeRendered(res, out, asJSON)
		},
	}
	sf.add(a, cmd)
	f := cmd.Flags()
	f.VarP(&checkedString{v: &out, check: notOutputFormat("render prints the YAML stream on stdout without -o, and the members as JSON with --json")},
		"output", "o", "write each member's stream to DIR/NN-NAME.yaml (DIR must not exist or be empty; -o yaml, -o json and kubectl's other output formats are refused unless such a folder exists: write ./yaml for a new one)")
	f.StringVar(&lockFile, "lock", "", "the lock file (default: the declaration's name with .lock)")
	f.BoolVar(&noLock, "no-lock", false, "ignore the lock file: resolve the declaration as it is now")
	addJSONFlag(cmd, &asJSON, "the members (name, pinned source, identity, documents, file), not the stream,")
	addQuietFlag(cmd, &a.quiet, "warnings (kustomize's) nor notes (no lock file, what -o wrote)")
	f.BoolVar(&allowRemote, "allow-remote", false, "let a kustomization load remote resources")
	addKustomizeLimits(cmd, &maxKeys, &maxObjects, &maxTargets)
	crs.add(cmd)
	return cmd
}
