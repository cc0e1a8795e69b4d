// Package pack lays an add-on tree and its config out as either form of
// spec/addon-v1.md, reproducibly: the deterministic tar layer, the
// image form (an ordinary container image holding the tree under /addon)
// or the artifact form (addonpkg's media types). It does not render:
// build validates a tree and derives its inventory by rendering, then
// packs; transfer converts an artifact to the image form by packing its
// tree again with the config it carries, and so compiles no kustomize.
package pack
