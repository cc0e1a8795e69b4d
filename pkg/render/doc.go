// Package render turns an add-on tree into the ordered YAML stream that
// `kubectl apply -f -` takes: plain manifests split into documents, or a
// kustomize tree built in memory with sigs.k8s.io/kustomize/api. It also
// validates documents and derives the add-on's inventory from them.
package render
