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
// (ErrRemote) unless Options.AllowRemote, and a tree whose links lead
// out of it (safetree.ErrLinkEscape) or to a folder that holds it
// (safetree.ErrLinkLoop) is refused, whatever its kind. This is the one package that
// runs kustomize: a program that only unpacks does not compile it. A
// kustomization's buildMetadata: [managedByLabel] labels objects
// app.kubernetes.io/managed-by: kustomize-api-vX.Y.Z, the version of the
// kustomize library compiled in (kustomize itself names the program's
// version, "(devel)" for most, which the API server refuses).
//
// kustomize ends the process (log.Fatal) on a few inputs rather than
// returning an error: those are refused before it runs
// (ErrKustomizeFatal), and a panic in it is returned as an error
// (ErrKustomizePanic). These checks of content (and the alias, key and
// remote checks beside them) read the files kustomize may read: one walk
// of the kustomization graph from the root, through every field
// kustomize reads a file or folder from, finds them, and counts the work
// the caps bound (MaxKustomizeObjects, MaxPatchTargets). A file no
// kustomization names (a README, Helm values, an example) is not parsed
// and does not make a render fail; where the walk cannot tell what
// kustomize reads (a builtin transformer's configuration naming files of
// its own, a kustomization it cannot decode, a folder of configurations
// whose kustomization changes them) it checks every file. Builtin
// configurations and a kustomization's lists are read as kustomize
// reads them, anchors and merge keys expanded, field names in any case;
// a folder of configurations that changes them is refused unless remote
// resources are allowed, since what it makes may name a remote file no
// check can see. The OpenAPI schema a kustomization names (its
// openapi field) is kustomize's package state, which each render resets
// before and after it runs, so that no add-on renders with another's.
//
// Renders of kustomize trees run one at a time (kustomize keeps global
// state of its own). A render touches no process global: not os.Stderr,
// not the standard logger, not the environment or working directory.
// Result.Warnings names each deprecated field of the kustomizations
// kustomize read, in kustomize's words (types.Kustomization's
// CheckDeprecatedFields), and the vars declared that no file it read
// refers to (kustomize's "well-defined vars that were never replaced"),
// worked out by the render itself. kustomize also prints the first, on
// os.Stderr, unconditionally, when it loads such a kustomization, and
// logs the second and a few rarer things (a label selector's Gt on a
// label that is no number, a var whose value is no scalar, a var
// referred to only in fields kustomize does not replace in) through the
// standard logger: those copies go wherever the program points
// os.Stderr and the standard logger, as for any program that runs
// kustomize. A program that wants its stderr clean of them points both
// elsewhere once, when it starts, as addonpkg's command does; swapping
// them around each render would take other goroutines' lines and race.
// A "git::" remote, which kustomize also logs, is refused (ErrRemote)
// unless remote resources are allowed.
//
// kustomize takes no context. A render whose context ends while
// kustomize runs returns the context's error at once; kustomize stops at
// its next read of a file or folder of the tree, which fails from then
// on (whether a path exists is still answered), or, busy between
// two reads (patches and transformers over the objects, which the caps
// bound), finishes that work on its own goroutine, holding the
// one-at-a-time lock until then. A render whose context ends while it
// waits for that lock never runs kustomize.
package render
