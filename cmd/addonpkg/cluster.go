package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/addonpkg/addonpkg/pkg/addonset"
	"github.com/addonpkg/addonpkg/pkg/apply"
	"github.com/addonpkg/addonpkg/pkg/source"
)

// clusterFlags are the flags of every command that talks to a cluster,
// named as kubectl names them.
type clusterFlags struct {
	connect     apply.ConnectOptions
	waitTimeout time.Duration
}

func (c *clusterFlags) add(cmd *cobra.Command) {
	f := cmd.Flags()
	f.StringVar(&c.connect.Kubeconfig, "kubeconfig", "", "kubeconfig file (default $KUBECONFIG, then ~/.kube/config, then a Pod's in-cluster credentials)")
	f.StringVar(&c.connect.Context, "context", "", "kubeconfig context (default its current context)")
	f.StringVar(&c.connect.Impersonate, "as", "", "act as this user, as kubectl --as (for example system:serviceaccount:NS:NAME)")
	f.StringVar(&c.connect.InventoryNamespace, "inventory-namespace", "", "namespace of the add-ons' inventories (default "+apply.DefaultInventoryNamespace+")")
	_ = cmd.RegisterFlagCompletionFunc("context", c.contexts)
	_ = cmd.RegisterFlagCompletionFunc("inventory-namespace", c.namespaces)
}

// contexts completes --context with the contexts of the kubeconfig the
// flags name, as kubectl, helm and flux complete it.
func (c *clusterFlags) contexts(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
	names, err := apply.Contexts(c.connect.Kubeconfig)
	if err != nil {
		return nil, cobra.ShellCompDirectiveError
	}
	return names, cobra.ShellCompDirectiveNoFileComp
}

// addWait adds --wait-timeout to a command that waits for objects.
func (c *clusterFlags) addWait(cmd *cobra.Command) {
	// --timeout is the registry's (addRegistryFlags): the cluster's waits
	// have their own, as long as Flux's default.
	// Positive: 0 and a negative one were the default without a word.
	c.waitTimeout = apply.DefaultTimeout
	cmd.Flags().Var((*timeoutValue)(&c.waitTimeout), "wait-timeout", "how long to wait for objects to be ready, or gone")
}

// addNamespace adds kubectl's -n to a command that applies objects,
// completed with the cluster's namespaces, as kubectl completes it.
func (c *clusterFlags) addNamespace(cmd *cobra.Command) {
	cmd.Flags().StringVarP(&c.connect.Namespace, "namespace", "n", "", "namespace of the add-on's namespaced objects that name none (default: the installed add-on's, else the context's namespace)")
	_ = cmd.RegisterFlagCompletionFunc("namespace", c.namespaces)
}

// namespaces completes -n and --inventory-namespace with the namespaces
// of the cluster the flags name, giving up after a few seconds: a
// completion must not hang the shell.
func (c *clusterFlags) namespaces(cmd *cobra.Command, _ []string, _ string) ([]string, cobra.ShellCompDirective) {
	ctx, cancel := context.WithTimeout(cmp.Or(cmd.Context(), context.Background()), 5*time.Second)
	defer cancel()
	cl, err := c.client(ctx, klogLines)
	if err != nil {
		return nil, cobra.ShellCompDirectiveError
	}
	names, err := cl.Namespaces(ctx)
	if err != nil {
		return nil, cobra.ShellCompDirectiveError
	}
	return names, cobra.ShellCompDirectiveNoFileComp
}

// inventoryNamespace is the namespace the inventories are read from.
func (c *clusterFlags) inventoryNamespace() string {
	return cmp.Or(c.connect.InventoryNamespace, apply.DefaultInventoryNamespace)
}

// client connects to the cluster the flags name; the client's records
// (the API server's warnings among them) go to log: klogLines sends them
// where client-go's klog lines go (to stderr with -v, else nowhere). A
// kubeconfig's credential plugin writes to the process's stderr
// (withProcessStderr).
func (c *clusterFlags) client(ctx context.Context, log slog.Handler) (cl *apply.Client, err error) {
	opts := c.connect
	opts.Logger = slog.New(log)
	// A credential plugin speaks on the stderr the client is made with.
	withProcessStderr(func() { cl, err = apply.Connect(ctx, opts) })
	return cl, err
}

