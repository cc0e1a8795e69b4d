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
// runs kustomize: a program that only unpacks does not compile it. A
// kustomization's buildMetadata: [managedByLabel] labels objects
// app.kubernetes.io/managed-by: kustomize-api-vX.Y.Z, the version of the
// kustomize library compiled in (kustomize itself names the program's
// version, "(devel)" for most, which the API server refuses).
//
// Renders of kustomize trees run one at a time. kustomize prints its
// deprecation warnings to os.Stderr and logs to the standard logger;
// they come back as Result.Warnings instead. For a tree whose
// kustomizations may print (deprecated fields such as commonLabels,
// vars, sortOptions, remote resources allowed) that means swapping
// os.Stderr and the standard logger, the process's own, while kustomize
// runs: lines other goroutines write meanwhile land in the warnings.
// Other trees run with both left alone.
//
// kustomize takes no context. A render whose context ends while
// kustomize runs returns the context's error at once; kustomize finishes
// on its own goroutine (holding the one-at-a-time lock, and the swapped
// output if it had it, until then).
package render
