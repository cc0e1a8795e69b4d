package registry

import (
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/addonpkg/addonpkg/pkg/safetree"
)

// logTransport logs each request line and each response status line at
// debug level, with credentials redacted: no header is logged, the user
// information of a URL is dropped and query values that look like
// secrets are replaced.
type logTransport struct {
	inner http.RoundTripper
	log   *slog.Logger
}

// withLog wraps rt with request logging when log is set.
func withLog(rt http.RoundTripper, log *slog.Logger) http.RoundTripper {
	if log == nil {
		return rt
	}
	return &logTransport{inner: rt, log: log}
}

func (t *logTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	ctx := req.Context()
	u := RedactURL(req.URL)
	t.log.LogAttrs(ctx, slog.LevelDebug, "> "+req.Method+" "+u,
		slog.String("method", req.Method), slog.String("url", u))
	resp, err := t.inner.RoundTrip(req)
	if err != nil {
		t.log.LogAttrs(ctx, slog.LevelDebug, "< "+req.Method+" "+u+": "+safetree.Sanitize(redactText(err.Error(), req.URL)),
			slog.String("method", req.Method), slog.String("url", u), slog.String("error", err.Error()))
		return resp, err
	}
	line := "< " + safetree.Sanitize(resp.Status) + " " + req.Method + " " + u
	attrs := []slog.Attr{slog.String("method", req.Method), slog.String("url", u), slog.Int("status", resp.StatusCode)}
	if ct := resp.Header.Get("Content-Type"); ct != "" {
		line += " (" + safetree.Sanitize(ct)
		if resp.ContentLength >= 0 {
			line += ", " + strconv.FormatInt(resp.ContentLength, 10) + " bytes"
		}
		line += ")"
	}
	if loc := resp.Header.Get("Location"); loc != "" {
		if lu, err := req.URL.Parse(loc); err == nil {
			line += " -> " + RedactURL(lu)
		}
	}
	t.log.LogAttrs(ctx, slog.LevelDebug, line, attrs...)
	return resp, nil
}

// secretParams are query parameters whose values are credentials in the
// token flows and presigned URLs registries use.
var secretParams = []string{"token", "password", "secret", "signature", "sig", "credential", "auth", "key", "code"}

// RedactURL is u for a log: without user information, with the values of
// query parameters that look like credentials replaced by "redacted",
// and sanitized.
func RedactURL(u *url.URL) string {
	if u == nil {
		return ""
	}
	c := *u
	c.User = nil
	if c.RawQuery != "" {
		q := c.Query()
		changed := false
		for k := range q {
			lk := strings.ToLower(k)
			for _, s := range secretParams {
				if strings.Contains(lk, s) {
					for i := range q[k] {
						q[k][i] = "redacted"
					}
					changed = true
					break
				}
			}
		}
		if changed {
			c.RawQuery = q.Encode()
		}
	}
	return safetree.Sanitize(c.String())
}

// redactText removes u's password from an error text that may quote u.
func redactText(s string, u *url.URL) string {
	if u == nil || u.User == nil {
		return s
	}
	if p, ok := u.User.Password(); ok && p != "" {
		s = strings.ReplaceAll(s, p, "redacted")
	}
	return s
}

// LogTransport logs each request and response line of rt to log at debug
// level, credentials redacted (as Options.Logger does for registries), for
// the other HTTP clients of a command (http and git sources); a nil log
// returns rt.
func LogTransport(rt http.RoundTripper, log *slog.Logger) http.RoundTripper { return withLog(rt, log) }
