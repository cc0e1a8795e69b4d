// Package build packages an add-on tree as an OCI image in either form of
// spec/addon-v1.md: the image form (an ordinary container image holding
// the tree under /addon) or the artifact form (addonpkg's media types).
// The same input gives the same digest on any machine, any day.
package build
