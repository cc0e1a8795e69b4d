// Package apply installs add-ons into a Kubernetes cluster: staged
// server-side apply, an inventory per add-on, prune, readiness waits, a
// server-side diff and an RBAC pre-flight, on Flux's engine
// (github.com/fluxcd/pkg/ssa, kstatus from github.com/fluxcd/cli-utils).
//
// # API
//
//	c, err := apply.Connect(ctx, apply.ConnectOptions{Kubeconfig: path, Context: name})
//	addon, err := apply.FromRendered("", ad, res) // an unpack.Addon and its render.Result
//	cs, err := c.Apply(ctx, addon, apply.Options{Wait: true})
//	// an add-on set, from its lock (addonset.RenderLocked), in dependsOn order:
//	addons, err := apply.FromSet(res.Members)
//	sets, err := c.ApplyAll(ctx, addons, apply.Options{})
//	// or from a rendered stream alone:
//	objs, err := apply.DecodeObjects(stream)
//	cs, err = c.Apply(ctx, apply.Addon{Name: "coredns", Version: "1.12.0",
//		Source: "oci://reg/coredns@sha256:...", Digest: "sha256:...", Objects: objs},
//		apply.Options{Wait: true})
//	cs, err = c.Diff(ctx, addon, apply.Options{})   // what Apply would change
//	cs, err = c.Uninstall(ctx, "coredns", apply.UninstallOptions{})
//	names, err := set.UninstallOrder()               // an addonset.Set's members, dependents first
//	sets, err = c.UninstallAll(ctx, names, apply.UninstallOptions{})
//	list, err := c.Status(ctx)                       // installed add-ons, readiness
//
// Connect reads kubeconfig as kubectl does (an explicit file, then
// $KUBECONFIG, then ~/.kube/config, then a Pod's in-cluster config; a
// context; impersonation as kubectl's --as); New takes a *rest.Config. Errors match the sentinels of errors.go with
// errors.Is: ErrConflict (*OwnershipError, *NameClaimError), ErrForbidden
// (*PreflightError), ErrTimeout and ErrNotReady (*WaitError),
// ErrUnreachable, ErrServer, ErrUnauthorized, ErrRejected (ErrImmutable), ErrInvalid
// (*InventoryTooLargeError), ErrNotInstalled, ErrCorruptInventory,
// ErrKubeconfig, ErrInvalidOption.
// ApplyAll's and UninstallAll's errors are *AddonError, naming the add-on
// that failed, around the cause. Each object that is not ready is an
// ObjectStatus, in Status's Installed.UnreadyObjects and in
// WaitError.Statuses: its group, version, kind, namespace and name, a
// Readiness word (InProgress, Failed, Terminating, NotFound,
// OwnedByOther with the Owner, NotOwned, Unreadable) and a message. A
// caller acts on those; the lines beside them (Installed.Unready,
// WaitError.Objects) are the same said for people, not to be parsed.
// Options.Progress (and UninstallOptions.Progress) is told of each Stage
// as it ends, for a caller that shows progress. The package prints
// nothing of its own: the API server's warnings go to
// ClientOptions.Logger, or nowhere. client-go logs a few failures itself
// (a response cut short by a cancelled context) through klog, the
// process's logger, which writes to stderr unless the program routes it
// (klog.SetLogger); the package leaves the process's logger alone.
//
// # Stages
//
// Every object is applied with server-side apply under field manager
// "addonpkg", after a server-side dry-run; only objects that differ are
// patched, so applying an add-on twice bumps no resourceVersion. The
// stages: CustomResourceDefinitions, Namespaces and ClusterRoles, waited
// for (CRDs Established, and each CRD created or changed until the API
// server's discovery, which follows it asynchronously, serves the
// versions it serves and none it lists as not served) before anything
// else, the REST mapper discovering the new kinds; then *Class kinds (waited for); then Roles;
// then everything else (ServiceAccounts, RoleBindings, ConfigMaps,
// Services, workloads, custom resources, in ssa's kind order); then
// Mutating- and ValidatingWebhookConfigurations, after the rest is ready
// when Options.Wait is set. Before the first change of an install or
// upgrade (or of a re-apply whose objects changed under the same
// record: an Addon that names no Digest or Identity is recorded with
// its objects' digest, Record.Content), the
// objects already in the cluster (but the custom resources
// of the add-on's own CRDs, whose new schema may allow what the old one
// refuses) are dry-run together: a change the server refuses as
// immutable (ErrImmutable: a Job's template, a Deployment's selector) is
// refused with nothing changed, not in its stage after the stages before
// it changed the cluster, unless Options.Recreate or AnnotationRecreate
// (never for a CRD, a Namespace or a ClusterRole); a change of an object
// that may be recreated that the server refuses other than as immutable
// is refused so too, since recreating would only delete it. So is a Role
// or ClusterRole, new ones too, that RBAC refuses as granting what the
// user does not hold (ErrForbidden: the escalate verb, which the
// pre-flight's access reviews cannot see).
//
// Fields held by the managers of Options.TakeOver (DefaultTakeOver:
// kubectl*, helm, kubeadm, kops) are taken over, so an add-on installed
// by hand is adopted. An object whose LabelAddon names another add-on, or
// this add-on's name with the ApplySet of an inventory in another
// namespace, or that is a member of another tool's ApplySet (its part-of
// label another id, as kubectl's ApplySet apply writes) or its parent
// (its id label the one its name gives), or that another controller
// applies again from its own source (the labels of Flux's Kustomizations
// and HelmReleases, Timoni's instances, kapp's apps, Argo CD's tracking
// annotation: the two would take its fields from each other), is
// refused (*OwnershipError, naming the set and its parent when found, or
// the controller) unless Options.Force.
//
// A Namespace is no exception: two add-ons that both declare one
// conflict, the second refused before any change, naming both. An
// object has one owner, as in kubectl's ApplySets (the labels hold one
// value each), and the owner's prune or uninstall would delete the
// Namespace with everything in it. (Flux's kustomize-controller does not
// refuse: the last Kustomization to apply takes the labels, and its
// removal deletes the Namespace and the other's objects.) To share one,
// let one add-on declare it and the other only put objects in it:
// uninstalling the owner keeps a Namespace that holds the other's
// objects (Prune and uninstall, below), and it stays in the owner's
// inventory until an uninstall finds it empty.
//
// # Names and origins
//
// An add-on is installed under Addon.Name: the installer's choice, or,
// from FromRendered without a name, the name the add-on's own config
// gives (Addon.NameFromConfig). A config's name is a claim any package
// can make, so Apply, its dry-run and Diff refuse it (*NameClaimError,
// ErrConflict) before any change when the inventory of that name
// records a source of another origin (reference.Origin: the registry
// repository, the folder's path, the download URL with a digest of its
// query, the git repository and subdirectory; tags, digests, commits
// and checksums dropped), so that an unrelated add-on calling itself "coredns" does not
// upgrade the installed coredns and prune what it does not hold. A name the
// installer gives is never refused so: it is how an add-on is replaced
// from another source on purpose, or installed beside. So is an add-on
// set's member, named by the set. An inventory that records no source
// has no origin to compare with, and is upgraded. An add-on installed
// from a registry and relocated to a mirror is another origin: its first
// apply from the mirror takes the installer's name, after which the
// inventory records the mirror and its later versions apply by the
// config's name.
//
// # Create once
//
// An object annotated AnnotationApply=ApplyIfNotPresent
// ("addonpkg.io/apply: IfNotPresent"; as ssa reads it, a label too), or
// carrying Flux's "kustomize.toolkit.fluxcd.io/ssa: IfNotPresent" (any
// case, as Flux reads it; of Flux's other values Ignore is honoured, see
// below, and Merge and Override are Flux's: such an object is applied
// as any other), is created when it is absent and
// never changed once it is there (ssa.ApplyOptions.IfNotPresentSelector):
// a Secret or a ConfigMap that a controller or an admin fills in after
// the install. It is the add-on's word, read from the object applied,
// not from the one in the cluster. Apply, Diff and a dry-run agree: absent, it
// is Created (or Unvalidated, as any object whose CRD or Namespace is
// pending), with its diff; there, it is Skipped, with the Reason, and no
// diff, whatever its content. One that is there is never sent to the
// server: neither the dry-run before the first change nor a recreate
// (Options.Recreate, AnnotationRecreate) touches it. Readiness is waited
// for as of any object (unless AnnotationWait). The ownership checks
// above run as for any object, so another add-on's, another ApplySet's
// or another controller's is refused unless Options.Force. The
// inventory records it while it is this add-on's (it made it, or it
// carries LabelAddon and the ApplySet of this inventory), so prune and
// uninstall delete it unless AnnotationPrune; one that is there and is
// not (nobody's, forced past another add-on's, or made by someone else
// after the plan was read) is left as it is: neither adopted (no
// label is written) nor recorded, so no prune or uninstall of this
// add-on deletes it. One there when the plan was read and deleted
// before the apply reached it is absent for ssa, which makes it, with
// the add-on's labels: it is the add-on's then, and recorded (the
// pre-flight, which found it there, asked no leave to create it: a
// refusal is the server's, ErrForbidden). A value of AnnotationApply other than
// ApplyIfNotPresent or ApplyIgnore exactly ("ifnotpresent") is
// ErrInvalid, naming the object, before any request.
//
// # Ignore
//
// An object annotated AnnotationApply=ApplyIgnore ("addonpkg.io/apply:
// Ignore"), or Flux's "kustomize.toolkit.fluxcd.io/ssa: Ignore" (any
// case), as a label or an annotation, on the add-on's object or on the
// one in the cluster, is left alone, as Flux's kustomize-controller
// leaves it (ssa.ApplyOptions.ExclusionSelector): not created when
// absent, not changed when there, Skipped with the Reason by Apply, Diff
// and a dry-run, never dry-run, recreated or waited for, and only read
// (get) by the pre-flight. Nothing is written to it, so the ownership
// checks pass it by, another add-on's or controller's too. One that
// carries the add-on's labels (an earlier apply made it) is recorded,
// marked InventoryEntry.Ignored, so that the inventory lists every
// object whose labels say it is the add-on's (as Flux's
// kustomize-controller records what ssa skipped); one that does not
// (absent, another's, nobody's) is not. An object recorded so is never
// deleted by prune or uninstall (unlike Flux, which deletes it with its
// Kustomization unless the object in the cluster carries an exclusion:
// an add-on's Ignore is taken as letting go of the object for good), and
// Status counts it ready; once the add-on no longer holds it, or is
// uninstalled, it leaves the inventory and keeps the labels, as an
// object AnnotationPrune keeps does. One in the cluster that carries the key is kept by prune and
// uninstall too, as AnnotationPrune keeps it: an admin who marks an
// installed object so has taken it over. An ignored Namespace or CRD of
// the add-on makes nothing for the others: an object in that Namespace,
// or of that kind, needs the cluster to have it, and is refused before
// any change (ErrInvalid) when it does not. Flux's older
// "kustomize.toolkit.fluxcd.io/reconcile: disabled" means the same, as
// kustomize-controller reads it.
//
// # Inventory
//
// Each add-on has one Secret, InventoryName(name) ("addonpkg-NAME") in
// the inventory namespace (ClientOptions.InventoryNamespace, default
// kube-system), of type InventorySecretType, holding under InventoryKey
// the JSON of Inventory: name, version, pinned source, manifest digest,
// content identity (else the digest of the objects), installer values,
// the namespace given to objects
// that name none (an upgrade without ClientOptions.Namespace keeps it),
// phase, and every object as
// "<namespace>_<name>_<group>_<kind>" with its API version (and its name
// when that does not give it back: an RBAC name with "__"; "transient"
// for a Job with ttlSecondsAfterFinished, which Status counts ready once
// the TTL controller has deleted it, and an apply creates again, as
// Flux does). The Secret is
// a KEP-3659 ApplySet parent (label applyset.kubernetes.io/id =
// ApplySetID, tooling "addonpkg/v1", contains-group-kinds,
// additional-namespaces); every object it owns carries
// applyset.kubernetes.io/part-of and LabelAddon, so kubectl sees what
// owns what.
//
// Apply writes the inventory as pending, listing the previous objects and
// the new ones, before its first change, and as applied, listing the new
// ones, after pruning. An apply killed half-way leaves a pending
// inventory; the next Apply prunes what it no longer holds from that
// union and applies the rest. An apply that finds its inventory changed
// or deleted when it writes it (another apply or an uninstall of the
// add-on at the same time), or that fails after a change and finds it so,
// adds what it applied to the record there is now, or to a new one,
// pending, and fails with ErrConflict.
//
// # Prune and uninstall
//
// Objects of the previous inventory that the add-on no longer holds are
// deleted in reverse apply order, only when they carry the add-on's
// LabelAddon and its ApplySet's part-of label (an add-on of one name may
// be installed under two inventory namespaces: each deletes only its
// own), and, by an uninstall (but with UninstallOptions.NoWait) and an
// apply with Options.Wait, waited for until gone: the uid deleted, as
// kubectl wait --for=delete waits, so an object someone makes again
// under its name is not waited for. An apply without Wait asks for the
// deletions and returns, as kubectl apply --prune without --wait and
// Flux's kustomize-controller do; an apply that holds again an object
// still being deleted (a CRD pruned so, that the next version adds
// back) waits until it is gone, bounded by Options.Timeout, before its
// first change (else a *WaitError, ErrTimeout, and nothing changed).
// AnnotationPrune=PruneDisabled keeps one, and so does Flux's
// kustomize.toolkit.fluxcd.io/prune: disabled, and an Ignore key on the
// object in the cluster (above); the pre-flight asks only to read it. A CRD or Namespace that still holds objects (other than
// those being deleted, what the cluster's controllers made for them and
// delete with them (objects whose owner references lead to them),
// Endpoints, which EndpointSlices mirror, Leases, which controllers'
// leader election leaves, and the default ServiceAccount
// and kube-root-ca.crt ConfigMap every namespace gets) is kept, and stays in
// the inventory, unless Options.PruneNonEmpty. A Namespace the API
// server makes itself (default, kube-system, kube-public, which it never
// deletes, and kube-node-lease), and one that holds inventories (the
// client's inventory namespace, or one with a Secret labelled
// LabelInventory), is let go of
// instead: the fields the add-on applied, its labels among them, come
// off, and it leaves the inventory. One whose Secrets the credentials
// may not list (so whether it holds inventories is not known) is
// neither deleted nor let go of, and stays in the inventory. An object of the previous inventory
// that is one of the new set under another ID (an Event, served as v1
// and events.k8s.io/v1: the same uid) is not pruned. Uninstall deletes
// the whole inventory the same way, then the inventory.
//
// # Pre-flight
//
// Before any change Apply and Uninstall ask the API server, with one
// SelfSubjectAccessReview per verb and resource, whether the credentials
// may do what the plan needs: get and patch every object, create those
// that do not exist, delete those pruned (and recreated), get, create or
// update the inventory. An object the apply leaves as it is (an
// IfNotPresent one that exists, an ignored one), and one prune keeps,
// needs get alone. Where a verb is refused on a resource it is asked
// again for each object's name, so a grant by name (RBAC resourceNames,
// as the in-cluster example's for the inventory) suffices. A
// *PreflightError lists every missing permission and nothing is changed.
package apply
