package sign

import (
	"fmt"
	"net/http"
	"net/url"

	"github.com/go-openapi/runtime"
	httptransport "github.com/go-openapi/runtime/client"
	"github.com/go-openapi/strfmt"
	rekorclient "github.com/sigstore/rekor/pkg/generated/client"
	sgsign "github.com/sigstore/sigstore-go/pkg/sign"
)

// rekorEntries is Rekor's (v1 API) entries client at base over rt, the
// run's transport: it retries as the registry does (--retries,
// --timeout), where sigstore-go's own client would wait on
// retryablehttp's back-off, and a 5xx left after the retries is an error
// naming the host.
func rekorEntries(base string, rt http.RoundTripper) (sgsign.RekorClient, error) {
	u, err := url.Parse(base)
	if err != nil || u.Host == "" || (u.Scheme != "https" && u.Scheme != "http") {
		return nil, fmt.Errorf("Rekor URL %q: want https://HOST[/PATH]", base)
	}
	if u.Path == "" {
		u.Path = rekorclient.DefaultBasePath
	}
	t := httptransport.NewWithClient(u.Host, u.Path, []string{u.Scheme}, &http.Client{Transport: failUnavailable{rt}})
	t.Consumers["application/json"] = runtime.JSONConsumer()
	t.Producers["application/json"] = runtime.JSONProducer()
	return rekorclient.New(t, strfmt.Default).Entries, nil
}
