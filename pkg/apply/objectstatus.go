package apply

import (
	"cmp"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/addonpkg/addonpkg/pkg/safetree"
)

// Readiness is the word an ObjectStatus gives for why an object is not
// ready (or, waited for after a deletion, not gone). InProgress, Failed
// and Terminating are kstatus's, as it computes them of the object read
// now (but an APIService is InProgress until the aggregator reports it
// Available), and NotFound is its word for an object that is not there;
// the others are addonpkg's own. A caller that switches on it keeps a
// default case: a later kstatus may compute a word not listed here, which
// is passed on as it is.
type Readiness string

// The readiness words of an object that is not ready. An object that is
// ready (kstatus Current, and owned by the add-on) has none: it is in no
// list of ObjectStatus.
const (
	// InProgress: the object exists (and, in Client.Status, is the
	// add-on's) but has not reached its desired state yet (a Deployment
	// whose replicas are not available, a Job not complete, a CRD not
	// established). Waiting longer may help.
	InProgress Readiness = "InProgress"
	// Failed: kstatus says the object reached a state it will not leave by
	// itself (a Job that failed, a CRD whose names are taken). A wait
	// stops at the first one (ErrNotReady).
	Failed Readiness = "Failed"
	// Terminating: the object is being deleted (kstatus: it has a
	// deletion timestamp). In a deletion's WaitError, it is still there
	// after addonpkg deleted it; Message then says what holds it (its
	// finalizers), when that is known.
	Terminating Readiness = "Terminating"
	// NotFound: the object is not in the cluster (deleted by hand, or its
	// kind is no longer served).
	NotFound Readiness = "NotFound"
	// OwnedByOther: the object carries another add-on's owner label
	// (another add-on adopted it, with Options.Force): it no longer
	// counts for this one. Owner names that add-on; Elsewhere says it is
	// an add-on of this one's name whose inventory is in another
	// namespace. Set by Client.Status only.
	OwnedByOther Readiness = "OwnedByOther"
	// NotOwned: the object lacks one of the labels that make it the
	// add-on's, LabelAddon or LabelApplySetPartOf (Message names the one
	// missing): it was taken over by hand or by another tool, and does
	// not count for this add-on. Set by Client.Status only.
	NotOwned Readiness = "NotOwned"
	// Unreadable: addonpkg could not tell the object's readiness:
	// reading it failed (forbidden, unreachable; Client.Status then also
	// returns an error matching the cause), its kind's versions could
	// not be discovered, or kstatus could not compute a status from what
	// was read. Message is the error. A caller must not take it for "not
	// ready": it is unknown.
	Unreadable Readiness = "Unreadable"
)

// ObjectStatus is one object that is not ready (or, after a deletion,
// not gone), and why: what Installed.UnreadyObjects and
// WaitError.Statuses list. Its identity is given field by field, as
// the API server has it, so that a caller can read the object again
// (GroupVersionKind) or match it against its own without parsing, and
// without the inventory's ID format. Kind, Namespace, Name and Owner
// are not sanitized: sanitize them before printing them to a terminal,
// as String does.
type ObjectStatus struct {
	// Group is the object's API group; "" for the core group.
	Group string `json:"group,omitempty"`
	// Version is the API version it was read in.
	Version string `json:"version"`
	Kind    string `json:"kind"`
	// Namespace is "" for a cluster-scoped object.
	Namespace string `json:"namespace,omitempty"`
	Name      string `json:"name"`
	// Status says why it is not ready: one of the Readiness constants.
	Status Readiness `json:"status"`
	// Message is kstatus's message (or the aggregator's, of an
	// APIService), what holds an object not gone, the label missing
	// (NotOwned) or the error (Unreadable); one line, without terminal
	// escapes, maybe empty.
	Message string `json:"message,omitempty"`
	// Owner is the add-on whose owner label the object carries
	// (OwnedByOther).
	Owner string `json:"owner,omitempty"`
	// Elsewhere: Owner is an add-on of this add-on's own name, whose
	// inventory is in another namespace (another ApplySet)
	// (OwnedByOther).
	Elsewhere bool `json:"elsewhere,omitempty"`
}

// GroupVersionKind is the object's group, version and kind.
func (s ObjectStatus) GroupVersionKind() schema.GroupVersionKind {
	return schema.GroupVersionKind{Group: s.Group, Version: s.Version, Kind: s.Kind}
}

// String is the object and its status in one line, without terminal
// escapes: "Kind/namespace/name: Status[: message]" (Kind/name when it
// is cluster-scoped), "...: owned by add-on OWNER[ of another inventory
// namespace]" (OwnedByOther), "...: not owned by this add-on (no LABEL
// label)" (NotOwned), "...: error" (Unreadable). It is what
// Installed.Unready and WaitError.Objects (of a readiness wait) hold.
func (s ObjectStatus) String() string {
	line := s.object() + ": "
	switch s.Status {
	case OwnedByOther:
		line += "owned by add-on " + safetree.Sanitize(s.Owner)
		if s.Elsewhere {
			line += " of another inventory namespace"
		}
		return line
	case NotOwned:
		return line + "not owned by this add-on (" + s.Message + ")"
	case Unreadable:
		return line + s.Message
	}
	line += string(s.Status)
	if s.Message != "" {
		line += ": " + s.Message
	}
	return line
}

// object is "Kind/namespace/name" (Kind/name when cluster-scoped),
// sanitized, as describe says it.
func (s ObjectStatus) object() string {
	return describeMeta(cmp.Or(s.Kind, "(no kind)"), s.Namespace, s.Name)
}

// goneLine is s said of an object waited for after its deletion, as a
// deletion's WaitError.Objects holds it: "Kind/namespace/name[: what
// holds it]".
func (s ObjectStatus) goneLine() string {
	line := s.object()
	if s.Status == Terminating && s.Message != "" {
		line += ": " + s.Message
	}
	return line
}

// statusOf is the ObjectStatus of o, with its readiness word and message.
func statusOf(o *unstructured.Unstructured, r Readiness, msg string) ObjectStatus {
	gvk := o.GroupVersionKind()
	return ObjectStatus{Group: gvk.Group, Version: gvk.Version, Kind: gvk.Kind, Namespace: o.GetNamespace(), Name: o.GetName(), Status: r, Message: msg}
}
