// Package build packages an add-on tree as an OCI image in either form of
// spec/addon-v1.md: the image form (an ordinary container image holding
// the tree under /addon) or the artifact form (addonpkg's media types).
// The same input gives the same digest on any machine, any day.
//
// Build validates the tree and derives its inventory by rendering it once
// (package render, unless Options.NoValidate), then lays it out with
// package pack; it is the packer that renders, pack the one that does
// not. Patch puts a tree over an existing add-on (one new layer on an
// image-form base, whiteouts for deletes).
package build
