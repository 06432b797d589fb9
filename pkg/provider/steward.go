package provider

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"time"

	"github.com/stewardhq/steward/pkg/client"
)

// jsonType is the Content-Type of every body sent to Steward.
const jsonType = "application/json"

// stewardAPI is Steward's API as [Registrar] and [HTTPReporter] call it:
// through the generated client of pkg/client, sending with the package's
// transport (no redirects, the shared idle connections) and reading each
// answer with [exchange] (the per-call timeout, the 1 MiB cap, the
// classification of transport failures).
//
// NOTE: it calls the generated methods that return the *http.Response, not
// the …WithResponse ones, whose Parse… reads the whole body: an answer is
// read here, up to the cap. The bodies are the package's own types,
// marshalled by the caller and sent with the …WithBody methods, so that
// what goes on the wire is exactly what the package documents, whatever
// the generated request types hold.
type stewardAPI struct {
	c       *client.Client
	timeout time.Duration
}

// newStewardAPI returns the API of the Steward whose base URL is base (an
// absolute http or https URL, a path prefix allowed), calling it with token
// (none when empty), hc (nil for the default client) and timeout per call
// (0 for the default).
func newStewardAPI(base, token string, hc *http.Client, timeout time.Duration) (stewardAPI, error) {
	if _, err := joinURL(base, ""); err != nil {
		return stewardAPI{}, err
	}
	withAccept := func(_ context.Context, r *http.Request) error {
		r.Header.Set("Accept", accept)
		return nil
	}
	c, err := client.New(strings.TrimRight(base, "/"), token,
		client.WithHTTPClient(newSender(hc)), client.WithRequestEditorFn(withAccept))
	if err != nil {
		return stewardAPI{}, err
	}
	// client.New builds its ClientWithResponses on a *Client, whose
	// configuration post reuses.
	gc, ok := c.ClientInterface.(*client.Client)
	if !ok {
		return stewardAPI{}, fmt.Errorf("steward client: a %T, not a *client.Client", c.ClientInterface)
	}
	return stewardAPI{c: gc, timeout: timeout}, nil
}

// registerProvider is POST /api/v1/providers with body, a [Registration].
func (s stewardAPI) registerProvider(ctx context.Context, body []byte) (answer, error) {
	return exchange(ctx, s.timeout, func(ctx context.Context) (*http.Response, error) {
		return s.c.RegisterProviderWithBody(ctx, nil, jsonType, bytes.NewReader(body))
	})
}

// reportStatus is PUT /api/v1/service-type-instances/{instance_id}/status
// with body, a [StatusReport] without its instance id.
func (s stewardAPI) reportStatus(ctx context.Context, instanceID string, body []byte) (answer, error) {
	return exchange(ctx, s.timeout, func(ctx context.Context) (*http.Response, error) {
		return s.c.ReportServiceTypeInstanceStatusWithBody(ctx, instanceID, nil, jsonType, bytes.NewReader(body))
	})
}

// reportRuntime is PUT
// /api/v1/projects/{project}/app-instances/{app_instance_id}/runtime with
// body, a [RuntimeReport].
func (s stewardAPI) reportRuntime(ctx context.Context, project, appInstanceID string, body []byte) (answer, error) {
	return exchange(ctx, s.timeout, func(ctx context.Context) (*http.Response, error) {
		return s.c.ReportAppInstanceRuntimeWithBody(ctx, project, appInstanceID, jsonType, bytes.NewReader(body))
	})
}

// reportRepair posts body, a [RepairReport], to reportPath, the path a
// [RepairRequest] names. A path of the ReportRepairOperation route goes
// through its generated method; Steward hands out no other, but the path is
// Steward's to choose, so any other is posted to as it is, with the same
// headers (the generated client's request editors and sender).
func (s stewardAPI) reportRepair(ctx context.Context, reportPath string, body []byte) (answer, error) {
	project, appInstanceID, operationID, ok := repairRoute(reportPath)
	return exchange(ctx, s.timeout, func(ctx context.Context) (*http.Response, error) {
		if ok {
			return s.c.ReportRepairOperationWithBody(ctx, project, appInstanceID, operationID, nil, jsonType, bytes.NewReader(body))
		}
		return s.post(ctx, reportPath, body)
	})
}

