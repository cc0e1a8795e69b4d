package apply

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/fluxcd/cli-utils/pkg/kstatus/polling"
	"github.com/fluxcd/cli-utils/pkg/kstatus/polling/clusterreader"
	"github.com/fluxcd/cli-utils/pkg/kstatus/polling/engine"
	"github.com/fluxcd/cli-utils/pkg/kstatus/polling/statusreaders"
	"github.com/fluxcd/pkg/ssa"
	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/version"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"

	"github.com/addonpkg/addonpkg/pkg/safetree"
)

// FieldManager is the server-side apply field manager of every object
// addonpkg applies.
const FieldManager = "addonpkg"

// DefaultInventoryNamespace is where inventories live unless
// ClientOptions.InventoryNamespace says otherwise.
const DefaultInventoryNamespace = "kube-system"

// ErrKubeconfig: no usable kubeconfig (none found and not in a cluster,
// an unknown context, a malformed file).
var ErrKubeconfig = errors.New("kubeconfig")

// ErrInvalidOption: a ClientOptions field the API server would refuse,
// such as a namespace that is not a DNS label.
var ErrInvalidOption = errors.New("invalid option")

// ConnectOptions says which cluster to talk to, as kubectl's kubeconfig
// handling does.
type ConnectOptions struct {
	// Kubeconfig is a kubeconfig file. Empty: $KUBECONFIG, then
	// ~/.kube/config, then the in-cluster config of a Pod's service
	// account.
	Kubeconfig string
	// Context is the kubeconfig context; empty: its current context.
	Context string
	// Impersonate acts as this user (kubectl's --as), for example
	// "system:serviceaccount:NAMESPACE:NAME" to check what an in-cluster
	// installer's ServiceAccount may do; ImpersonateGroups adds groups.
	Impersonate       string
	ImpersonateGroups []string
	// ClientOptions apply to the client made; their Namespace defaults
	// to the context's namespace.
	ClientOptions
}

// ClientOptions configure a Client.
type ClientOptions struct {
	// Namespace is given to namespaced objects that have none, as
	// kubectl's -n does. Empty: the namespace the installed add-on's
	// inventory records (Record.Namespace), so that an upgrade stays where
	// the add-on is whatever context it runs from; for an add-on not yet
	// installed, "default" (Connect: the context's namespace). A Namespace
	// other than the recorded one moves the add-on: its objects are
	// applied there, and those left in the old namespace are pruned.
	Namespace string
	// InventoryNamespace holds the inventories (one Secret per add-on);
	// empty: DefaultInventoryNamespace.
	InventoryNamespace string
	// Concurrency is how many objects are dry-run at once; 0: 4.
	Concurrency int
	// PollInterval is how often readiness is polled; 0: 500 ms.
	PollInterval time.Duration
	// Logger, when set, is told at warn level of each warning the API
	// server answers with (a Warning header: an API version that is
	// deprecated, a field the schema does not know): one record each,
	// its message a whole line ("API server warning: TEXT", as
	// registry.Options.Logger's records are), the text under the key
	// "warning" too. nil: warnings are dropped. Either way
	// nothing is printed: without a handler of its own, client-go would
	// print them to stderr through klog. A rest.Config given to New with
	// a WarningHandler or WarningHandlerWithContext of its own keeps it.
	Logger *slog.Logger
}

// Client installs add-ons into one cluster. It is safe for concurrent use
// on different add-ons.
type Client struct {
	cfg     *rest.Config
	kube    client.Client
	mapper  *resettableMapper
	typed   kubernetes.Interface
	manager *ssa.ResourceManager
	opts    ClientOptions
	// defaultNS is the namespace of a first install without
	// opts.Namespace: "default", or Connect's context namespace.
	defaultNS string
	// context is the kubeconfig context Connect used.
	context string
}

// Context is the name of the kubeconfig context Connect used: "" for a
// Client made by New, or from a Pod's in-cluster credentials.
func (c *Client) Context() string { return c.context }

