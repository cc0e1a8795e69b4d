package apply_test

import (
	"fmt"
	"strings"
)

// crdVersion is a version a test CRD lists.
type crdVersion struct {
	name            string
	served, storage bool
}

// crdYAML is the manifest of a namespaced CRD of kind in the test's
// GROUP (which newCluster's addon replaces), named as the API server
// requires (widgets.GROUP for Widget), whose versions take any custom
// resource (x-kubernetes-preserve-unknown-fields). It ends with a line
// break, ready for "---\n" and the next document. Its names stay on one
// line, so that a test finding custom resources by "kind: Widget\n"
// does not take the CRD for one.
func crdYAML(kind string, versions ...crdVersion) string {
	singular := strings.ToLower(kind)
	var b strings.Builder
	fmt.Fprintf(&b, `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: %[2]ss.GROUP}
spec:
  group: GROUP
  names: {kind: %[1]s, listKind: %[1]sList, plural: %[2]ss, singular: %[2]s}
  scope: Namespaced
  versions:
`, kind, singular)
	for _, v := range versions {
		fmt.Fprintf(&b, `  - name: %s
    served: %t
    storage: %t
    schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}
`, v.name, v.served, v.storage)
	}
	return b.String()
}
