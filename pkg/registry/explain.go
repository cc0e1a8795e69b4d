package registry

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"slices"
	"sort"
	"strings"
	"syscall"

	"github.com/Masterminds/semver/v3"
	"github.com/docker/cli/cli/config"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote/transport"

	"github.com/addonpkg/addonpkg/internal/netguard"
	"github.com/addonpkg/addonpkg/pkg/errdef"
	"github.com/addonpkg/addonpkg/pkg/reference"
	"github.com/addonpkg/addonpkg/pkg/safetree"
)

// The kinds of registry failure, for errors.Is on what Explain returns;
// a repository, tag or digest the registry does not have is
// errdef.ErrNotFound.
var (
	// ErrUnauthorized: the registry wants credentials, refused the ones
	// it got, or denied the operation to them (HTTP 401 or 403).
	ErrUnauthorized = errors.New("authentication required")
	// ErrUnreachable: no connection to the registry (refused, no such
	// host, no answer in time).
	ErrUnreachable = errors.New("registry unreachable")
	// ErrServer: the registry was reached and failed: it answered 5xx,
	// or 429 still after the retries. Not the request's fault, and
	// unlike ErrUnreachable the registry is there: the same request may
	// succeed later, and a write may have been done.
	ErrServer = errors.New("registry failed")
	// ErrUntrustedCertificate: the registry's TLS certificate is not
	// signed by a trusted authority, or is for another name.
	ErrUntrustedCertificate = errors.New("TLS certificate not trusted")
	// ErrPlainHTTP: the registry answered HTTPS with plain HTTP.
	ErrPlainHTTP = errors.New("registry speaks plain HTTP")
	// ErrRefused: the registry refused a manifest or a media type.
	ErrRefused = errors.New("refused by the registry")
)

// MaxTagsShown is how many tags a not-found message lists.
const MaxTagsShown = 10

// Error is a registry failure in addonpkg's words: the reference, what
// went wrong, and what to do. The registry's own answer is kept as Err
// (and Detail) for a verbose log and for errors.As on go-containerregistry's
// types; Kind is one of the sentinels above (nil when the failure fits
// none), matched by errors.Is.
type Error struct {
	// Ref is the reference, repository or registry as the user gave it.
	Ref string
	// Kind is errdef.ErrNotFound, ErrUnauthorized, ... or nil.
	Kind error
	// Message says what went wrong, without the reference; empty means
	// Err's own text is the message.
	Message string
	// Hint says what to do about it; may be empty.
	Hint string
	// Tags are the repository's tags (at most MaxTagsShown, newest
	// first) when a tag was not found; see Options.ExplainTags.
	Tags []string
	// MoreTags counts the tags left out of Tags.
	MoreTags int
	// Err is the underlying error (go-containerregistry's, net's...).
	Err error
}

// Error is one line: "REF: MESSAGE; HINT". Text that came from the
// registry or the user is sanitized (no control characters).
func (e *Error) Error() string {
	msg := e.Message
	if msg == "" && e.Err != nil {
		msg = safetree.Sanitize(e.Err.Error())
	}
	var b strings.Builder
	b.WriteString(safetree.Sanitize(e.Ref))
	b.WriteString(": ")
	b.WriteString(msg)
	if len(e.Tags) > 0 {
		b.WriteString("; tags there: ")
		for i, t := range e.Tags {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(safetree.Sanitize(t))
		}
		if e.MoreTags > 0 {
			fmt.Fprintf(&b, " (and %d more: 'addonpkg ls %s')", e.MoreTags, safetree.Sanitize(reference.Name(e.Ref)))
		}
	}
	if e.Hint != "" {
		b.WriteString("; ")
		b.WriteString(e.Hint)
	}
	return b.String()
}

// Unwrap returns the underlying error.
func (e *Error) Unwrap() error { return e.Err }

// Is reports whether target is e's Kind.
func (e *Error) Is(target error) bool { return e.Kind != nil && target == e.Kind }

// Detail is the underlying error's text, sanitized: what the registry or
// the network said, for a verbose log.
func (e *Error) Detail() string {
	if e.Err == nil {
		return ""
	}
	return safetree.Sanitize(e.Err.Error())
}