// Connect loads the kubeconfig as kubectl does and checks that the API
// server answers and accepts the credentials (ErrUnreachable,
// ErrUnauthorized otherwise).
func Connect(ctx context.Context, opts ConnectOptions) (*Client, error) {
	overrides := &clientcmd.ConfigOverrides{CurrentContext: opts.Context}
	overrides.AuthInfo.Impersonate = opts.Impersonate
	overrides.AuthInfo.ImpersonateGroups = opts.ImpersonateGroups
	rules, loader := kubeconfigLoader(opts.Kubeconfig, overrides)
	cfg, err := loader.ClientConfig()
	if err != nil {
		return nil, kubeconfigError(rules, loader, opts.Context, err)
	}
	c, err := New(cfg, opts.ClientOptions)
	if err != nil {
		return nil, err
	}
	if ns, _, err := loader.Namespace(); err == nil && ns != "" && opts.Namespace == "" {
		if err := checkNamespace("the context's namespace", ns); err != nil {
			return nil, err
		}
		c.defaultNS = ns
	}
	c.context = opts.Context
	if raw, err := loader.RawConfig(); err == nil && c.context == "" && raw.Contexts[raw.CurrentContext] != nil {
		c.context = raw.CurrentContext
	}
	if err := c.Ping(ctx); err != nil {
		return nil, err
	}
	return c, nil
}

// Contexts lists, sorted, the contexts of the kubeconfig Connect reads
// for kubeconfig (ConnectOptions.Kubeconfig: "" is $KUBECONFIG's files,
// merged, else ~/.kube/config): the names ConnectOptions.Context may
// take, as kubectl config get-contexts lists them. It reads files only;
// no kubeconfig at all is no context, not an error.
func Contexts(kubeconfig string) ([]string, error) {
	_, loader := kubeconfigLoader(kubeconfig, &clientcmd.ConfigOverrides{})
	raw, err := loader.RawConfig()
	if err != nil {
		return nil, fmt.Errorf("%w: %s", ErrKubeconfig, oneLine(err.Error()))
	}
	return slices.Sorted(maps.Keys(raw.Contexts)), nil
}

// kubeconfigLoader loads the kubeconfig file kubeconfig, else kubectl's
// defaults, with overrides: the one place Connect and Contexts read it.
func kubeconfigLoader(kubeconfig string, overrides *clientcmd.ConfigOverrides) (*clientcmd.ClientConfigLoadingRules, clientcmd.ClientConfig) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = kubeconfig
	return rules, clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, overrides)
}

// kubeconfigError says what is wrong with the kubeconfig, naming the
// files it was read from, in place of client-go's messages (its empty
// configuration "try setting KUBERNETES_MASTER" names a variable nothing
// reads any more).
func kubeconfigError(rules *clientcmd.ClientConfigLoadingRules, loader clientcmd.ClientConfig, contextName string, err error) error {
	looked := rules.GetLoadingPrecedence()
	if rules.ExplicitPath != "" {
		looked = []string{rules.ExplicitPath}
	}
	var files []string
	for _, f := range looked {
		if _, serr := os.Stat(f); serr == nil {
			files = append(files, f)
		}
	}
	switch {
	case clientcmd.IsEmptyConfig(err) && len(files) == 0:
		return fmt.Errorf("%w: none found (looked for %s), and not running in a Pod", ErrKubeconfig, strings.Join(looked, ", "))
	case len(files) == 0 && contextName != "":
		// No file to name, nor contexts to list.
		return fmt.Errorf("%w: none found (looked for %s), so no context %q", ErrKubeconfig, strings.Join(looked, ", "), contextName)
	case clientcmd.IsEmptyConfig(err):
		return fmt.Errorf("%w %s: no current-context is set, and no context was named", ErrKubeconfig, strings.Join(files, ", "))
	}
	if raw, rerr := loader.RawConfig(); rerr == nil && contextName != "" && raw.Contexts[contextName] == nil {
		has := strings.Join(slices.Sorted(maps.Keys(raw.Contexts)), ", ")
		if has == "" {
			has = "none"
		}
		return fmt.Errorf("%w %s: no context %q (it has %s)", ErrKubeconfig, strings.Join(files, ", "), contextName, has)
	}
	// The loader's own errors name the file.
	return fmt.Errorf("%w: %s", ErrKubeconfig, oneLine(err.Error()))
}

