package crd

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"

	"k8s.io/apimachinery/pkg/util/yaml"
)

// TestSamplesAccepted keeps config/samples in step with the schema: every
// document there must be accepted by the API server as written.
func TestSamplesAccepted(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "samples", "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no samples in config/samples: %v", err)
	}
	var cases []validationCase
	for _, f := range files {
		if filepath.Base(f) == "kustomization.yaml" {
			continue // kustomize's, not the API server's
		}
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		reader := yaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
		for i := 0; ; i++ {
			doc, err := reader.Read()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			if len(bytes.TrimSpace(doc)) == 0 {
				continue
			}
			cases = append(cases, validationCase{
				name:     fmt.Sprintf("%s#%d", filepath.Base(f), i),
				manifest: string(doc),
			})
		}
	}
	runValidationCases(t, cases)
}
