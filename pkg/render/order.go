package render

import (
	"cmp"
	"slices"
	"strings"

	"github.com/addonpkg/addonpkg/pkg/addon"
)

// applyOrderFirst are the kinds that a rendered stream begins with, in this
// order: what other objects depend on (namespaces, CRDs, service accounts
// and RBAC, configuration) comes before the workloads that use it. It is
// the fixed ("legacy") order of `kustomize build`, which Helm's install
// order agrees with where it matters: Namespace first, CRDs before any
// custom resource, RBAC before workloads.
var applyOrderFirst = []string{
	"Namespace",
	"ResourceQuota",
	"StorageClass",
	"CustomResourceDefinition",
	"ServiceAccount",
	"PodSecurityPolicy",
	"Role",
	"ClusterRole",
	"RoleBinding",
	"ClusterRoleBinding",
	"ConfigMap",
	"Secret",
	"Endpoints",
	"Service",
	"LimitRange",
	"PriorityClass",
	"PersistentVolume",
	"PersistentVolumeClaim",
	"Deployment",
	"StatefulSet",
	"CronJob",
	"PodDisruptionBudget",
}

// applyOrderLast are the kinds that end a rendered stream, in this order:
// admission webhooks, which would otherwise intercept the creation of the
// objects of their own add-on before their service runs.
var applyOrderLast = []string{
	"MutatingWebhookConfiguration",
	"ValidatingWebhookConfiguration",
}

// kindRank places a kind: negative for applyOrderFirst, positive for
// applyOrderLast, 0 for every other kind (custom resources among them).
var kindRank = func() map[string]int {
	m := map[string]int{}
	for i, k := range applyOrderFirst {
		m[k] = i - len(applyOrderFirst)
	}
	for i, k := range applyOrderLast {
		m[k] = i + 1
	}
	return m
}()

// gvkKey is the group, version and kind of o joined as "GROUP_VERSION_KIND"
// (the core group written "~G"): objects of equal rank sort by it, so
// kinds of no listed rank come in byte order of their API group.
func gvkKey(o addon.Object) string {
	group, version, ok := strings.Cut(o.APIVersion, "/")
	if !ok {
		group, version = "", o.APIVersion
	}
	if group == "" {
		group = "~G"
	}
	if version == "" {
		version = "~V"
	}
	return group + "_" + version + "_" + o.Kind
}

// CompareApplyOrder orders two objects for applying: by the rank of their
// kind (applyOrderFirst, then every other kind, then applyOrderLast), then
// by group, version and kind. Objects it finds equal (same group, version
// and kind) keep their relative order in a stable sort.
func CompareApplyOrder(a, b addon.Object) int {
	if c := cmp.Compare(kindRank[a.Kind], kindRank[b.Kind]); c != 0 {
		return c
	}
	return strings.Compare(gvkKey(a), gvkKey(b))
}

// SortForApply puts documents in apply order (CompareApplyOrder), keeping
// the order of documents of the same kind: the order of a plain-manifest
// add-on's stream and inventory (spec/addon-v1.md, section 6.4).
func SortForApply(docs []Document) {
	slices.SortStableFunc(docs, func(a, b Document) int { return CompareApplyOrder(a.Object, b.Object) })
}