// connect connects to the cluster the flags name for a command that
// changes it: the API server's warnings are printed, and on a terminal
// it says which cluster (a change made in the wrong context is the costly
// mistake).
func (a *app) connect(ctx context.Context, cf *clusterFlags) (*apply.Client, error) {
	c, err := cf.client(ctx, a.serverWarnings())
	if err != nil || a.quiet || !isTerminal(a.stderr) {
		return c, err
	}
	if c.Context() != "" {
		a.infof("addonpkg: context %q, server %s", oneLine(c.Context()), oneLine(c.Host()))
	} else {
		a.infof("addonpkg: server %s", oneLine(c.Host()))
	}
	return c, nil
}

// installedNames completes the names of the add-ons installed in the
// cluster the flags name, as kubectl completes object names: at most
// most arguments (0: any number), each named once.
func (c *clusterFlags) installedNames(most int) cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, _ string) ([]string, cobra.ShellCompDirective) {
		if most > 0 && len(args) >= most {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		names, err := c.installed(cmd.Context())
		if err != nil {
			return nil, cobra.ShellCompDirectiveError
		}
		names = slices.DeleteFunc(names, func(n string) bool { return slices.Contains(args, n) })
		return names, cobra.ShellCompDirectiveNoFileComp
	}
}

// installed lists the names of the installed add-ons, giving up after a
// few seconds: a completion must not hang the shell.
func (c *clusterFlags) installed(ctx context.Context) ([]string, error) {
	if ctx == nil {
		ctx = context.Background()
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	cl, err := c.client(ctx, klogLines)
	if err != nil {
		return nil, err
	}
	// An inventory that does not decode still names its add-on.
	records, err := cl.List(ctx)
	if records == nil && err != nil {
		return nil, err
	}
	names := make([]string, len(records))
	for i, r := range records {
		names[i] = r.Name
	}
	return names, nil
}

func newApplyCmd(a *app) *cobra.Command {
	var (
		cf                                   clusterFlags
		name, dryRun, setFile                string
		src                                  sourceFlags
		asJSON, wait, noPrune                bool
		force, recreate, pruneNonEmpty, diff bool
		rf                                   renderFlags
	)
	// Which flags go together, in their words.
	check := func(cmd *cobra.Command, args []string) error {
		switch {
		case setFile != "" && len(args) > 0:
			return &usageError{cmd: cmd, msg: "-f applies a set: drop SOURCE"}
		case setFile == "" && len(args) != 1:
			return &usageError{cmd: cmd, msg: "want one SOURCE (or -f addons.yaml)"}
		case setFile != "" && (name != "" || rf.given() || src.platform != ""):
			return &usageError{cmd: cmd, msg: "-f takes each member's name and values from the set, and its digest from the lock: drop --name, --set, --values and --platform"}
		case setFile != "" && !wait && dryRun != "server":
			return &usageError{cmd: cmd, msg: "-f waits for each member before the next, which may need it: drop --wait=false"}
		case diff && dryRun != "server":
			return &usageError{cmd: cmd, msg: "--diff shows what --dry-run=server finds: add --dry-run=server"}
		}
		return nil
	}
	cmd := &cobra.Command{
		Use: "apply [SOURCE] [-f addons.yaml]",
		// helm's and others' words for it
		SuggestFor: []string{"install", "upgrade", "deploy"},
		Short:      "Install or upgrade an add-on, or an add-on set, in a cluster (staged server-side apply, inventory, prune, wait)",
		Long: `Apply reads an add-on from any SOURCE, renders it, and installs it into the
cluster with server-side apply under the field manager "addonpkg": CRDs,
Namespaces and ClusterRoles first (CRDs waited for until established), then
*Class kinds, Roles, everything else, and webhook configurations last. Only
objects that differ are changed, so a second apply changes nothing.
Namespaced objects that name no namespace go to -n, as with kubectl apply -n.
Without -n an upgrade keeps the namespace the add-on was installed in, and a
first install takes the context's; -n naming another namespace moves the
add-on there (its objects in the old one are pruned).

Each add-on has an inventory (the Secret addonpkg-NAME in kube-system, a
kubectl ApplySet parent), written before the first change: an upgrade deletes
the objects the add-on no longer holds, and an apply that was killed is
finished by the next. Before any change the credentials are checked with
SelfSubjectAccessReviews; missing permissions are listed and nothing is
changed. An object another add-on owns, a member or the parent of another
tool's ApplySet (kubectl apply --applyset), or an object another controller
applies from its own source (Flux, Timoni, kapp, Argo CD) is refused unless
--force.

The add-on is named --name, else as its config says (for a folder or a
file of manifests, its base name without extension: ./v2/coredns and
./coredns.yaml are both "coredns"). Without --name, an
add-on from another origin than the installed add-on of that name (another
registry repository or mirror, folder, download URL, git repository or
subdirectory; a new tag, digest or commit of the same is the same origin) is
refused before any change: --name NAME replaces the installed add-on from the
new source, another --name installs it beside.

An object annotated ` + apply.AnnotationApply + "=" + apply.ApplyIfNotPresent + ` (or Flux's
kustomize.toolkit.fluxcd.io/ssa=IfNotPresent) is created when it is absent
and left as it is once there, whatever its content (a Secret or ConfigMap an
admin or a controller fills in): skipped, with the reason, never dry-run or
recreated. The inventory records it while it is the add-on's, so uninstall
deletes it unless it is annotated ` + apply.AnnotationPrune + "=" + apply.PruneDisabled + `. One already
there that is not the add-on's (nobody's, or another add-on's with --force)
is neither adopted nor recorded. One annotated ` + apply.AnnotationApply + "=" + apply.ApplyIgnore + `
(or Flux's kustomize.toolkit.fluxcd.io/ssa=Ignore or reconcile=disabled), in the add-on or in the
cluster, is left alone: neither created nor changed, waited for or recorded,
and prune and uninstall keep it. Another value of ` + apply.AnnotationApply + ` is refused.

An add-on that declares values for its installer (.addonvalues) gets them
from --set and --values, and is refused before any change when a required
one is missing; the inventory records them.

With -f, apply installs every member of an add-on set from its lock file
(addons.yaml -> addons.lock; a set without a lock, or with a stale one, is
refused), in dependsOn order, each waited for until ready before the next,
each with its own inventory and the values: its entry gives.

--dry-run=server asks the server what would change and changes nothing;
--diff prints what would change as unified diffs (Secrets masked).

On a terminal each stage is a line on stderr. Elsewhere (a pipe, a CI log)
only a wait that lasts is: "still waiting for N objects to be ready" each
tenth of --wait-timeout (at least a second and at most 30 seconds apart),
then "N objects ready after 47s"; a quick apply prints nothing there.
The same goes for the wait, before any change, for objects of the add-on
still being deleted (what an earlier apply without --wait pruned), which
is applied again once they are gone. --quiet prints neither.`,
		Example: `  addonpkg apply registry.example.com/addons/metrics-server:0.7
  addonpkg apply ./examples/gateway-api-crds --context kind-dev
  addonpkg apply ./examples/metrics-server -n monitoring
  addonpkg apply ./examples/coredns --set DNS_SERVER_IP=10.96.0.10
  addonpkg apply -f examples/addon-set/addons.yaml
  addonpkg apply metrics-server:0.7 --dry-run=server --diff
  addonpkg apply metrics-server:0.7 --json`,
		ValidArgsFunction: sourceNames(a, 1),
		Args:              rangeArgs(nil, "SOURCE"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := check(cmd, args); err != nil {
				return err
			}
			sopts, uopts, err := src.options(cmd, a)
			if err != nil {
				return err
			}
			opts := apply.Options{DryRun: dryRun == "server", Wait: wait, Timeout: cf.waitTimeout, NoPrune: noPrune,
				PruneNonEmpty: pruneNonEmpty, Force: force, Recreate: recreate, Progress: a.progress(cf.waitTimeout)}
			if setFile != "" {
				return a.applySet(cmd.Context(), &cf, setFile, sopts, &rf, opts, asJSON, diff)
			}
			ropts, err := rf.options(true)
			if err != nil {
				return err
			}
			return a.applyOne(cmd.Context(), &cf, args[0], name, reading{sopts, uopts, ropts}, opts, asJSON, diff)
		},
	}
	cf.add(cmd)
	cf.addNamespace(cmd)
	cf.addWait(cmd)
	f := cmd.Flags()
	f.StringVarP(&setFile, "file", "f", "", "apply every member of this add-on set, from its lock, in dependsOn order")
	f.StringVar(&name, "name", "", "the add-on's name in the cluster (default the name its config says, refused when the add-on of that name came from another origin)")
	addEnumFlag(cmd, &dryRun, "dry-run", "none", "none, or server: ask the API server what would change and change nothing (--dry-run alone: server, as uninstall --dry-run)", "none", "server")
	f.Lookup("dry-run").Value.(*checkedString).check = checkApplyDryRun
	f.Lookup("dry-run").NoOptDefVal = "server"
	f.BoolVar(&diff, "diff", false, "print each change as a unified diff (with --dry-run=server)")
	f.BoolVar(&wait, "wait", true, "wait until every object is ready (CRDs established, Deployments available, Jobs complete, APIServices available) and what prune deleted is gone; with -f always")
	f.BoolVar(&noPrune, "no-prune", false, "keep the objects an earlier apply made that the add-on no longer holds")
	f.BoolVar(&pruneNonEmpty, "prune-non-empty", false, "let prune delete CRDs and Namespaces that still hold objects")
	f.BoolVar(&force, "force", false, "adopt objects another add-on, another tool's ApplySet or another controller (Flux, Timoni, kapp, Argo CD) owns")
	f.BoolVar(&recreate, "recreate", false, "delete and create again an object whose change the server refuses as immutable (never a CRD, Namespace or ClusterRole)")
	rf.add(cmd)
	addQuietFlag(cmd, &a.quiet, "progress output or warnings (kustomize's, the API server's)")
	addJSONFlag(cmd, &asJSON, "the change set (with -f, a list of them)")
	src.add(a, cmd)
	return cmd
}

// applyOne installs the add-on s, named name (or as its config says).
func (a *app) applyOne(ctx context.Context, cf *clusterFlags, s, name string, r reading, opts apply.Options, asJSON, diffs bool) error {
	ad, c, err := a.addonFor(ctx, cf, s, name, r)
	if err != nil {
		return err
	}
	cs, err := c.Apply(ctx, ad, opts)
	if err != nil && (cs == nil || len(cs.Changes) == 0) {
		return err
	}
	// What a failed apply (a wait that timed out) changed before it
	// failed is printed too: those changes stay.
	if perr := a.printChanges(cs, asJSON, diffs); perr != nil {
		return perr
	}
	return err
}

// applySet installs the members of the set declared in file, from its
// lock, in order.
func (a *app) applySet(ctx context.Context, cf *clusterFlags, file string, sopts source.Options, rf *renderFlags, opts apply.Options, asJSON, diffs bool) error {
	// An install installs what was reviewed: no lock, no install.
	res, err := addonset.RenderLocked(ctx, file, addonset.RenderOptions{Options: addonset.Options{Source: sopts}, AllowRemote: rf.allowRemote, MaxMappingKeys: rf.maxKeys, MaxKustomizeObjects: rf.maxObjects, MaxPatchTargets: rf.maxTargets})
	if err != nil {
		return notASetHint(lockHint(err, file, ""), "apply", file)
	}
	a.warnMembers(res)
	addons, err := apply.FromSet(res.Members)
	if err != nil {
		return err
	}
	c, err := a.connect(ctx, cf)
	if err != nil {
		return err
	}
	// What was installed before a failure is printed too, in the same
	// format: those members stay installed.
	sets, err := c.ApplyAll(ctx, addons, opts)
	if asJSON {
		if perr := a.printJSON(sets); perr != nil {
			return perr
		}
		return err
	}
	if perr := a.printChangeSets(sets, true, diffs); perr != nil {
		return perr
	}
	return err
}

func newUninstallCmd(a *app) *cobra.Command {
	var (
		cf                            clusterFlags
		setFile                       string
		asJSON, dryRun, pruneNonEmpty bool
		ignoreNotFound, wait          bool
	)
	cmd := &cobra.Command{
		Use:     "uninstall [NAME...] [-f addons.yaml]",
		Aliases: []string{"delete"},
		Short:   "Remove installed add-ons: every object of each inventory, then the inventory",
		Long: `Uninstall deletes every object the add-on's inventory lists that carries its
owner label, in reverse apply order, waits until they are gone, and then
deletes the inventory. With --wait=false, as kubectl delete --wait=false, it
returns once the deletions are asked for: an object a finalizer holds is
left terminating, the API server's to finish, and the inventory is deleted.

Objects annotated ` + apply.AnnotationPrune + "=" + apply.PruneDisabled + ` (or Flux's
kustomize.toolkit.fluxcd.io/prune=disabled), or in the cluster
` + apply.AnnotationApply + "=" + apply.ApplyIgnore + ` (or Flux's kustomize.toolkit.fluxcd.io/ssa=Ignore
or reconcile=disabled), are left, and so are CRDs and Namespaces that still hold other objects
(unless --prune-non-empty): the inventory keeps those, so a later uninstall
can finish.

Several NAMEs are uninstalled in the order given; with -f, the members of
an add-on set in reverse dependsOn order, each before those it depends on.
A NAME that is not installed is reported and passed over (exit 1, or 0
with --ignore-not-found, as kubectl delete and helm uninstall take it); any
other failure stops there, and the add-ons after it stay installed.`,
		Example: `  addonpkg uninstall metrics-server
  addonpkg uninstall metrics-server --dry-run
  addonpkg uninstall coredns metrics-server
  addonpkg uninstall metrics-server --ignore-not-found
  addonpkg uninstall metrics-server --wait=false
  addonpkg uninstall -f examples/addon-set/addons.yaml`,
		Args:              cobra.ArbitraryArgs,
		ValidArgsFunction: cf.installedNames(0),
		RunE: func(cmd *cobra.Command, args []string) error {
			switch {
			case setFile != "" && len(args) > 0:
				return &usageError{cmd: cmd, msg: "-f uninstalls a set's members: drop NAME"}
			case setFile == "" && len(args) == 0:
				return &usageError{cmd: cmd, msg: "want a NAME (or -f addons.yaml)"}
			}
			opts := apply.UninstallOptions{DryRun: dryRun, Timeout: cf.waitTimeout, NoWait: !wait, PruneNonEmpty: pruneNonEmpty, Progress: a.progress(cf.waitTimeout)}
			return a.uninstall(cmd.Context(), &cf, args, setFile, opts, asJSON, ignoreNotFound)
		},
	}
	cf.add(cmd)
	cf.addWait(cmd)
	f := cmd.Flags()
	f.StringVarP(&setFile, "file", "f", "", "uninstall every member of this add-on set, in reverse dependsOn order")
	f.Var((*deleteDryRunValue)(&dryRun), "dry-run", "say what would be deleted and delete nothing (also as kubectl delete: none, server or client)")
	f.Lookup("dry-run").NoOptDefVal = "true"
	f.BoolVar(&pruneNonEmpty, "prune-non-empty", false, "delete CRDs and Namespaces that still hold other objects")
	f.BoolVar(&wait, "wait", true, "wait until the deleted objects are gone; --wait=false returns once their deletion is asked for (as kubectl delete --wait=false)")
	f.BoolVar(&ignoreNotFound, "ignore-not-found", false, "pass over an add-on that is not installed without an error (exit 0), as kubectl delete --ignore-not-found")
	addQuietFlag(cmd, &a.quiet, "progress output or warnings (kustomize's, the API server's)")
	addJSONFlag(cmd, &asJSON, "the change set (with several NAMEs or -f, a list of them)")
	return cmd
}

// uninstall removes the add-ons names, or the members of the set
// declared in setFile, and prints what it did, also before a failure.
func (a *app) uninstall(ctx context.Context, cf *clusterFlags, names []string, setFile string, opts apply.UninstallOptions, asJSON, ignoreNotFound bool) error {
	if setFile != "" {
		set, err := addonset.Load(ctx, setFile)
		if err != nil {
			return notASetHint(err, "uninstall", setFile)
		}
		if names, err = set.UninstallOrder(); err != nil {
			return fmt.Errorf("%s: %w", setFile, err)
		}
	}
	c, err := a.connect(ctx, cf)
	if err != nil {
		return err
	}
	sets, err := c.UninstallAll(ctx, names, opts)
	if ignoreNotFound {
		err = withoutNotInstalled(err)
	}
	switch {
	case asJSON && setFile == "" && len(names) == 1:
		// One NAME prints one change set, as before sets could be named:
		// an empty one for a NAME not installed and passed over.
		if len(sets) == 1 {
			return errors.Join(a.printJSON(sets[0]), err)
		}
		if err == nil {
			return a.printJSON(&apply.ChangeSet{Addon: names[0], DryRun: opts.DryRun})
		}
		return err
	case asJSON:
		return errors.Join(a.printJSON(sets), err)
	}
	if perr := a.printChangeSets(sets, setFile != "" || len(names) > 1, false); perr != nil {
		return perr
	}
	for _, cs := range sets {
		if len(cs.Changes) == 0 {
			a.infof("addonpkg: %s: no objects left to delete", cs.Addon)
		}
	}
	return err
}

// withoutNotInstalled is err, UninstallAll's, without the add-ons it
// passed over for they are not installed: nil when those were all.
func withoutNotInstalled(err error) error {
	var joined interface{ Unwrap() []error }
	if !errors.As(err, &joined) {
		if errors.Is(err, apply.ErrNotInstalled) {
			return nil
		}
		return err
	}
	return errors.Join(slices.DeleteFunc(slices.Clone(joined.Unwrap()), func(e error) bool { return errors.Is(e, apply.ErrNotInstalled) })...)
}

func newStatusCmd(a *app) *cobra.Command {
	var (
		cf     clusterFlags
		asJSON bool
	)
	cmd := &cobra.Command{
		Use:   "status [NAME...]",
		Short: "List the add-ons installed in a cluster, with version, digest, objects and readiness",
		Long: `Status reads the inventories of the installed add-ons (all of them, or those
named) and reports for each its version, pinned source and digest, how many
objects it owns and how many of them are ready. An add-on whose last apply
did not finish shows the phase "pending"; one whose inventory does not decode
(edited by hand or by another tool) shows "invalid". The others are still
reported when one is invalid, a NAME is not installed, or some of an
add-on's objects cannot be read (a user who may read the inventories but
not the objects), and the command then exits 1 naming it, as kubectl get
does. With NAMEs, each object that
is not ready follows the table, with its status. With --json, each add-on
lists those objects twice: "unready", a line each for people, and
"unreadyObjects", for programs: group, version, kind, namespace, name and
"status", one of InProgress, Failed, Terminating, NotFound, OwnedByOther
(with "owner"), NotOwned or Unreadable, with a "message".

The API server's warnings (an API version it deprecates, which an
add-on's objects still use) are printed on stderr, once each, as kubectl
get prints them; --quiet hides them.`,
		Example: `  addonpkg status
  addonpkg status metrics-server --json`,
		Args:              cobra.ArbitraryArgs,
		ValidArgsFunction: cf.installedNames(0),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := cf.client(cmd.Context(), a.serverWarnings())
			if err != nil {
				return err
			}
			list, err := c.Status(cmd.Context(), args...)
			return a.printStatus(list, err, asJSON, len(args) > 0, cf.inventoryNamespace())
		},
	}
	cf.add(cmd)
	addJSONFlag(cmd, &asJSON, "the installed add-ons")
	addQuietFlag(cmd, &a.quiet, "warnings (the API server's)")
	return cmd
}

