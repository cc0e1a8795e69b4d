// Package audit holds checks over the project's own source, so that the
// rules of docs/architecture.md and spec/SECURITY.md are tested, not
// only written down:
//
//   - imports go down the layers of Layers, and no production package
//     imports a test helper (imports.go);
//   - a package compiles only the heavy dependencies its Budget allows
//     (go-git, kustomize, sigstore, the cluster clients), and NoDependency
//     edges do not exist (budget.go);
//   - one home per rule: byte caps only in safetree.Limits, path checks
//     only in safetree (onehome.go);
//   - no read of untrusted input without a cap (readall.go), and no error
//     recognised by its text (errtext.go);
//   - docs/architecture.md's package table is go list's, and
//     spec/SECURITY.md names a test for every guarantee (the _test.go
//     files).
//
// Each check has a companion test that plants a violation and sees it
// caught.
package audit
