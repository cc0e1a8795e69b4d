// Package conformance is the reader side of the conformance suite of
// spec/addon-v1.md (spec/conformance/): the result a reader reports for a
// vector (Result), the refusal classes the spec defines and the mapping
// of addonpkg's typed errors onto them (Classify), and a runner that
// feeds every vector to a reader command and compares what it prints
// with the vector's expected.json (Run).
//
// The runner knows nothing of addonpkg's own reader: any command that
// follows the contract of spec/conformance/README.md can be checked.
package conformance