// addonFor reads and renders s, then connects to the cluster the flags
// name: a source that does not render costs no connection.
func (a *app) addonFor(ctx context.Context, cf *clusterFlags, s, name string, r reading) (apply.Addon, *apply.Client, error) {
	ad, err := clusterAddon(ctx, a, s, name, r)
	if err != nil {
		return apply.Addon{}, nil, err
	}
	c, err := a.connect(ctx, cf)
	return ad, c, err
}

// clusterAddon reads and renders SOURCE into what Apply installs, with
// the source its inventory records (unpack.Addon.Source: a local path
// absolute, for the inventory is read later and from other directories).
func clusterAddon(ctx context.Context, a *app, s, name string, r reading) (apply.Addon, error) {
	ad, res, err := r.unpackAndRender(ctx, s)
	if err != nil {
		return apply.Addon{}, err
	}
	a.warn(res.Warnings)
	if name == "" && (ad.Config == nil || ad.Config.Name == "") {
		return apply.Addon{}, fmt.Errorf("%s: the add-on's config names no add-on: give --name", s)
	}
	out, err := apply.FromRendered(name, ad, res)
	if err != nil {
		return apply.Addon{}, fmt.Errorf("%s: %w", s, err)
	}
	return out, nil
}

// progress reports each stage of an apply on a terminal, one line each;
// elsewhere (a CI log) only a wait that lasts, as waitLog says it, which
// the command's end stops (execute).
func (a *app) progress(waitTimeout time.Duration) func(apply.Stage) {
	if a.quiet {
		return nil
	}
	if !isTerminal(a.stderr) {
		l := newWaitLog(a.stderr, waitTimeout)
		a.waitLogs = append(a.waitLogs, l)
		return l.report
	}
	return func(st apply.Stage) {
		switch {
		case st.Name == "waiting":
			a.infof("addonpkg: %s: waiting up to %s for %s to be ready", st.Addon, waitTimeout, objects(len(st.Changes)))
		case st.Name == "ready":
			a.infof("addonpkg: %s: %s ready", st.Addon, objects(len(st.Changes)))
		case st.Name == "deleting":
			a.infof("addonpkg: %s: deleted %s, waiting up to %s for them to be gone", st.Addon, objects(len(st.Changes)), waitTimeout)
		case st.Name == "terminating":
			a.infof("addonpkg: %s: %s of the add-on still being deleted, waiting up to %s for them to be gone before applying them again", st.Addon, objects(len(st.Changes)), waitTimeout)
		case st.Name == "gone":
			a.infof("addonpkg: %s: %s gone", st.Addon, objects(len(st.Changes)))
		case len(st.Changes) > 0:
			a.infof("addonpkg: %s: %s: %s", st.Addon, st.Name, countActions(st.Changes))
		}
	}
}

