package apply

import (
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"
)

// A 2xx answer that is no answer (a proxy's or a login page where an
// object was due, a JSON body cut short) reached client-go's decoders,
// whose errors are strings ("serializer for text/html doesn't exist",
// "couldn't get version/kind; json parse error: ...") that no caller can
// tell from the add-on's own mistakes. answerCheck looks at each answer
// as it streams through, without holding it, and makes a read of a bad
// one fail with a *badAnswerError, which client-go keeps in its error
// chain (%w) and which matches ErrServer.

// badAnswerError is a 2xx answer of the API server (or of what stands in
// front of it) that is no Kubernetes answer. The request may have been
// done: the server said 2xx.
type badAnswerError struct {
	Status      int
	ContentType string
	What        string // what is wrong with it
	Excerpt     string // its start, for a page
}

func (e *badAnswerError) Error() string {
	s := fmt.Sprintf("%v: it answered %d %s, %s", ErrServer, e.Status, e.ContentType, e.What)
	if e.Excerpt != "" {
		s += fmt.Sprintf(" (%q)", e.Excerpt)
	}
	return s
}

// Is makes a badAnswerError match ErrServer.
func (e *badAnswerError) Is(target error) bool { return target == ErrServer }

// kubeMediaTypes are the media types client-go decodes an object from,
// or a watch's stream of them: the API server answers a CBOR watch in
// application/cbor-seq, which client-go's Accept does not name.
var kubeMediaTypes = map[string]bool{
	"application/json":                    true,
	"application/yaml":                    true,
	"application/vnd.kubernetes.protobuf": true,
	"application/cbor":                    true,
	"application/cbor-seq":                true,
}

// answerCheck checks the 2xx answers of rt: one of a media type that is
// neither a Kubernetes one nor named by the request's Accept (a page of
// text/html) fails its first read; a JSON one (not a watch's stream)
// whose body does not make one whole JSON object or array fails at its
// end. Other answers pass as they are.
type answerCheck struct{ rt http.RoundTripper }

func (c answerCheck) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := c.rt.RoundTrip(r)
	if err != nil || resp.StatusCode < 200 || resp.StatusCode > 299 || resp.StatusCode == http.StatusNoContent || r.Method == http.MethodHead {
		return resp, err
	}
	ct := resp.Header.Get("Content-Type")
	if ct == "" {
		return resp, nil // client-go takes its own content type
	}
	mt, params, perr := mime.ParseMediaType(ct)
	switch {
	case perr != nil:
		return resp, nil // client-go's own error, typed (InternalError)
	case !kubeMediaTypes[mt] && !accepts(r.Header.Get("Accept"), mt):
		head := make([]byte, 240)
		n, _ := io.ReadFull(resp.Body, head)
		resp.Body.Close()
		resp.Body = failingBody{&badAnswerError{Status: resp.StatusCode, ContentType: mt, What: "not a Kubernetes object", Excerpt: excerpt(head[:n])}}
		resp.ContentLength = -1
	case mt == "application/json" && params["stream"] == "" && !isWatch(r):
		resp.Body = &jsonShape{body: resp.Body, status: resp.StatusCode}
	}
	return resp, nil
}

// accepts says whether the Accept header accept names media type mt
// itself (not through a wildcard: client-go accepts "*/*" by default).
func accepts(accept, mt string) bool {
	for _, a := range strings.Split(accept, ",") {
		if t, _, err := mime.ParseMediaType(strings.TrimSpace(a)); err == nil && t == mt {
			return true
		}
	}
	return false
}

// isWatch says whether r asks for a watch, whose answer is a stream of
// JSON objects, not one.
func isWatch(r *http.Request) bool {
	w := r.URL.Query().Get("watch")
	return w == "true" || w == "1"
}

// failingBody is a body whose every read fails with err.
type failingBody struct{ err error }

func (b failingBody) Read([]byte) (int, error) { return 0, b.err }
func (b failingBody) Close() error             { return nil }

// jsonShape passes a JSON body through and, at its end, fails the read
// unless the body was one whole JSON object or array: brackets and
// braces balanced outside strings, no string left open, nothing after
// it. It does not parse further (the decoder does): it finds an answer
// cut short, or a page that is no JSON, in constant memory.
type jsonShape struct {
	body   io.ReadCloser
	status int
	depth  int
	inStr  bool
	escape bool
	began  bool // the value's first byte was read
	ended  bool // its last
	bad    string
	n      int64
}

func (j *jsonShape) Read(p []byte) (int, error) {
	n, err := j.body.Read(p)
	j.scan(p[:n])
	if j.bad == "" && errors.Is(err, io.EOF) && j.n > 0 && !j.ended {
		j.bad = fmt.Sprintf("its JSON cut short after %d bytes", j.n)
	}
	if j.bad != "" && (err != nil || n > 0) {
		// The bytes read so far are the decoder's; the error is the
		// read's: client-go reads the whole body before it decodes.
		return n, &badAnswerError{Status: j.status, ContentType: "application/json", What: j.bad}
	}
	return n, err
}

func (j *jsonShape) Close() error { return j.body.Close() }

func (j *jsonShape) scan(b []byte) {
	for _, c := range b {
		if j.bad != "" {
			return
		}
		j.n++
		switch {
		case j.inStr:
			switch {
			case j.escape:
				j.escape = false
			case c == '\\':
				j.escape = true
			case c == '"':
				j.inStr = false
			}
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
		case j.ended:
			j.bad = fmt.Sprintf("more after its JSON value, at byte %d", j.n)
		case !j.began:
			if c != '{' && c != '[' {
				j.bad = fmt.Sprintf("no JSON object (it begins %q)", c)
				return
			}
			j.began, j.depth = true, 1
		case c == '"':
			j.inStr = true
		case c == '{' || c == '[':
			j.depth++
		case c == '}' || c == ']':
			j.depth--
			j.ended = j.depth == 0
		}
	}
}
