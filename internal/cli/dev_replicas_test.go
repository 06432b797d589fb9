package cli_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stewardhq/steward/internal/cli"
	"github.com/stewardhq/steward/internal/store/storetest"
)

// Issue 46, item 1: replicas on --dev lost their provider. Each registered
// its own in-process process-sp, the last one winning, and a kill -9 of
// that replica left new orders waiting until it came back. On a shared
// database the in-process provider is off, and asking for it is refused
// (exit 2) with what to run instead: one provider beside the replicas,
// given every replica's URL (as TestCluster runs them).
func TestServer_NoInProcessProviderOnASharedDatabase(t *testing.T) {
	t.Parallel()
	for _, flags := range [][]string{{"--process-provider"}, {"--process-provider=true"}} {
		var out, errOut bytes.Buffer
		code := cli.MainContext(t.Context(), append([]string{"server", "--dev", "--data-dir", t.TempDir(),
			"--database-url", "postgres://127.0.0.1:1/none"}, flags...), strings.NewReader(""), &out, &errOut)
		if code != 2 || !strings.Contains(errOut.String(), "steward provider process --steward-url") {
			t.Errorf("%s with --database-url: exit %d, stderr:\n%s\nwant exit 2 saying to run steward provider process",
				flags, code, errOut.String())
		}
	}
	if len(storetest.Engines()) < 2 {
		return // the start on PostgreSQL below needs one
	}
	_, log := startServer(t, stewardBinary(t), "server", "--dev", "--database-url", storetest.NewSchemaURL(t),
		"--data-dir", filepath.Join(t.TempDir(), "data"), "--listen", "127.0.0.1:0")
	url := servingURL(t, log)
	if providers := ids(t, url+"/api/v1/providers"); len(providers) != 0 {
		t.Errorf("providers of a --dev replica on PostgreSQL: %q, want none (no in-process one)", providers)
	}
	if items := ids(t, url+"/api/v1/catalog-items"); !slices.Contains(items, "sleeper") {
		t.Errorf("catalog of a --dev replica on PostgreSQL: %q, want the dev catalog", items)
	}
	if !strings.Contains(log.String(), "no in-process provider on a shared database") {
		t.Errorf("the replica's log does not say it runs no provider:\n%s", log.String())
	}
}

// Issue 46, item 4: --dev seeds the dev catalog whether its provider runs
// in the server or beside it (--process-provider=false had an empty
// catalog).
func TestServer_DevSeedsTheCatalogWithoutTheInProcessProvider(t *testing.T) {
	t.Parallel()
	url := startedURL(t, "server", "--dev", "--process-provider=false", "--data-dir", filepath.Join(t.TempDir(), "data"),
		"--listen", "127.0.0.1:0")
	if items := ids(t, url+"/api/v1/catalog-items"); !slices.Contains(items, "sleeper") {
		t.Errorf("catalog of --dev --process-provider=false: %q, want the dev catalog", items)
	}
}

// ids are the ids of the first page a list route answers.
func ids(t *testing.T, url string) []string {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var page struct{ Results []struct{ ID string } }
	if err := json.NewDecoder(resp.Body).Decode(&page); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d (%v)", url, resp.StatusCode, err)
	}
	var ids []string
	for _, r := range page.Results {
		ids = append(ids, r.ID)
	}
	return ids
}
