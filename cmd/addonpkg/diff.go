package main

import (
	"context"
	"fmt"
	"slices"

	"github.com/spf13/cobra"

	"github.com/addonpkg/addonpkg/internal/diff"
	"github.com/addonpkg/addonpkg/pkg/apply"
	"github.com/addonpkg/addonpkg/pkg/render"
	"github.com/addonpkg/addonpkg/pkg/source"
	"github.com/addonpkg/addonpkg/pkg/unpack"
)

// diffOutput is what diff --json prints, with and without --cluster, so
// that one reader takes both: the arguments, whether they are equal (exit
// 0), and one apply.Change per object, as apply --dry-run=server --json
// lists them (diff --cluster's is that change set, with a and equal
// added). Two add-ons differ as applying B over A would change them:
// what only B renders is created, what only A renders deleted, what both
// render differently configured.
type diffOutput struct {
	A       string         `json:"a"`
	B       string         `json:"b,omitempty"`
	Addon   string         `json:"addon,omitempty"`
	DryRun  bool           `json:"dryRun,omitempty"`
	Equal   bool           `json:"equal"`
	Changes []apply.Change `json:"changes"`
}

// reportChanges lists a diff of two add-ons as changes: created, then
// configured, then deleted, each in the report's order (diff.Report:
// by group, kind, namespace and name). A change that was not compared
// line by line (over a limit) has the reason instead of a diff.
func reportChanges(r *diff.Report) []apply.Change {
	out := make([]apply.Change, 0, len(r.Added)+len(r.Changed)+len(r.Removed))
	for _, o := range r.Added {
		out = append(out, apply.ObjectChange(o, apply.Created))
	}
	for _, c := range r.Changed {
		ch := apply.ObjectChange(c.Object, apply.Configured)
		ch.Diff, ch.Reason = c.UnifiedDiff, c.Summary
		out = append(out, ch)
	}
	for _, o := range r.Removed {
		out = append(out, apply.ObjectChange(o, apply.Deleted))
	}
	return out
}

func newDiffCmd(a *app) *cobra.Command {
	var (
		asJSON, cluster bool
		name            string
		src             sourceFlags
		cf              clusterFlags
		rf              renderFlags
	)
	cmd := &cobra.Command{
		Use:   "diff A [B]",
		Short: "Compare the Kubernetes objects two add-ons render",
		Long: `Diff renders the add-ons A and B (any SOURCE: a name in the local store, a
registry reference, oci:DIR, an archive, a folder, an https:// download or a
git repository) and compares their objects, matched as the API server knows
them, by group, kind, namespace and name (an object moved from apps/v1beta2 to
apps/v1 is changed, not removed and added). It prints the objects B adds and
removes, and a unified diff of the YAML of each object that changed, each list
sorted by group, kind, namespace and name. Formatting alone (comments, quoting,
key order, flow or block style) is no change. The values of a Secret's data and
stringData are masked ("***", "*** (before)" and "*** (after)" where one
changed), as kubectl diff masks them.

With --cluster, diff compares one add-on with what is installed: it asks the
API server (a server-side dry-run of the staged apply) what 'addonpkg apply A'
would change, and prints a unified diff per object, Secrets masked, as
kubectl diff does. Objects whose CRD or Namespace the add-on brings are
reported as not validated by the server yet, not as created. Objects apply
would leave unchanged are not listed (--json lists them), and an add-on
apply would not change prints "no differences".

--json prints one document for both: "a" and "b" (the arguments as given;
--cluster has no "b" but "addon", the installed add-on's name, and
"dryRun": true, as apply --dry-run=server --json), "equal" (true exactly
when the exit status is 0) and "changes", one per object as apply lists
them: "object" (Kind/namespace/name, control characters replaced), "id"
(namespace_name_group_kind, the names exact), "version", "action",
"reason" and "diff". Two add-ons differ as applying B over A would change
them: "created" (only B renders it), "configured" (both do, differently;
"diff" is its unified diff, or "reason" says why it was not compared line
by line) and "deleted" (only A renders it): those three in that order, and within each
sorted by group, kind, namespace and name, as kubectl diff lists objects,
so the output does not change when an add-on only reorders its files.
--cluster lists the objects in the order apply would apply them, and also
lists "unchanged", "skipped", "recreated" and "unvalidated" objects, with
a diff of each it would create or delete.

Kustomize's warnings, and with --cluster the API server's (an API version
it deprecates, which an add-on's objects still use), are printed on
stderr, once each, as apply and status print them. --quiet prints
nothing, as git diff --quiet: neither the diff nor the warnings, only an
error; the exit status says whether the add-ons differ.

Exit status, with or without --quiet: 0 when A and B render the same
objects (--cluster: apply would change nothing), 1 when they differ, 2 on
any error (a bad argument or flag, a source that cannot be read or
rendered, a cluster that cannot be reached, an internal error), as diff(1),
git diff --exit-code and kubectl diff; 130 when interrupted.`,
		Example: `  addonpkg diff metrics-server:0.7.1 metrics-server:0.7.2
  addonpkg diff registry.example.com/addons/coredns:1.11 ./coredns
  addonpkg diff ./v1 ./v2 --json
  addonpkg diff --quiet coredns:1.11 coredns:1.12 || echo "coredns changed"
  addonpkg diff --cluster registry.example.com/addons/coredns:1.12
  addonpkg diff --cluster ./coredns --name dns`,
		ValidArgsFunction: sourceNames(a, 2),
		Args:              rangeArgs([]string{"A"}, "B"),
		RunE: func(cmd *cobra.Command, args []string) error {
			switch {
			case cluster && len(args) == 2:
				return &usageError{cmd: cmd, msg: "--cluster compares one SOURCE with the cluster: drop B"}
			case !cluster && len(args) == 1:
				return &usageError{cmd: cmd, msg: "missing argument B (or --cluster, to compare A with the cluster)"}
			case !cluster && name != "":
				return &usageError{cmd: cmd, msg: "--name names the installed add-on to compare with: it goes with --cluster"}
			case asJSON && a.quiet:
				return &usageError{cmd: cmd, msg: "--quiet prints nothing: it does not go with --json"}
			}
			sopts, uopts, err := src.options(cmd, a)
			if err != nil {
				return err
			}
			// Against the cluster the add-on renders as apply renders it,
			// its values filled in; two add-ons compare as templates
			// unless values are given.
			ropts, err := rf.options(cluster)
			if err != nil {
				return err
			}
			if cluster {
				return a.diffCluster(cmd.Context(), &cf, args[0], name, reading{sopts, uopts, ropts}, diffPrintOf(asJSON, a.quiet))
			}
			return a.diffAddons(cmd.Context(), args[0], args[1], reading{sopts, uopts, ropts}, diffPrintOf(asJSON, a.quiet))
		},
	}
	f := cmd.Flags()
	addJSONFlag(cmd, &asJSON, "each object's change (created, configured, deleted; --cluster: unchanged too)")
	src.add(a, cmd)
	rf.add(cmd)
	f.BoolVar(&cluster, "cluster", false, "compare the add-on A with what is installed in the cluster")
	addQuietFlag(cmd, &a.quiet, "output, as git diff --quiet: no diff, no warnings; the exit status says whether they differ")
	f.StringVar(&name, "name", "", "with --cluster: the installed add-on's name, as apply --name gave it (default the name A's config says)")
	cf.add(cmd)
	cf.addNamespace(cmd)
	a.exitOnError(cmd, exitDiffError) // 2 on any trouble, as diff(1)
	return cmd
}