// Explain turns a registry error about ref into an *Error that says, in
// addonpkg's words, what went wrong and what to do. A nil err gives nil;
// an err that already is an *Error is returned as it is.
func Explain(ref string, err error) error {
	if err == nil {
		return nil
	}
	var already *Error
	if errors.As(err, &already) {
		return err
	}
	e := &Error{Ref: ref, Err: err}
	host := reference.Registry(ref)
	login := fmt.Sprintf("run 'addonpkg login %s'", host)

	// First the certificate: a registry on localhost is also tried over
	// plain HTTP, and that answer (an error too) says less.
	if untrustedCertificate(err) {
		return e.set(ErrUntrustedCertificate, fmt.Sprintf("the TLS certificate of %s is not trusted", safetree.Sanitize(host)), "trust the registry's CA, or skip TLS verification")
	}
	var te *transport.Error
	if errors.As(err, &te) {
		status := te.StatusCode
		manifest := false
		for _, d := range te.Errors {
			switch d.Code {
			case transport.UnauthorizedErrorCode:
				status = http.StatusUnauthorized
			case transport.DeniedErrorCode:
				status = http.StatusForbidden
			case transport.ManifestUnknownErrorCode:
				status, manifest = http.StatusNotFound, true
			case transport.NameUnknownErrorCode:
				return e.set(errdef.ErrNotFound, "repository not found", "check the name")
			case transport.ManifestInvalidErrorCode, transport.UnsupportedErrorCode:
				return e.set(ErrRefused, "the registry refused the manifest", "if this is an artifact-form add-on, the registry may reject its media types: build it in the image form")
			default:
				continue
			}
			break
		}
		switch status {
		case http.StatusUnauthorized:
			return e.set(ErrUnauthorized, "authentication required", login)
		case http.StatusForbidden:
			return e.set(ErrUnauthorized, "access denied", login+" as a user allowed to use it")
		case http.StatusNotFound:
			return e.notFound(manifest)
		}
		if status >= 500 {
			return e.set(ErrServer, fmt.Sprintf("%s answered %d %s", safetree.Sanitize(host), status, http.StatusText(status)), "the registry is failing: try again later, or ask its operator")
		}
		return e
	}
	// A request retried to the end: what kept failing and, when the
	// registry's body said, why (a 500 that names a missing blob); the
	// request itself, net/url's "Put URL", is in the detail. The
	// registry's words come last, so the cut is wider than a name's.
	if ue := retried(err); ue != nil {
		var kind error
		if errors.Is(ue.Err, ErrServer) {
			kind = ErrServer // the answers kept failing: 5xx or 429
		}
		return e.set(kind, safetree.SanitizeN(ue.Err.Error(), 1024), "")
	}
	// The same, where go-containerregistry joined it with other attempts
	// (its ping tries HTTPS, then plain HTTP, for a local registry).
	var ex *exhaustedError
	if errors.As(err, &ex) {
		return e.set(ErrServer, safetree.Sanitize(host)+" "+safetree.SanitizeN(ex.Error(), 1024), "the registry is failing: try again later, or ask its operator")
	}
	// A registry that accepted the connection and then sent nothing
	// (over HTTPS and over plain HTTP alike, for a local one).
	var idle *netguard.IdleTimeoutError
	if errors.As(err, &idle) {
		return e.set(ErrUnreachable, fmt.Sprintf("%s sent nothing for %s", safetree.Sanitize(host), idle.Idle), "check the registry, or allow more time")
	}
	var dns *net.DNSError
	if errors.As(err, &dns) {
		return e.set(ErrUnreachable, fmt.Sprintf("cannot resolve host %s", safetree.Sanitize(hostOnly(host))), "check the registry's host name")
	}
	// A registry on localhost (or any with PlainHTTP) is tried over HTTPS
	// and then plain HTTP: the HTTPS attempt's "HTTP response to HTTPS
	// client" says nothing when the plain one was answered, with a 5xx
	// retried to the end.
	if errors.Is(err, http.ErrSchemeMismatch) && !errors.Is(err, errdef.ErrRetriesExhausted) {
		return e.set(ErrPlainHTTP, fmt.Sprintf("%s speaks plain HTTP, not HTTPS", safetree.Sanitize(host)), "reach it over plain HTTP")
	}
	var op *net.OpError
	if errors.As(err, &op) && op.Op == "dial" {
		why := "cannot connect"
		var se interface{ Timeout() bool }
		switch {
		case errors.As(op.Err, &se) && se.Timeout():
			why = "connection timed out"
		case errors.Is(op.Err, syscall.ECONNREFUSED):
			why = "connection refused"
		}
		return e.set(ErrUnreachable, fmt.Sprintf("cannot connect to %s (%s)", safetree.Sanitize(host), why), "check the host and port, and that the registry is running")
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return e.set(ErrUnreachable, fmt.Sprintf("%s did not answer in time", safetree.Sanitize(host)), "check the registry, or allow more time")
	}
	return e
}

// retried is the request of err that was retried to the end: the
// *url.Error whose cause is errdef.ErrRetriesExhausted. Not merely the
// first *url.Error: a registry on localhost is tried over HTTPS before
// plain HTTP, and that first attempt's error ("HTTP response to HTTPS
// client") says nothing of the answers that kept failing.
func retried(err error) *url.Error {
	if ue, ok := err.(*url.Error); ok && errors.Is(ue.Err, errdef.ErrRetriesExhausted) {
		return ue
	}
	switch u := err.(type) {
	case interface{ Unwrap() error }:
		if next := u.Unwrap(); next != nil {
			return retried(next)
		}
	case interface{ Unwrap() []error }:
		for _, next := range u.Unwrap() {
			if ue := retried(next); ue != nil {
				return ue
			}
		}
	}
	return nil
}