// post posts body to path, below Steward's base URL, as the generated
// methods send their requests.
func (s stewardAPI) post(ctx context.Context, path string, body []byte) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, strings.TrimRight(s.c.Server, "/")+path, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", jsonType)
	for _, edit := range s.c.RequestEditors {
		if err := edit(ctx, req); err != nil {
			return nil, err
		}
	}
	return s.c.Client.Do(req)
}

// repairRoute splits a report path of the ReportRepairOperation route,
// /api/v1/projects/{project}/app-instances/{app_instance_id}/repair-operations/{operation_id}/report,
// into its ids. ok is false for any other path, and for one whose ids the
// generated client would not escape back to the same path.
func repairRoute(p string) (project, appInstanceID, operationID string, ok bool) {
	seg := strings.Split(p, "/")
	if len(seg) != 10 || seg[0] != "" || seg[1] != "api" || seg[2] != "v1" || seg[3] != "projects" ||
		seg[5] != "app-instances" || seg[7] != "repair-operations" || seg[9] != "report" {
		return "", "", "", false
	}
	var ids [3]string
	for i, s := range []string{seg[4], seg[6], seg[8]} {
		id, err := url.PathUnescape(s)
		if err != nil || !pathSegment(id) || url.PathEscape(id) != s {
			return "", "", "", false
		}
		ids[i] = id
	}
	return ids[0], ids[1], ids[2], true
}

// pathSegment reports whether id can stand as one segment of a path the
// generated client builds. It escapes every id, but "." and ".." stay as
// they are and resolve against the path around them: a report for
// instance ".." would go to /api/v1/status.
func pathSegment(id string) bool { return id != "" && id != "." && id != ".." }

// stewards is the Steward replicas a [Registrar] or [HTTPReporter] calls,
// one API per base URL. A call goes to the replica that answered last and
// moves on to the next when a replica cannot be reached (refused, reset,
// DNS); the first that answers, whatever it answers, is kept for the next
// calls. A timeout does not move on: the replica may be slow, not gone,
// and the retry goes to it again.
type stewards struct {
	apis []stewardAPI
	// current indexes apis: the replica that answered last.
	current *atomic.Int32
}

// newStewards returns the APIs of urls, in order, called with token, hc
// and timeout as newStewardAPI says; current is shared by every stewards
// of the same caller, so that calls with another token stick to the same
// replica. It returns an error when urls is empty or one is not an
// absolute http or https URL.
func newStewards(urls []string, token string, hc *http.Client, timeout time.Duration, current *atomic.Int32) (stewards, error) {
	if len(urls) == 0 {
		return stewards{}, errors.New("no Steward URL")
	}
	s := stewards{apis: make([]stewardAPI, 0, len(urls)), current: current}
	for _, u := range urls {
		api, err := newStewardAPI(u, token, hc, timeout)
		if err != nil {
			return stewards{}, err
		}
		s.apis = append(s.apis, api)
	}
	return s, nil
}

// call makes one call, fn, to the current replica, and to each next one in
// turn while the one called is unreachable. It returns the first answer,
// or the last replica's error.
func (s stewards) call(ctx context.Context, fn func(stewardAPI) (answer, error)) (answer, error) {
	n := int32(len(s.apis))
	start := s.current.Load() % n
	var err error
	for i := range n {
		k := (start + i) % n
		var a answer
		a, err = fn(s.apis[k])
		if err == nil {
			s.current.Store(k)
			return a, nil
		}
		if !errors.Is(err, ErrUnreachable) || ctx.Err() != nil {
			return answer{}, err
		}
	}
	return answer{}, err
}

// stewardURLs returns first, when set, followed by more: the base URLs of
// a config that has both a StewardURL and StewardURLs.
func stewardURLs(first string, more []string) []string {
	urls := make([]string, 0, 1+len(more))
	if first != "" {
		urls = append(urls, first)
	}
	return append(urls, more...)
}
