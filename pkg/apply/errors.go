package apply

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"syscall"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/addonpkg/addonpkg/pkg/safetree"
)

// Sentinels, checked with errors.Is. Every error of this package that has
// one of these causes matches it, whether it came from the API server or
// from this package's own checks.
var (
	// ErrInvalid: the add-on itself is wrong (no name, an object without
	// a kind, a kind neither the cluster nor the add-on defines, a
	// namespace neither the cluster nor the add-on has).
	ErrInvalid = errors.New("invalid add-on")
	// ErrConflict: another add-on, or another tool's ApplySet, owns an
	// object (OwnershipError), an add-on from another origin is
	// installed under the name an add-on's config claims
	// (NameClaimError), or the API server answered 409.
	ErrConflict = errors.New("conflict")
	// ErrForbidden: the pre-flight found missing permissions
	// (PreflightError), or the API server answered 403.
	ErrForbidden = errors.New("forbidden")
	// ErrUnauthorized: the API server does not accept the credentials
	// (401), for example an expired token.
	ErrUnauthorized = errors.New("unauthorized")
	// ErrUnreachable: the API server cannot be reached.
	ErrUnreachable = errors.New("api server unreachable")
	// ErrTimeout: objects were not ready (or not gone) in time
	// (WaitError).
	ErrTimeout = errors.New("timeout")
	// ErrNotReady: an object reached a failed state while waited for
	// (WaitError).
	ErrNotReady = errors.New("not ready")
	// ErrCorruptInventory: an inventory Secret that does not decode, or
	// whose record breaks its rules (edited by hand, or by another tool).
	// Apply and Uninstall refuse the add-on before any change; Status and
	// List report it beside the others.
	ErrCorruptInventory = errors.New("corrupt inventory")
	// ErrNotInstalled: no inventory for the add-on in the cluster.
	ErrNotInstalled = errors.New("add-on not installed")
	// ErrRejected: the API server refused an object as invalid (422), for
	// example a webhook or schema validation, or an immutable field
	// without Recreate.
	ErrRejected = errors.New("rejected by the api server")
	// ErrImmutable: of the refusals of ErrRejected, a change to a field
	// the server does not let change once set (a Deployment's selector,
	// a binding's roleRef, an immutable ConfigMap's data). Recreate (or
	// AnnotationRecreate on the object) deletes and creates it again.
	ErrImmutable = errors.New("field is immutable")
	// ErrServer: the API server, or what it calls or stands behind, failed
	// to do what was asked or to answer it: a 5xx (an admission webhook
	// it could not call, etcd timing out, a proxy's 502 page), a 429
	// still there after client-go's retries, or an answer that is not
	// one (a page where an object was due, a body cut short). Not the
	// add-on's fault: the same apply may succeed later. What was asked
	// may have been done: the inventory stays pending, listing it.
	ErrServer = errors.New("api server failed")
)

// OwnershipError is an object that another installed add-on owns. It
// matches ErrConflict.
type OwnershipError struct {
	Object string // Kind/namespace/name
	Owner  string // the add-on that owns it
	Addon  string // the add-on that claimed it
	// Elsewhere: the owner is an add-on of the same name whose inventory
	// is in another namespace (another ApplySet).
	Elsewhere bool
	// Set is the ApplySet id (applyset.kubernetes.io/part-of) of an owner
	// that is no add-on: another tool's ApplySet, such as one kubectl's
	// ApplySet apply made. Owner is then empty.
	Set string
	// Parent describes the parent of Set when it was found among the
	// Secrets and ConfigMaps of the objects' namespaces (kubectl's
	// parents): "Secret/NAMESPACE/NAME", then ` (tooling "TOOL")` when it
	// has a tooling annotation. It describes Object itself when Object
	// is the parent: another tool's record of what it applied.
	Parent string
	// Controller names the controller that reconciles Object from
	// another source, by the labels it writes: "Flux Kustomization
	// NAMESPACE/NAME", "Flux HelmRelease NAMESPACE/NAME", "Timoni
	// instance NAMESPACE/NAME", "kapp app ID" or "Argo CD (tracking id
	// ID)". Owner and Set are then empty.
	Controller string
	// More counts the add-on's other objects that another add-on owns.
	More int
	// Others counts those of the More objects that belong to another
	// owner than Object's (another add-on, Owner's name in another
	// inventory namespace, another ApplySet): 0 when every object in the
	// way is one owner's, as when an installed add-on is applied again
	// under another name.
	Others int
}