// checkNamespace refuses a namespace name the API server would refuse.
func checkNamespace(what, ns string) error {
	if errs := validation.IsDNS1123Label(ns); len(errs) > 0 {
		return fmt.Errorf("%w: %s %q: %s", ErrInvalidOption, what, ns, errs[0])
	}
	return nil
}

// New makes a Client from a rest.Config. It does not contact the API
// server until used (see Ping).
func New(cfg *rest.Config, opts ClientOptions) (*Client, error) {
	cfg = rest.CopyConfig(cfg)
	// client-go's default of 5 requests a second makes a 100-object
	// add-on take a minute.
	if cfg.QPS == 0 {
		cfg.QPS, cfg.Burst = 100, 200
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = time.Minute
	}
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper { return retryAfterCap{answerCheck{rt}} })
	if cfg.WarningHandler == nil && cfg.WarningHandlerWithContext == nil {
		cfg.WarningHandlerWithContext = warningLogger{opts.Logger}
	}
	if opts.InventoryNamespace == "" {
		opts.InventoryNamespace = DefaultInventoryNamespace
	}
	if opts.Namespace != "" {
		if err := checkNamespace("namespace", opts.Namespace); err != nil {
			return nil, err
		}
	}
	if err := checkNamespace("inventory namespace", opts.InventoryNamespace); err != nil {
		return nil, err
	}
	if opts.Concurrency <= 0 {
		opts.Concurrency = 4
	}
	if opts.PollInterval <= 0 {
		opts.PollInterval = 500 * time.Millisecond
	}
	httpClient, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return nil, fmt.Errorf("make http client: %w: %s", ErrKubeconfig, oneLine(err.Error()))
	}
	// The dynamic mapper discovers a group again when a kind is not found,
	// which is what lets a custom resource follow its CRD in one apply;
	// Reset makes it anew once a CRD changed (resettableMapper).
	mapper, err := newResettableMapper(func() (meta.RESTMapper, error) { return apiutil.NewDynamicRESTMapper(cfg, httpClient) })
	if err != nil {
		return nil, fmt.Errorf("make rest mapper: %w", wrap(err))
	}
	// A logger of its own: controller-runtime's default one prints to
	// stderr, once, when it is first used 30 s after the process started
	// ("log.SetLogger(...) was never called"), unless the program set it.
	direct, err := client.NewWithWatch(cfg, client.Options{HTTPClient: httpClient, Mapper: mapper, Log: logr.FromSlogHandler(logHandler(opts.Logger))})
	if err != nil {
		return nil, fmt.Errorf("make client: %w", wrap(err))
	}
	kube := countingClient(direct)
	typed, err := kubernetes.NewForConfigAndClient(cfg, httpClient)
	if err != nil {
		return nil, fmt.Errorf("make client: %w", wrap(err))
	}
	// A direct reader: readiness needs only get, which the pre-flight
	// checks, where the caching reader would list every kind. And the
	// generic status reader for every kind: the Deployment and StatefulSet
	// readers also list the ReplicaSets and Pods they own, which an
	// installer's credentials need not allow (a forbidden list makes the
	// status Unknown, so the wait times out), though the status they
	// compute is kstatus of the object alone, as this one's is.
	poller := polling.NewStatusPoller(kube, mapper, polling.Options{
		ClusterReaderFactory: engine.ClusterReaderFactoryFunc(clusterreader.NewDirectClusterReader),
		CustomStatusReaders:  []engine.StatusReader{statusreaders.NewGenericStatusReader(mapper, readyStatus)},
	})
	manager := ssa.NewResourceManager(kube, poller, ssa.Owner{Field: FieldManager, Group: labelDomain})
	manager.SetConcurrency(opts.Concurrency)
	return &Client{cfg: cfg, kube: kube, mapper: mapper, typed: typed, manager: manager, opts: opts, defaultNS: "default"}, nil
}

