// Package archive turns an add-on tree (any fs.FS) into reproducible layer
// tarballs and computes its content identity, as spec/addon-v1.md defines
// them: entries in canonical order, owners zeroed, modes normalized, one
// fixed time, gzip headers without name or time.
package archive
