// Package mediatypes is the vocabulary of the add-on format: the media
// types, label and annotation keys of spec/addon-v1.md, and helpers that
// tell which form a manifest or config is in. It does no I/O.
package mediatypes
