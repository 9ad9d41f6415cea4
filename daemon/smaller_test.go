package daemon_test

import (
	"compress/gzip"
	"encoding/json"
	"io"
	"net/http"
	"testing"
)

// /openapi.json, some hundred kilobytes, is gzipped for clients that take
// it.
func TestOpenAPICompressed(t *testing.T) {
	t.Parallel()
	b := setup(t)
	req, _ := http.NewRequest("GET", b.url+"/openapi.json", nil)
	req.Header.Set("Accept-Encoding", "gzip")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 || resp.Header.Get("Content-Encoding") != "gzip" {
		t.Fatalf("%d, Content-Encoding %q", resp.StatusCode, resp.Header.Get("Content-Encoding"))
	}
	zr, err := gzip.NewReader(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := io.ReadAll(zr)
	var doc struct {
		OpenAPI string `json:"openapi"`
	}
	if json.Unmarshal(raw, &doc) != nil || doc.OpenAPI == "" {
		t.Fatalf("not the document: %.200s", raw)
	}
}
