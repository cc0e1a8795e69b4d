// Package render turns an add-on tree into the ordered YAML stream that
// `kubectl apply -f -` takes: plain manifests split into documents, or a
// kustomize tree built in memory with sigs.k8s.io/kustomize/api. It also
// validates documents and derives the add-on's inventory from them
// (Result.Inventory).
//
// Addon renders an unpacked add-on, passed whole; Render renders a bare
// tree (build's validation). Options.Raw lists a tree's manifests without
// rendering, and Options.DropText keeps each document's place instead of
// its text. A kustomization's remote resources are refused
// (ErrRemote) unless Options.AllowRemote. This is the one package that
// runs kustomize: a program that only unpacks does not compile it.
package render