// objects is "1 object" or "N objects".
func objects(n int) string {
	if n == 1 {
		return "1 object"
	}
	return fmt.Sprintf("%d objects", n)
}

// countActions says how many changes have each action, in the order the
// actions first appear: "2 created, 1 unchanged".
func countActions(changes []apply.Change) string {
	var order []apply.Action
	n := map[apply.Action]int{}
	for _, c := range changes {
		if n[c.Action] == 0 {
			order = append(order, c.Action)
		}
		n[c.Action]++
	}
	parts := make([]string, len(order))
	for i, act := range order {
		parts[i] = fmt.Sprintf("%d %s", n[act], act)
	}
	return strings.Join(parts, ", ")
}

// printChangeSets prints change sets as one table, then the diffs: for a
// command about several add-ons (apply -f, uninstall -f or of several
// NAMEs) with a first column naming the add-on, however many change sets
// came back (a set of one member, a NAME not installed), so that the
// table's columns do not depend on the cluster; for one add-on without
// it. A dry run's rows say so. Without a change it prints nothing.
func (a *app) printChangeSets(sets []*apply.ChangeSet, several, diffs bool) error {
	// No rows, no table: a header alone on stdout said nothing, and a
	// script counting the lines counted it.
	if !slices.ContainsFunc(sets, func(cs *apply.ChangeSet) bool { return len(cs.Changes) > 0 }) {
		return nil
	}
	var t strings.Builder
	w := tabwriter.NewWriter(&t, 0, 4, 2, ' ', 0)
	if several {
		fmt.Fprintln(w, "ADDON\tACTION\tOBJECT\tREASON")
	} else {
		fmt.Fprintln(w, "ACTION\tOBJECT\tREASON")
	}
	for _, cs := range sets {
		for _, c := range cs.Changes {
			// A dry run's rows say so, as kubectl's "(server dry run)":
			// the table is not taken for changes made.
			action := string(c.Action)
			if cs.DryRun {
				action += " (dry run)"
			}
			if several {
				fmt.Fprintf(w, "%s\t", cs.Addon)
			}
			fmt.Fprintf(w, "%s\t%s\t%s\n", action, c.Object, c.Reason)
		}
	}
	_ = w.Flush()
	// A row with no reason ends in the padding of the object's cell:
	// trimmed, as a line piped to diff or grep '$' must not end in spaces.
	var b strings.Builder
	for line := range strings.Lines(t.String()) {
		b.WriteString(strings.TrimRight(line, " \n") + "\n")
	}
	for _, cs := range sets {
		for _, c := range cs.Changes {
			if diffs && c.Diff != "" {
				b.WriteString(c.Diff)
			}
		}
	}
	_, err := fmt.Fprint(a.stdout, b.String())
	return err
}