// untrustedCertificate reports whether err is a TLS certificate that did
// not verify, by its type: the handshake's CertificateVerificationError
// (Go wraps every verification failure in it), or one of x509's errors
// when a caller's own VerifyPeerCertificate returns it bare.
func untrustedCertificate(err error) bool {
	var (
		ce *tls.CertificateVerificationError
		ue x509.UnknownAuthorityError
		he x509.HostnameError
		ie x509.CertificateInvalidError
		se x509.SystemRootsError
	)
	return errors.As(err, &ce) || errors.As(err, &ue) || errors.As(err, &he) || errors.As(err, &ie) || errors.As(err, &se)
}

func (e *Error) set(kind error, msg, hint string) *Error {
	e.Kind, e.Message, e.Hint = kind, msg, hint
	return e
}

// notFound words a missing manifest: which tag or digest, in which
// repository.
// notFound words a 404; manifest says the registry named the manifest
// (MANIFEST_UNKNOWN) as what is missing, so a reference without a tag
// is its tag latest, not a missing repository.
func (e *Error) notFound(manifest bool) *Error {
	e.Kind = errdef.ErrNotFound
	r, err := name.ParseReference(e.Ref)
	if err != nil {
		e.Message = "not found"
		e.Hint = "check the repository and tag"
		return e
	}
	repo := safetree.Sanitize(r.Context().Name())
	if _, version := reference.Split(e.Ref); version == "" && !manifest {
		// A repository (ls, a referrers probe): the repository is missing.
		e.Message = fmt.Sprintf("repository %s not found", repo)
		e.Hint = "check the registry and repository name"
		return e
	}
	switch r := r.(type) {
	case name.Tag:
		e.Message = fmt.Sprintf("tag %s not found in %s", safetree.Sanitize(r.TagStr()), repo)
	case name.Digest:
		e.Message = fmt.Sprintf("manifest %s not found in %s", safetree.Sanitize(r.DigestStr()), repo)
	}
	e.Hint = fmt.Sprintf("'addonpkg ls %s' lists its tags", repo)
	return e
}

// ExplainTags is Explain, and then, when a tag was not found, asks the
// registry for the repository's tags: the message lists them (newest
// first, at most MaxTagsShown), or says that the repository itself does
// not exist. Listing is best effort: if it fails, the error stays as
// Explain words it.
func (o Options) ExplainTags(ctx context.Context, ref string, err error) error {
	err = Explain(ref, err)
	var e *Error
	if !errors.As(err, &e) || e.Kind != errdef.ErrNotFound {
		return err
	}
	var nopts []name.Option
	if o.PlainHTTP {
		nopts = append(nopts, name.Insecure)
	}
	r, perr := name.ParseReference(e.Ref, nopts...)
	if perr != nil {
		return err
	}
	if _, isTag := r.(name.Tag); !isTag {
		return err
	}
	ropts, rerr := o.Remote(ctx)
	if rerr != nil {
		return err
	}
	tags, lerr := ListTags(ctx, r.Context(), ropts...)
	var te *transport.Error
	switch {
	case errors.As(lerr, &te) && te.StatusCode == http.StatusNotFound:
		e.Message = fmt.Sprintf("repository %s not found", safetree.Sanitize(r.Context().Name()))
		e.Hint = "check the registry and repository name"
		return e
	case lerr != nil:
		return err
	}
	// The repository is there: what is missing is the tag, latest when
	// the reference names none (a HEAD's 404 has no body to say which).
	tag := r.(name.Tag)
	e.Message = fmt.Sprintf("tag %s not found in %s", safetree.Sanitize(tag.TagStr()), safetree.Sanitize(r.Context().Name()))
	// A signature's or an SBOM's tag is no add-on to suggest.
	tags = slices.DeleteFunc(tags, func(t string) bool {
		_, attached := reference.Attachment(t)
		return attached
	})
	if len(tags) == 0 {
		e.Hint = "the repository has no add-on tags"
		return e
	}
	SortTags(tags)
	// Newest first.
	for i, j := 0, len(tags)-1; i < j; i, j = i+1, j-1 {
		tags[i], tags[j] = tags[j], tags[i]
	}
	if len(tags) > MaxTagsShown {
		e.MoreTags = len(tags) - MaxTagsShown
		tags = tags[:MaxTagsShown]
	}
	e.Tags = tags
	e.Hint = ""
	return e
}

// SortTags orders tags oldest first: semantic versions by version, then
// the other tags lexically.
func SortTags(tags []string) {
	sort.SliceStable(tags, func(i, j int) bool {
		vi, ei := semver.NewVersion(tags[i])
		vj, ej := semver.NewVersion(tags[j])
		switch {
		case ei == nil && ej == nil:
			if c := vi.Compare(vj); c != 0 {
				return c < 0
			}
			return tags[i] < tags[j]
		case ei == nil:
			return true
		case ej == nil:
			return false
		}
		return tags[i] < tags[j]
	})
}

// hostOnly drops the port of HOST:PORT.
func hostOnly(hostport string) string {
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		return h
	}
	return hostport
}

// dockerConfigDir is $DOCKER_CONFIG, else docker's default. docker/cli's
// config.Dir reads $DOCKER_CONFIG once per process; the keychain reads it
// on each use, so login and logout read it on each use too.
func dockerConfigDir() string {
	if d := os.Getenv("DOCKER_CONFIG"); d != "" {
		return d
	}
	return config.Dir()
}