// diffPrint is what diff prints: text, JSON, or nothing (--quiet).
type diffPrint int

const (
	diffText diffPrint = iota
	diffJSON
	diffQuiet
)

// diffPrintOf is the diffPrint of --json and --quiet, which exclude each
// other.
func diffPrintOf(asJSON, quiet bool) diffPrint {
	switch {
	case quiet:
		return diffQuiet
	case asJSON:
		return diffJSON
	}
	return diffText
}

// diffAddons prints how the add-ons a and b differ; exit 1 when they do.
func (a *app) diffAddons(ctx context.Context, srcA, srcB string, r reading, p diffPrint) error {
	var results [2]*render.Result
	for i, s := range []string{srcA, srcB} {
		var err error
		if _, results[i], err = r.unpackAndRender(ctx, s); err != nil {
			return err
		}
		a.warn(results[i].Warnings)
	}
	rep := diff.Diff(ctx, results[0], results[1])
	if err := ctx.Err(); err != nil {
		return err
	}
	var err error
	switch p {
	case diffJSON:
		err = a.printJSON(diffOutput{A: srcA, B: srcB, Equal: rep.Equal(), Changes: reportChanges(rep)})
	case diffText:
		err = rep.WriteText(a.stdout)
	}
	if err != nil {
		return err
	}
	if !rep.Equal() {
		return &exitCodeError{1}
	}
	return nil
}

// diffCluster prints what applying s would change in the cluster; exit 1
// when something would.
func (a *app) diffCluster(ctx context.Context, cf *clusterFlags, s, name string, r reading, p diffPrint) error {
	ad, c, err := a.addonFor(ctx, cf, s, name, r)
	if err != nil {
		return err
	}
	cs, err := c.Diff(ctx, ad, apply.Options{})
	if err != nil {
		return err
	}
	switch p {
	case diffJSON:
		err = a.printJSON(diffOutput{A: s, Addon: cs.Addon, DryRun: cs.DryRun, Equal: !cs.Changed(), Changes: append([]apply.Change{}, cs.Changes...)})
	case diffText:
		err = a.printClusterDiff(cs)
	}
	if err != nil {
		return err
	}
	if cs.Changed() {
		return &exitCodeError{1}
	}
	return nil
}

// printClusterDiff prints what apply would do: the table only those
// objects apply would not leave as they are, as kubectl diff prints only
// what differs, and "no differences" when there is none, as diff A B says
// it (--json lists every object, the unchanged too).
func (a *app) printClusterDiff(cs *apply.ChangeSet) error {
	shown := *cs
	shown.Changes = slices.DeleteFunc(slices.Clone(cs.Changes), func(c apply.Change) bool { return c.Action == apply.Unchanged })
	if len(shown.Changes) == 0 {
		_, err := fmt.Fprintln(a.stdout, "no differences")
		return err
	}
	return a.printChangeSets([]*apply.ChangeSet{&shown}, false, true)
}

// reading is how a SOURCE is read and rendered: the sourceFlags'
// options and the renderFlags'.
type reading struct {
	source source.Options
	unpack unpack.Options
	render render.Options
}

// unpackAndRender unpacks any SOURCE and renders it.
func (r reading) unpackAndRender(ctx context.Context, s string) (*unpack.Addon, *render.Result, error) {
	ref, err := source.Parse(s)
	if err != nil {
		return nil, nil, err
	}
	ad, err := source.Unpack(ctx, ref, r.source, r.unpack)
	if err != nil {
		return nil, nil, err
	}
	res, err := render.Addon(ctx, ad, r.render)
	if err != nil {
		return nil, nil, fmt.Errorf("render %s: %w", ref, err)
	}
	return ad, res, nil
}
