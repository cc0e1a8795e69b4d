// Package capi turns a rendered add-on set into what Cluster API's
// ClusterResourceSet installs: one ConfigMap per member (a Secret for a
// member whose stream holds Secrets) holding that member's rendered
// stream, and the ClusterResourceSet (addons.cluster.x-k8s.io/v1beta2)
// that lists them in the set's dependency order. A management cluster
// then installs the locked add-ons into every workload cluster the
// ClusterResourceSet selects.
//
//	res, err := addonset.Render(ctx, set, addonset.RenderOptions{Lock: lock})
//	members := make([]capi.Member, len(res.Members))
//	for i, m := range res.Members {
//		members[i] = capi.FromRendered(m.Name, m.Pinned, m.Addon, m.Result)
//	}
//	crs, err := capi.ClusterResourceSet(members, capi.Options{Name: "addons",
//		Namespace: "clusters", ClusterSelector: map[string]string{"addons": "standard"}})
//	_, err = crs.WriteTo(os.Stdout) // for kubectl apply --server-side -f -
//
// Nothing here talks to a cluster: the package builds objects (the Go
// types of k8s.io/api and sigs.k8s.io/cluster-api/api) and writes them.
// It keeps to the limits the API server and Cluster API enforce: at most
// MaxDataBytes of data per ConfigMap or Secret (a larger member is split
// at document boundaries; a single larger document is a SizeError), at
// most MaxResources resources per ClusterResourceSet, names that are DNS
// labels, a non-empty cluster selector and an explicit strategy. Errors
// match ErrInvalid, ErrNoResources, ErrTooLarge and ErrTooManyResources
// with errors.Is.
package capi