func (e *OwnershipError) Error() string {
	what, verb := e.Object, "belongs"
	if e.More > 0 && e.Others == 0 {
		what, verb = fmt.Sprintf("%s and %d more %s", e.Object, e.More, plural(e.More, "object", "objects")), "belong"
	}
	var s string
	switch {
	case e.Set != "" && (e.Parent == e.Object || strings.HasPrefix(e.Parent, e.Object+" ")):
		s = fmt.Sprintf("%s is the parent of ApplySet %s%s, not an object of add-on %q", e.Object, e.Set, strings.TrimPrefix(e.Parent, e.Object), e.Addon)
		if e.More > 0 {
			return fmt.Sprintf("%s, and %d more %s belong to it or to others", s, e.More, plural(e.More, "object", "objects"))
		}
		return s
	case e.Controller != "":
		s = fmt.Sprintf("%s %s to %s, which applies it again from its own source, not to add-on %q", what, verb, e.Controller, e.Addon)
	case e.Set != "" && e.Parent != "":
		s = fmt.Sprintf("%s %s to ApplySet %s of %s, not to add-on %q", what, verb, e.Set, e.Parent, e.Addon)
	case e.Set != "":
		s = fmt.Sprintf("%s %s to ApplySet %s, not to add-on %q", what, verb, e.Set, e.Addon)
	case e.Elsewhere:
		s = fmt.Sprintf("%s %s to add-on %q of another inventory namespace", what, verb, e.Owner)
	default:
		s = fmt.Sprintf("%s %s to add-on %q, not %q", what, verb, e.Owner, e.Addon)
	}
	switch {
	case e.More == 0 || e.Others == 0:
		return s
	case e.More == 1:
		return s + ", and 1 more object belongs to another"
	case e.Others < e.More:
		return fmt.Sprintf("%s, and %d more objects belong to the same owner or to others", s, e.More)
	}
	return fmt.Sprintf("%s, and %d more objects belong to others", s, e.More)
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// Is makes an OwnershipError match ErrConflict.
func (e *OwnershipError) Is(target error) bool { return target == ErrConflict }

// NameError is an add-on name that is not a DNS label (lowercase
// letters, digits and '-', at most 63 characters), which the inventory
// Secret's name and the owner label must be: a name taken from a file
// or folder ("coredns.yaml", "My_Addon") often is not. It matches
// ErrInvalid.
type NameError struct {
	Name    string
	Reasons []string // what the DNS label rules say of it
}

func (e *NameError) Error() string {
	return fmt.Sprintf("%s: add-on name %q: %s", ErrInvalid, safetree.Sanitize(e.Name), strings.Join(e.Reasons, "; "))
}

// Is makes a NameError match ErrInvalid.
func (e *NameError) Is(target error) bool { return target == ErrInvalid }

// NameClaimError is an add-on whose name is the one its own config
// claims (Addon.NameFromConfig) while the add-on installed under that
// name came from another origin (reference.Origin): applying it would
// upgrade that add-on and prune every object it does not hold. Nothing
// was changed. Naming the add-on (a non-empty name to FromRendered)
// replaces the installed one from the new source; another name
// installs beside it. It matches ErrConflict.
type NameClaimError struct {
	Addon     string // the name claimed
	Installed string // the origin the installed add-on's inventory records
	// Claimant is the origin of the add-on that claims the name; ""
	// when its Addon names no Source.
	Claimant string
}

func (e *NameClaimError) Error() string {
	from := "from " + safetree.Sanitize(e.Claimant)
	if e.Claimant == "" {
		from = "from an add-on that names no source"
	}
	return fmt.Sprintf("add-on %q is installed from %s, not %s, whose config claims the name", e.Addon, safetree.Sanitize(e.Installed), from)
}

// Is makes a NameClaimError match ErrConflict.
func (e *NameClaimError) Is(target error) bool { return target == ErrConflict }

// InventoryTooLargeError is an inventory record too large for its
// Secret, refused before the apply's dry-run and any write, and by a
// dry-run (Options.DryRun) too: the API server holds at most Limit bytes
// of a Secret's data, about three thousand objects with long names. It
// matches ErrInvalid.
//
// Installed, when not zero, counts the objects of the installed record
// that an upgrade's pending record lists beside the new ones (so that an
// apply cut short is finished, or its leftovers pruned, by the next
// one): the add-on alone fits, the two together do not. Uninstalling the
// add-on first, then applying it, is the fix (the objects are deleted
// and made again). Otherwise the add-on alone is too large: split it.
type InventoryTooLargeError struct {
	Addon     string
	Secret    string // namespace/name of the inventory Secret
	Objects   int    // the entries the record would list
	Bytes     int    // its size, encoded
	Limit     int    // what a Secret's data holds
	Installed int
}

func (e *InventoryTooLargeError) Error() string {
	fix := "split the add-on into smaller ones"
	if e.Installed > 0 {
		fix = fmt.Sprintf("the add-on alone fits, but an upgrade's record lists the %d installed objects beside the new ones until it is done: uninstall %s first, then apply it", e.Installed, e.Addon)
	}
	return fmt.Sprintf("%v: write inventory %s: the record of %d objects would take %d bytes, more than the %d a Secret holds; %s",
		ErrInvalid, e.Secret, e.Objects, e.Bytes, e.Limit, fix)
}

// Is makes an InventoryTooLargeError match ErrInvalid.
func (e *InventoryTooLargeError) Is(target error) bool { return target == ErrInvalid }

// Permission is one verb on one resource, or on one object of it, as
// SelfSubjectAccessReview asks it.
type Permission struct {
	Verb      string
	Group     string
	Resource  string
	Namespace string // empty: cluster-wide
	Name      string // empty: every object of the resource
}

func (p Permission) String() string {
	r := p.Resource
	if p.Group != "" {
		r += "." + p.Group
	}
	if p.Name != "" {
		r += "/" + safetree.Sanitize(p.Name) // a Role's name may hold escapes
	}
	if p.Namespace == "" {
		return p.Verb + " " + r
	}
	return p.Verb + " " + r + " in " + p.Namespace
}

// PreflightError lists every permission the credentials lack for the
// plan. Nothing was changed. It matches ErrForbidden.
type PreflightError struct {
	User    string // as the API server names the credentials, when known
	Missing []Permission
}

// maxListed bounds the permissions a PreflightError's message lists; the
// others are counted (Missing holds them all).
const maxListed = 10

func (e *PreflightError) Error() string {
	s := make([]string, 0, min(len(e.Missing), maxListed+1))
	for _, p := range e.Missing[:min(len(e.Missing), maxListed)] {
		s = append(s, p.String())
	}
	if n := len(e.Missing) - maxListed; n > 0 {
		s = append(s, fmt.Sprintf("and %d more", n))
	}
	who := "the credentials"
	if e.User != "" {
		who = fmt.Sprintf("user %q", e.User)
	}
	return fmt.Sprintf("pre-flight: %s may not: %s", who, strings.Join(s, ", "))
}

// Is makes a PreflightError match ErrForbidden.
func (e *PreflightError) Is(target error) bool { return target == ErrForbidden }

// WaitError names the objects that were not ready (or, for deletions,
// not gone) and their last status. It matches ErrTimeout when the
// timeout passed, ErrNotReady when an object failed.
type WaitError struct {
	Op string // "readiness" or "deletion"
	// Objects says each object of Statuses in one line, in its order:
	// ObjectStatus.String of a readiness wait ("Kind/namespace/name:
	// Status: message"), "Kind/namespace/name[: held by ...]" of a
	// deletion. When every object was ready by the time they were read
	// again, Statuses is empty and Objects holds the engine's error alone.
	Objects []string
	// Statuses is each object that was not ready (InProgress, Failed,
	// NotFound, Terminating, Unreadable), or, of a deletion, still there
	// (Terminating, Message saying what holds it) or unreadable: what a
	// caller tells them apart by, never by the text of Objects.
	Statuses []ObjectStatus
	TimedOut bool
	Err      error // the engine's own error
}

// add lists st, and line, which says it.
func (e *WaitError) add(st ObjectStatus, line string) {
	e.Statuses = append(e.Statuses, st)
	e.Objects = append(e.Objects, line)
}

func (e *WaitError) Error() string {
	if e.TimedOut {
		return fmt.Sprintf("timed out waiting for %s: %s", e.Op, strings.Join(e.Objects, "; "))
	}
	return fmt.Sprintf("%s failed: %s", e.Op, strings.Join(e.Objects, "; "))
}

// Is makes a WaitError match ErrTimeout or ErrNotReady.
func (e *WaitError) Is(target error) bool {
	return (target == ErrTimeout && e.TimedOut) || (target == ErrNotReady && !e.TimedOut)
}

func (e *WaitError) Unwrap() error { return e.Err }

// apiError keeps the API server's (or the transport's) error and its
// message, and matches the sentinel of its cause.
type apiError struct{ err error }

func (e *apiError) Error() string { return oneLine(shortCauses(e.err)) }

// shortCauses is err's message with each long cause of an API server's
// refusal cut in its middle. A cause quotes the value it refuses before
// the reason ("spec.template: Invalid value: {...}: field is immutable"):
// a Job's or a Pod's whole template pushed the reason past the length of
// a message, so the reason was lost. Only the first few causes are
// looked at: a message keeps 2000 bytes (oneLine), in which no more can
// show, and cutting each of a hostile server's thousands in a message of
// megabytes took minutes.
func shortCauses(err error) string {
	msg := err.Error()
	var se apierrors.APIStatus
	if !errors.As(err, &se) || se.Status().Details == nil {
		return msg
	}
	const head, tail, most = 160, 200, 8
	for i, c := range se.Status().Details.Causes {
		if i == most {
			break
		}
		if m := c.Message; len(m) > head+tail+20 {
			msg = strings.Replace(msg, m, strings.ToValidUTF8(m[:head]+" … "+m[len(m)-tail:], ""), 1)
		}
	}
	return msg
}

func (e *apiError) Unwrap() error { return e.err }

func (e *apiError) Is(target error) bool {
	switch target {
	case ErrForbidden:
		return apierrors.IsForbidden(e.err)
	case ErrUnauthorized:
		return apierrors.IsUnauthorized(e.err)
	case ErrConflict:
		return apierrors.IsConflict(e.err) || apierrors.IsAlreadyExists(e.err)
	case ErrRejected:
		return apierrors.IsInvalid(e.err) || apierrors.IsBadRequest(e.err)
	case ErrImmutable:
		return immutable(e.err)
	case ErrUnreachable:
		return unreachable(e.err)
	case ErrServer:
		return serverFailed(e.err)
	}
	return false
}

// immutableCause matches the words the API server's validation gives a
// field that may not change: "field is immutable" (apimachinery's
// FieldImmutableErrorMsg), a CEL rule's "... is immutable", RBAC's
// "cannot change roleRef", a StorageClass's "updates to parameters are
// forbidden", a Pod's "pod updates may not change fields other than", a
// Service's clusterIP "may not change once set".
var immutableCause = regexp.MustCompile(`\bis immutable\b|\bimmutable field\b|\bcannot change roleRef\b|\bupdates to \w+ are forbidden\b|\bupdates may not change fields\b|\bmay not change once set\b`)

// immutable reports whether err is a 422 one of whose causes is a field
// that may not change. ssa's IsImmutableError takes any 409 or 422 for
// one (as kubectl apply --force does, which recreates on either); the
// causes tell an immutable field from a value the schema refuses, so
// that Recreate is suggested only where it helps.
func immutable(err error) bool {
	var se apierrors.APIStatus
	if !apierrors.IsInvalid(err) || !errors.As(err, &se) || se.Status().Details == nil {
		return false
	}
	for _, c := range se.Status().Details.Causes {
		// The server's words follow the value it quotes (Invalid value:
		// "...": field is immutable): a value that says "is immutable"
		// is not a reason.
		msg := c.Message
		if i := strings.LastIndex(msg, `": `); i >= 0 {
			msg = msg[i+3:]
		}
		if immutableCause.MatchString(msg) {
			return true
		}
	}
	return false
}

// unreachable reports whether err is a connection that could not be
// made, or that broke before the answer was whole: a request's EOF (the
// server or a proxy closed the connection), a body's unexpected EOF.
func unreachable(err error) bool {
	var op *net.OpError
	var dns *net.DNSError
	var ue *url.Error
	return errors.As(err, &op) || errors.As(err, &dns) || errors.Is(err, syscall.ECONNREFUSED) ||
		(errors.As(err, &ue) && errors.Is(ue.Err, io.EOF)) || errors.Is(err, io.ErrUnexpectedEOF)
}

// serverFailed reports whether err is the API server's failure, not the
// request's: a status of 5xx (an InternalError such as an admission
// webhook it could not call, a proxy's 502 page, a 503 or 504) or 429
// (what client-go's retries left), or an answer that is no answer
// (badAnswerError).
func serverFailed(err error) bool {
	var bad *badAnswerError
	if errors.As(err, &bad) {
		return true
	}
	var se apierrors.APIStatus
	if !errors.As(err, &se) {
		return false
	}
	code := se.Status().Code
	return code >= 500 || code == http.StatusTooManyRequests
}

// wrap gives err the sentinels of its cause; nil stays nil.
func wrap(err error) error {
	if err == nil {
		return nil
	}
	var ae *apiError
	if errors.As(err, &ae) {
		return err
	}
	return &apiError{err: err}
}

// oneLine makes a message (the API server's, a decoder's) one line
// that cannot smuggle terminal escapes, long enough for the API server's
// validation messages.
func oneLine(s string) string {
	return safetree.SanitizeN(strings.Join(strings.Fields(s), " "), 2000)
}