// printChanges prints a change set as a table (and diffs), or JSON.
func (a *app) printChanges(cs *apply.ChangeSet, asJSON, diffs bool) error {
	if asJSON {
		return a.printJSON(cs)
	}
	return a.printChangeSets([]*apply.ChangeSet{cs}, false, diffs)
}

// printStatus prints what status found, then returns err, what it did
// not: an inventory that does not decode is a row and an error, and a
// NAME not installed is an error beside the others' rows (with --json, a
// list of them, [] when no NAME is installed, as with none installed:
// the shape does not depend on the cluster). Any other error (forbidden,
// unreachable) is printed alone.
func (a *app) printStatus(list []apply.Installed, err error, asJSON, named bool, ns string) error {
	if list == nil && err != nil && (!asJSON || !errors.Is(err, apply.ErrNotInstalled)) {
		return err
	}
	if asJSON {
		if list == nil {
			list = []apply.Installed{}
		}
		return errors.Join(a.printJSON(list), err)
	}
	return errors.Join(writeStatus(a, list, named, ns), err)
}

// writeStatus prints the add-ons as a table; with detail (add-ons named
// on the command line), each object that is not ready follows, as
// kubectl describe tells why. What an inventory says is another tool's
// text: no terminal escapes reach the screen. None installed is said on
// stderr, naming where inventories were looked for, and stdout stays
// empty, as kubectl get says "No resources found".
func writeStatus(a *app, list []apply.Installed, detail bool, ns string) error {
	if len(list) == 0 {
		a.infof("no add-on installed (no inventory in namespace %s)", ns)
		return nil
	}
	out := terminalSafe(a.stdout)
	w := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "NAME\tVERSION\tPHASE\tREADY\tDIGEST\tSOURCE")
	for _, i := range list {
		ready := fmt.Sprintf("%d/%d", i.Ready, i.Objects)
		if i.Phase == apply.PhaseInvalid {
			ready = "-"
		}
		// An empty cell is "-", so that every row splits into six fields;
		// each is one cell, sanitized: a newline or a tab in what an
		// inventory records (anyone who may write its Secret chooses it)
		// would otherwise print a row of an add-on that is not installed.
		cells := sanitizeAll([]string{i.Name, cmp.Or(i.Version, "-"), i.Phase, ready, cmp.Or(i.Digest, "-"), cmp.Or(i.Source, "-")})
		fmt.Fprintln(w, strings.Join(cells, "\t"))
	}
	if err := w.Flush(); err != nil {
		return err
	}
	if !detail {
		return nil
	}
	var b strings.Builder
	for _, i := range list {
		for _, u := range i.Unready {
			fmt.Fprintf(&b, "%s: not ready: %s\n", i.Name, u)
		}
	}
	_, err := io.WriteString(out, b.String())
	return err
}

// serverWarnings is the log of a client whose API server's warnings the
// user reads (a command's own client; a completion's says nothing).
func (a *app) serverWarnings() slog.Handler {
	return &serverWarnings{a: a, seen: map[string]bool{}}
}

// serverWarnings prints each warning the API server answers with once
// (a deprecated API version, a field the schema does not know), as
// kubectl prints them (unless --quiet), and hands the client's other
// records to klog's lines.
type serverWarnings struct {
	a    *app
	mu   sync.Mutex
	seen map[string]bool
}

func (h *serverWarnings) Enabled(context.Context, slog.Level) bool { return true }

func (h *serverWarnings) Handle(ctx context.Context, r slog.Record) error {
	var text string
	r.Attrs(func(at slog.Attr) bool {
		if at.Key == "warning" {
			text = at.Value.String()
		}
		return text == ""
	})
	if text == "" {
		if klogLines.Enabled(ctx, r.Level) {
			return klogLines.Handle(ctx, r)
		}
		return nil
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.seen[text] {
		h.seen[text] = true
		h.a.warn([]string{"API server: " + text})
	}
	return nil
}

func (h *serverWarnings) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h *serverWarnings) WithGroup(string) slog.Handler      { return h }
