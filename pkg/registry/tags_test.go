package registry

import (
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/addonpkg/addonpkg/pkg/safetree"
)

// Tags are listed page after page, and the whole listing has a budget:
// a registry whose every page links to another (here, pages without a
// tag) fails with the cap's limit error, where remote.List asked on
// without end.
func TestListTagsPagesWithinBudget(t *testing.T) {
	var asked int
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/v2/" {
			return
		}
		asked++
		n, _ := strconv.Atoi(r.URL.Query().Get("p"))
		w.Header().Set("Content-Type", "application/json")
		switch {
		case strings.HasPrefix(r.URL.Path, "/v2/paged/"):
			// Three pages of two tags.
			if n < 4 {
				w.Header().Set("Link", fmt.Sprintf(`</v2/paged/tags/list?p=%d>; rel="next"`, n+2))
			}
			fmt.Fprintf(w, `{"name":"paged","tags":["t%d","t%d"]}`, n, n+1)
		default:
			w.Header().Set("Link", fmt.Sprintf(`</v2/endless/tags/list?p=%d>; rel="next"`, n+1))
			w.Write([]byte(`{"name":"endless","tags":[]}`))
		}
	}))
	defer srv.Close()
	o := Options{}
	ropts, err := o.Remote(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	host := strings.TrimPrefix(srv.URL, "http://")
	repo, err := o.ParseRepository(host + "/paged")
	if err != nil {
		t.Fatal(err)
	}
	tags, err := ListTags(t.Context(), repo, ropts...)
	if err != nil || !slices.Equal(tags, []string{"t0", "t1", "t2", "t3", "t4", "t5"}) {
		t.Fatalf("paged: %q, %v; want the six tags of three pages", tags, err)
	}

	asked = 0
	if repo, err = o.ParseRepository(host + "/endless"); err != nil {
		t.Fatal(err)
	}
	_, err = ListTags(t.Context(), repo, ropts...)
	var le *safetree.LimitError
	if !errors.As(err, &le) || le.Which != safetree.LimitIndexBytes {
		t.Fatalf("endless pages: %v; want the index cap's limit error", err)
	}
	if max := int(manifestLimit.Max/1024) + 1; asked > max {
		t.Errorf("endless pages: %d requests, want at most %d", asked, max)
	}
}