// maxRetryAfter is the longest Retry-After client-go is let to wait
// before it asks again (it asks ten times): the API server's priority
// and fairness asks for a second or so.
const maxRetryAfter = 2

// retryAfterCap shortens a Retry-After longer than maxRetryAfter
// seconds. client-go sleeps as long as the server asks before each of
// its retries: a proxy's maintenance page (503) or a 429 asking for an
// hour would hold every request until its timeout (a minute each, most
// of an hour for a prune of fifty objects), and the error would say the
// request timed out, not what the server answered.
type retryAfterCap struct{ rt http.RoundTripper }

func (c retryAfterCap) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := c.rt.RoundTrip(r)
	if resp != nil {
		if v := resp.Header.Get("Retry-After"); v != "" {
			// An HTTP date client-go does not read: it does not retry.
			if n, perr := strconv.Atoi(v); perr == nil && n > maxRetryAfter {
				resp.Header.Set("Retry-After", strconv.Itoa(maxRetryAfter))
			}
		}
	}
	return resp, err
}

// warningLogger hands the API server's warnings to a logger, or drops
// them: a library does not print.
type warningLogger struct{ log *slog.Logger }

// HandleWarningHeaderWithContext implements rest.WarningHandlerWithContext.
func (w warningLogger) HandleWarningHeaderWithContext(ctx context.Context, code int, _ string, text string) {
	if code != 299 || text == "" || w.log == nil {
		return
	}
	w.log.LogAttrs(ctx, slog.LevelWarn, "API server warning: "+safetree.Sanitize(text), slog.String("warning", text))
}

// logHandler is log's handler, or one that drops every record.
func logHandler(log *slog.Logger) slog.Handler {
	if log == nil {
		return slog.DiscardHandler
	}
	return log.Handler()
}

// Ping asks the API server its version: ErrUnreachable or ErrUnauthorized
// when it cannot. An answer that is not a Kubernetes version (a login
// page or a proxy's page answering 200 at the server's URL) is
// ErrUnreachable too: there is no API server there.
func (c *Client) Ping(ctx context.Context) error {
	rc := c.typed.Discovery().RESTClient()
	if rc == nil {
		return nil
	}
	body, err := rc.Get().AbsPath("/version").Do(ctx).Raw()
	var bad *badAnswerError
	if errors.As(err, &bad) && bad.Excerpt != "" {
		return fmt.Errorf("connect to %s: %w: not a Kubernetes API server (/version answered %s %q)", c.cfg.Host, ErrUnreachable, bad.ContentType, bad.Excerpt)
	}
	if err != nil {
		// The host is named once: not again in the request's URL.
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return fmt.Errorf("connect to %s: %w", c.cfg.Host, wrap(err))
	}
	var v version.Info
	if err := json.Unmarshal(body, &v); err != nil || v.GitVersion == "" {
		return fmt.Errorf("connect to %s: %w: not a Kubernetes API server (/version answered %q)", c.cfg.Host, ErrUnreachable, excerpt(body))
	}
	return nil
}

// excerpt is the start of a server's answer, on one line, for a message.
func excerpt(b []byte) string {
	const most = 60
	s := oneLine(strings.ToValidUTF8(string(b[:min(len(b), 4*most)]), "?"))
	if r := []rune(s); len(r) > most {
		s = string(r[:most]) + "..."
	}
	return s
}

// Host is the API server's URL.
func (c *Client) Host() string { return c.cfg.Host }

// Namespaces lists, sorted, the names of the cluster's namespaces: what
// ClientOptions.Namespace may name, as kubectl completes -n.
func (c *Client) Namespaces(ctx context.Context) ([]string, error) {
	l, err := c.typed.CoreV1().Namespaces().List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("list namespaces: %w", wrap(err))
	}
	names := make([]string, len(l.Items))
	for i, ns := range l.Items {
		names[i] = ns.Name
	}
	slices.Sort(names)
	return names, nil
}
